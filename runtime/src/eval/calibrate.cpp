// SPDX-License-Identifier: Apache-2.0
// Calibration runs: the float reference over documents, recording activation ranges.
#include "passim/eval/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/eval/perplexity.hpp"
#include "passim/eval/sampler.hpp"
#include "passim/model/float_backend.hpp"

namespace passim {

namespace {

/// Records max |x| per activation kind and layer.
class AbsMaxObserver final : public ActivationObserver {
 public:
  explicit AbsMaxObserver(Calibration& calib) : calib_(calib) {}
  void observe(Act act, int layer, std::span<const float> values) override {
    auto& slot = calib_.absmax[std::size_t(act)][std::size_t(layer + 1)];
    slot.resize(std::max(slot.size(), values.size()), 0.0f);
    for (std::size_t i = 0; i < values.size(); ++i) {
      slot[i] = std::max(slot[i], std::fabs(values[i]));
    }
  }

 private:
  Calibration& calib_;
};

constexpr float kMinRange = 1e-6f;  // a tensor that never left zero still gets a valid scale

/// A calibration with a slot for every activation kind and layer, and no range yet.
Calibration no_ranges(const FloatModel& model) {
  Calibration calib;
  for (auto& v : calib.absmax) {
    v.assign(std::size_t(model.config.n_layers + 1), {});
  }
  return calib;
}

}  // namespace

Calibration calibrate(const FloatModel& model, const std::vector<std::vector<int>>& docs) {
  Calibration calib = no_ranges(model);
  FloatBackend fb(model);
  AbsMaxObserver obs(calib);
  fb.set_observer(&obs);
  const bool encoder = unmasked(describe(model.config));
  for (const auto& ids : docs) {
    if (ids.size() > std::size_t(model.config.seq_len)) {
      throw std::runtime_error(fmt::format(
          "calibration: expected documents of at most seq_len = {} tokens, found {}",
          model.config.seq_len, ids.size()));
    }
    if (encoder && !ids.empty()) {  // an unmasked model sees each document whole
      fb.forward_sequence(ids, 0);
      calib.positions += long(ids.size());
      continue;
    }
    for (std::size_t t = 0; t < ids.size(); ++t) {
      fb.forward(ids[t], static_cast<int>(t));
      ++calib.positions;
    }
  }
  return calib;
}

Calibration calibrate_features(const FloatModel& model,
                               const std::vector<std::vector<float>>& inputs,
                               std::size_t frames) {
  Calibration calib = no_ranges(model);
  FloatBackend fb(model);
  AbsMaxObserver obs(calib);
  fb.set_observer(&obs);
  const auto nf = std::size_t(model.config.input_features);
  calib.input_absmax.assign(nf, kMinRange);
  for (const auto& features : inputs) {
    fb.forward_features(features, frames);  // throws for a token model or a wrong size
    for (std::size_t i = 0; i < features.size(); ++i) {
      float& m = calib.input_absmax[i % nf];
      m = std::max(m, std::fabs(features[i]));
    }
    calib.positions += long(fb.config().seq_len);
  }
  return calib;
}

std::vector<std::vector<int>> self_generated_calibration(const FloatModel& model, int positions) {
  const int n = std::min(positions, model.config.seq_len);
  std::vector<std::vector<int>> docs;
  FloatBackend fb(model);
  std::vector<float> scratch(std::size_t(model.config.vocab_size));
  for (std::uint64_t seed = 0; seed < 4; ++seed) {  // run 0 is greedy, runs 1-3 sample
    Sampler sampler(model.config.vocab_size, seed == 0 ? 0.0f : 1.0f, 0.0f,
                    std::max<std::uint64_t>(seed, 1));
    std::vector<int> ids{model.config.bos_token};
    for (int pos = 0; pos + 1 < n; ++pos) {
      fb.forward(ids.back(), pos);
      std::copy(fb.logits().begin(), fb.logits().end(), scratch.begin());
      const int next = sampler.sample(scratch);
      if (next == model.config.bos_token && model.config.bos_ends_text) {
        break;
      }
      ids.push_back(next);
    }
    docs.push_back(std::move(ids));
  }
  return docs;
}

std::vector<std::vector<int>> calibration_documents(
    const ModelConfig& c, const Tokenizer& tok, const std::string& path,
    const std::function<void(std::string_view)>& notice) {
  std::vector<std::vector<int>> ids;
  const auto docs = read_documents(path);
  for (std::size_t d = 0; d < docs.size(); ++d) {
    // Only the first seq_len tokens are used: encode only the bytes that can hold them (cut at
    // a character boundary), not a whole long text.
    std::string_view doc = docs[d];
    const std::size_t keep = std::size_t(c.seq_len) * tok.max_piece_bytes();
    const bool cut_short = doc.size() > keep;
    if (cut_short) {
      std::size_t cut = keep;
      while (cut > 0 && (static_cast<unsigned char>(doc[cut]) & 0xC0) == 0x80) {
        --cut;
      }
      doc = doc.substr(0, cut);
    }
    std::vector<int> t;
    try {
      t = tok.encode(doc, true, false);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("{}: document {}: {}", path, d, e.what()));
    }
    if (t.size() > std::size_t(c.seq_len)) {
      notice(fmt::format("notice: {}: calibration document {} has {}{} tokens; using the first {}",
                         path, d, cut_short ? "at least " : "", t.size(), c.seq_len));
      t.resize(std::size_t(c.seq_len));
    }
    ids.push_back(std::move(t));
  }
  return ids;
}

}  // namespace passim
