// SPDX-License-Identifier: Apache-2.0
// The integer model against its float reference, layer by layer.
#include "passim/eval/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "passim/eval/sampler.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/quant/cpu_backend.hpp"

namespace passim {

void TensorError::add(std::span<const float> f, std::span<const std::int16_t> q, double scale) {
  for (std::size_t i = 0; i < f.size(); ++i) {
    const double fi = f[i], qi = double(q[i]) * scale;
    max_abs_lsb = std::max(max_abs_lsb, std::fabs(double(q[i]) - fi / scale));
    dot += fi * qi;
    nf += fi * fi;
    ni += qi * qi;
    saturated += (q[i] == 32767 || q[i] == -32768) ? 1 : 0;
    zeros += q[i] == 0 ? 1 : 0;
    ++values;
  }
}

void TensorError::add_int(std::span<const std::int16_t> q) {
  for (const std::int16_t v : q) {
    saturated += (v == 32767 || v == -32768) ? 1 : 0;
    zeros += v == 0 ? 1 : 0;
    ++values;
  }
}

double TensorError::cosine() const {
  return nf > 0 && ni > 0 ? dot / std::sqrt(nf * ni) : (nf == ni ? 1.0 : 0.0);
}

double TensorError::saturated_share() const {
  return values ? double(saturated) / double(values) : 0;
}

double TensorError::zero_share() const { return values ? double(zeros) / double(values) : 0; }

std::string accuracy_layer_label(std::size_t entry) {
  return entry == 0 ? "0 input quantisation" : fmt::format("{} block {} output", entry, entry - 1);
}

namespace {

/// Keeps the last float residual (dim) of each layer seen in the current forward.
class LastResidual final : public ActivationObserver {
 public:
  explicit LastResidual(std::size_t layers) : last_(layers + 1) {}
  void observe(Act act, int layer, std::span<const float> v) override {
    if (act == Act::kResidual) {
      last_[std::size_t(layer + 1)].assign(v.begin(), v.end());
    }
  }
  [[nodiscard]] std::span<const float> at(int layer) const { return last_[std::size_t(layer + 1)]; }

 private:
  std::vector<std::vector<float>> last_;
};

/// The float and the integer forward at each position, float first (so its residuals are
/// ready when the integer forward reports its own); the integer logits are the pair's.
class Pair final : public Backend {
 public:
  Pair(FloatBackend& f, CpuBackend& q, AccuracyResult& r) : f_(f), q_(q), r_(r), logits_(r.logits) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "float+cpu"; }
  [[nodiscard]] const ModelConfig& config() const noexcept override { return q_.config(); }
  /// False while the float forward of the current position failed.
  [[nodiscard]] bool float_ok() const noexcept { return float_ok_; }
  void forward(int token, int pos) override {
    float_ok_ = true;
    try {
      f_.forward(token, pos);
    } catch (const std::runtime_error& e) {
      float_ok_ = false;
      ++r_.float_failed_positions;
      if (r_.float_error.empty()) {
        r_.float_error = e.what();
      }
    }
    q_.forward(token, pos);
    if (!float_ok_) {
      return;
    }
    const auto fl = f_.logits();
    const auto ql = q_.logits_i32();
    for (std::size_t i = 0; i < fl.size(); ++i) {
      const double fi = fl[i], qi = std::ldexp(double(ql[i]), -kLogitFracBits);
      logits_.max_abs_lsb =
          std::max(logits_.max_abs_lsb, std::fabs(qi - fi) * std::ldexp(1.0, kLogitFracBits));
      logits_.dot += fi * qi;
      logits_.nf += fi * fi;
      logits_.ni += qi * qi;
      ++logits_.values;
    }
  }
  [[nodiscard]] std::span<const float> logits() const noexcept override { return q_.logits(); }
  void reset() override {
    f_.reset();
    q_.reset();
  }

 private:
  FloatBackend& f_;
  CpuBackend& q_;
  AccuracyResult& r_;
  TensorError& logits_;
  bool float_ok_ = true;
};

std::vector<std::string> layer_warnings(const std::vector<TensorError>& layers,
                                        double saturated_warn = kSaturatedWarn,
                                        double collapsed_warn = kCollapsedWarn) {
  std::vector<std::string> warnings;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const TensorError& e = layers[l];
    const std::string label = accuracy_layer_label(l);
    if (e.saturated_share() > saturated_warn) {
      warnings.push_back(fmt::format("layer {} ({}): {:.1f}% of its int16 outputs are saturated",
                                     l, label, 100 * e.saturated_share()));
    }
    if (e.zero_share() > collapsed_warn || e.cosine() < kCosineWarn) {
      warnings.push_back(fmt::format(
          "layer {} ({}): collapsed ({:.1f}% zeros, cosine {:.3f} with float)", l, label,
          100 * e.zero_share(), e.cosine()));
    }
  }
  return warnings;
}

}  // namespace

AccuracyResult compare_int8_float(const FloatModel& fm, const QuantModel& qm,
                                  const std::function<PerplexityResult(Backend&)>& evaluate) {
  const double s_res = qm.scales.residual;
  AccuracyResult r;
  r.layers.resize(std::size_t(fm.config.n_layers) + 1);
  FloatBackend fb(fm);
  CpuBackend qb(qm);
  LastResidual fres(std::size_t(fm.config.n_layers));
  fb.set_observer(&fres);
  Pair pair(fb, qb, r);
  qb.set_residual_observer([&](int layer, std::span<const std::int16_t> x) {
    if (pair.float_ok()) {
      r.layers[std::size_t(layer + 1)].add(fres.at(layer), x, s_res);
    }
  });
  r.int8 = evaluate(pair);
  // A second pass for the float perplexity (the paired pass kept only the int logits).
  try {
    r.float32 = evaluate(fb);
  } catch (const std::runtime_error& e) {
    r.float32 = {};
    if (r.float_error.empty()) {
      r.float_error = e.what();
    }
  }
  r.warnings = layer_warnings(r.layers);
  if (!r.float_error.empty()) {
    r.warnings.push_back(fmt::format(
        "the float reference is invalid ({} of {} positions failed; first: {}): the layer "
        "errors leave those positions out, and there is no float perplexity",
        r.float_failed_positions, r.int8.predicted, r.float_error));
  }
  return r;
}

namespace {

/// Values at the limits of their width per (layer, requantised tensor) of a cpu forward, from
/// CpuBackend's saturation observer, in order of first appearance.
class ValuesAtLimits {
 public:
  void attach(CpuBackend& qb) {
    qb.set_saturation_observer([this](int layer, std::string_view t, std::size_t at_limit,
                                      std::size_t values) {
      auto it = std::find_if(rows_.begin(), rows_.end(),
                             [&](const Row& r) { return r.layer == layer && r.tensor == t; });
      if (it == rows_.end()) {
        it = rows_.insert(rows_.end(), Row{layer, std::string(t), 0, 0});
      }
      it->at_limit += at_limit;
      it->values += values;
    });
  }
  /// "layer l (block b): P% of its <tensor> values are saturated" above `share`.
  [[nodiscard]] std::vector<std::string> warnings(double share) const {
    std::vector<std::string> out;
    for (const Row& r : rows_) {
      const double s = r.values ? double(r.at_limit) / double(r.values) : 0;
      if (s > share) {
        out.push_back(fmt::format("layer {} (block {}): {:.1f}% of its {} values are saturated",
                                  r.layer + 1, r.layer, 100 * s, r.tensor));
      }
    }
    return out;
  }

 private:
  struct Row {
    int layer;
    std::string tensor;
    std::size_t at_limit, values;
  };
  std::vector<Row> rows_;
};

/// `a` followed by `b`.
std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

AccuracyResult inspect_int8(const QuantModel& qm,
                            const std::function<PerplexityResult(Backend&)>& evaluate) {
  AccuracyResult r;
  r.has_float = false;
  r.layers.resize(std::size_t(qm.config.n_layers) + 1);
  CpuBackend qb(qm);
  qb.set_residual_observer([&](int layer, std::span<const std::int16_t> x) {
    r.layers[std::size_t(layer + 1)].add_int(x);
  });
  ValuesAtLimits tally;
  tally.attach(qb);
  r.int8 = evaluate(qb);
  r.warnings = joined(layer_warnings(r.layers), tally.warnings(kSelfCheckSaturatedWarn));
  return r;
}

std::vector<std::string> self_check(const QuantModel& qm, std::span<const int> tokens,
                                    int positions) {
  std::vector<TensorError> layers(std::size_t(qm.config.n_layers) + 1);
  CpuBackend qb(qm);
  qb.set_residual_observer([&](int layer, std::span<const std::int16_t> x) {
    layers[std::size_t(layer + 1)].add_int(x);
  });
  ValuesAtLimits tally;
  tally.attach(qb);
  const int n = std::min(positions, qm.config.seq_len);
  int token = tokens.empty() ? qm.config.bos_token : tokens[0];
  for (int t = 0; t < n; ++t) {
    qb.forward(token, t);
    // The next given token, else the model's own greedy choice.
    token = std::size_t(t) + 1 < tokens.size() ? tokens[std::size_t(t) + 1] : argmax(qb.logits());
  }
  return joined(layer_warnings(layers, kSelfCheckSaturatedWarn, kSelfCheckCollapsedWarn),
                tally.warnings(kSelfCheckSaturatedWarn));
}

}  // namespace passim
