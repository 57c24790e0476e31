// SPDX-License-Identifier: Apache-2.0
// Post-training quantisation (docs/numerics.md, "Quantisation").
#include "passim/quant/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>


namespace passim {

namespace {

constexpr float kMinRange = 1e-6f;  // a tensor that never left zero still gets a valid scale

/// Symmetric int8 quantisation of each row of a (rows, cols) matrix; returns the row scales.
std::vector<float> quantize_rows(std::span<const float> w, std::size_t rows, std::size_t cols,
                                 std::vector<std::int8_t>& out) {
  out.resize(rows * cols);
  std::vector<float> scales(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    float m = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) {
      m = std::max(m, std::fabs(w[r * cols + c]));
    }
    const float s = std::max(m, kMinRange) / 127.0f;
    scales[r] = s;
    for (std::size_t c = 0; c < cols; ++c) {
      const float q = std::nearbyint(w[r * cols + c] / s);
      out[r * cols + c] = static_cast<std::int8_t>(std::clamp(q, -127.0f, 127.0f));
    }
  }
  return scales;
}

/// Per-output-channel requantisation: M[o] = s_in * s_w[o] / s_out(o).
template <typename OutScale>
std::vector<Requant> channel_requant_by(double s_in, const std::vector<float>& s_w,
                                        OutScale s_out) {
  std::vector<Requant> rq(s_w.size());
  for (std::size_t o = 0; o < s_w.size(); ++o) {
    rq[o] = make_requant(s_in * double(s_w[o]) / s_out(o));
  }
  return rq;
}

/// One output scale per channel (e.g. per-head query/key/value scales).
std::vector<Requant> channel_requant(double s_in, const std::vector<float>& s_w,
                                     const std::vector<float>& s_out) {
  return channel_requant_by(s_in, s_w, [&](std::size_t o) { return double(s_out[o]); });
}

/// One output scale for every channel.
std::vector<Requant> channel_requant(double s_in, const std::vector<float>& s_w, double s_out) {
  return channel_requant_by(s_in, s_w, [=](std::size_t) { return s_out; });
}

/// RMSNorm gain G[i] = g[i] * sqrt(n) / s_out in Q.F with F as large as fits int16 (<= 13).
QuantNorm quantize_norm(std::span<const float> g, double s_out, const std::string& name) {
  const double sqrt_n = std::sqrt(double(g.size()));
  double max_g = 0;
  for (const float v : g) {
    max_g = std::max(max_g, std::fabs(double(v)) * sqrt_n / s_out);
  }
  int frac = 13;
  while (frac > 0 && max_g * std::ldexp(1.0, frac) > 32767.0) {
    --frac;
  }
  if (max_g * std::ldexp(1.0, frac) > 32767.0) {
    throw std::runtime_error(fmt::format(
        "quantize: {} gain: expected max |g| * sqrt(n) / s_out <= 32767, found {}", name, max_g));
  }
  QuantNorm qn;
  qn.frac_bits = frac;
  qn.gain.resize(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    qn.gain[i] = static_cast<std::int16_t>(
        std::nearbyint(double(g[i]) * sqrt_n / s_out * std::ldexp(1.0, frac)));
  }
  return qn;
}

/// SmoothQuant (Xiao et al. 2023, Eq. 4) with migration strength 0.5: for a matmul input X
/// with per-channel ranges max|X_j| and weights W (rows, cols) sharing input channel j,
/// alpha_j = sqrt(max|X_j| / max_rows |W[:, j]|); X_j / alpha_j and W[:, j] * alpha_j leave
/// the product unchanged in real numbers but flatten the activation's channel ranges, which
/// is what a per-tensor int8 scale needs. Returns alpha (cols).
std::vector<float> smoothing_factors(std::span<const float> x_absmax,
                                     const std::vector<std::span<const float>>& weights,
                                     std::size_t cols) {
  std::vector<float> w_absmax(cols, kMinRange);
  for (const auto& w : weights) {
    for (std::size_t i = 0; i < w.size(); ++i) {
      w_absmax[i % cols] = std::max(w_absmax[i % cols], std::fabs(w[i]));
    }
  }
  std::vector<float> alpha(cols, 1.0f);
  for (std::size_t j = 0; j < cols && j < x_absmax.size(); ++j) {
    alpha[j] = std::sqrt(std::max(x_absmax[j], kMinRange) / w_absmax[j]);
  }
  return alpha;
}

/// W[:, j] *= alpha[j] for a (rows, cols) row-major matrix.
void scale_columns(std::span<float> w, const std::vector<float>& alpha) {
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] *= alpha[i % alpha.size()];
  }
}

/// Divides calibration ranges (and, for norms, the gains) by alpha.
void scale_down(std::vector<float>& absmax, const std::vector<float>& alpha) {
  for (std::size_t j = 0; j < absmax.size() && j < alpha.size(); ++j) {
    absmax[j] /= alpha[j];
  }
}

}  // namespace

namespace {

/// Requantisation steps with the projection's bias folded in: bias b (real) becomes
/// round(b / (s_in * s_w[o])) accumulator LSB. Throws naming `what` when it needs more than
/// kRequantBiasBits bits.
std::vector<Requant> with_bias(std::vector<Requant> rq, std::span<const float> b, double s_in,
                               const std::vector<float>& s_w, const std::string& what) {
  const double lim = std::ldexp(1.0, kRequantBiasBits - 1) - 1;
  for (std::size_t o = 0; o < rq.size(); ++o) {
    const double v = std::nearbyint(double(b[o]) / (s_in * double(s_w[o])));
    if (!(std::fabs(v) <= lim)) {
      throw std::runtime_error(fmt::format(
          "quantize: {} bias of channel {}: expected |b / (s_in s_w)| < 2^{} accumulator LSB, "
          "found {}", what, o, kRequantBiasBits - 1, v));
    }
    rq[o].bias = static_cast<std::int32_t>(v);
  }
  return rq;
}

std::int16_t to_i16(double v) {
  return static_cast<std::int16_t>(std::clamp(std::nearbyint(v), -32768.0, 32767.0));
}

/// LayerNorm: gain g * sqrt(n) / s_out in Q.F (as RMSNorm), bias beta / s_out.
QuantNorm quantize_layernorm(std::span<const float> g, std::span<const float> beta,
                             double s_out, const std::string& name) {
  QuantNorm qn = quantize_norm(g, s_out, name);
  for (const float b : beta) {
    qn.bias.push_back(to_i16(double(b) / s_out));
  }
  return qn;
}

/// BatchNorm y = a x + b per channel (a = g / sqrt(var + eps), b = beta - a mean), on the
/// int16 residual (scale s_in) to int8 (scale s_out): gain[c] * 2^-k = a[c] s_in / s_out
/// with the largest k that keeps every gain in int16, rq = 2^-k, bias = b / s_out.
QuantNorm quantize_batchnorm(std::span<const float> a, std::span<const float> b, double s_in,
                             double s_out, const std::string& name) {
  double max_a = 0;
  for (const float v : a) {
    max_a = std::max(max_a, std::fabs(double(v)) * s_in / s_out);
  }
  int k = 0;
  while (k < 30 && max_a * std::ldexp(1.0, k + 1) <= 32767.0) {
    ++k;
  }
  if (max_a * std::ldexp(1.0, k) > 32767.0) {
    throw std::runtime_error(fmt::format(
        "quantize: {}: expected max |a| s_in / s_out <= 32767, found {}", name, max_a));
  }
  QuantNorm qn;
  qn.rq = make_requant(std::ldexp(1.0, -k));
  for (std::size_t c = 0; c < a.size(); ++c) {
    qn.gain.push_back(to_i16(double(a[c]) * s_in / s_out * std::ldexp(1.0, k)));
    qn.bias.push_back(to_i16(double(b[c]) / s_out));
  }
  return qn;
}

/// Per-channel affine form of a BatchNorm: a = g / sqrt(var + eps), b = beta - a * mean.
void batchnorm_affine(const float* g, const float* beta, const float* mean, const float* var,
                      std::size_t n, float eps, std::vector<float>& a, std::vector<float>& b) {
  a.resize(n);
  b.resize(n);
  for (std::size_t c = 0; c < n; ++c) {
    const double ac = double(g[c]) / std::sqrt(double(var[c]) + double(eps));
    a[c] = float(ac);
    b[c] = float(double(beta[c]) - ac * double(mean[c]));
  }
}

QuantModel quantize_gpt(const FloatModel& model, const Calibration& calib_in,
                        const QuantOptions& opts) {
  const ModelConfig& c = model.config;
  const std::size_t dim = std::size_t(c.dim), hidden = std::size_t(c.hidden_dim);
  const std::size_t hs = c.head_size(), nh = std::size_t(c.n_heads);
  const std::size_t seq = std::size_t(c.seq_len), vocab = std::size_t(c.vocab_size);
  const bool bn = c.norm == NormKind::kBatch;
  const bool folded = bn && opts.batchnorm == BatchNormMode::kFolded;
  if (c.dim > 4096 || c.hidden_dim > 4096) {
    throw std::runtime_error(fmt::format(
        "quantize: dim and hidden_dim: expected <= 4096 for the int16 norms, found {} and {}",
        c.dim, c.hidden_dim));
  }
  QuantModel q;
  q.config = c;
  q.source_sha256 = model.sha256;
  q.calibration = calib_in.description;
  q.batchnorm = bn ? opts.batchnorm : BatchNormMode::kUnfused;
  FloatWeights w = model.weights;
  Calibration calib = calib_in;
  w.wcls = w.token_embedding;  // the classifier gets its own int8 copy (smoothed or folded)
  std::vector<float> bcls(vocab, 0.0f);  // classifier bias: only a folded final BatchNorm has one

  // Norm -> (a, b) per channel in real units for BatchNorm; LayerNorm keeps (g, beta).
  struct NormRef {
    float* g;
    float* beta;
    const float* mean;
    const float* var;
    Act out, in;
    int layer;
  };
  auto norm_ref = [&](int l, bool ffn) {
    const std::size_t off = l < 0 ? 0 : std::size_t(l) * dim;
    if (l < 0) {
      return NormRef{w.rms_final.data(), w.final_norm_bias.data(),
                     bn ? w.final_norm_mean.data() : nullptr,
                     bn ? w.final_norm_var.data() : nullptr, Act::kFinalNorm, Act::kFinalNormIn,
                     -1};
    }
    if (ffn) {
      return NormRef{w.rms_ffn.data() + off, w.ffn_norm_bias.data() + off,
                     bn ? w.ffn_norm_mean.data() + off : nullptr,
                     bn ? w.ffn_norm_var.data() + off : nullptr, Act::kFfnNorm, Act::kFfnNormIn,
                     l};
    }
    return NormRef{w.rms_att.data() + off, w.att_norm_bias.data() + off,
                   bn ? w.att_norm_mean.data() + off : nullptr,
                   bn ? w.att_norm_var.data() + off : nullptr, Act::kAttnNorm, Act::kAttnNormIn,
                   l};
  };
  // Matrices (rows, dim) and biases (rows) that read a norm's output.
  struct Reader {
    float* w;
    float* b;
    std::size_t rows;
  };
  auto readers = [&](int l, bool ffn) -> std::vector<Reader> {
    if (l < 0) {
      return {{w.wcls.data(), bcls.data(), vocab}};
    }
    const std::size_t ul = std::size_t(l);
    if (ffn) {
      return {{w.w1.data() + ul * hidden * dim, w.b1.data() + ul * hidden, hidden}};
    }
    return {{w.wq.data() + ul * dim * dim, w.bq.data() + ul * dim, dim},
            {w.wk.data() + ul * dim * dim, w.bk.data() + ul * dim, dim},
            {w.wv.data() + ul * dim * dim, w.bv.data() + ul * dim, dim}};
  };
  // folded: W' = W diag(a), b' = b + W b_norm (before W is scaled); unfused/LayerNorm:
  // SmoothQuant on the norm output, folded into the gains/betas and the weight columns.
  std::vector<std::pair<int, bool>> norms;
  for (int l = 0; l < c.n_layers; ++l) {
    norms.emplace_back(l, false);
    norms.emplace_back(l, true);
  }
  norms.emplace_back(-1, false);
  std::map<std::pair<int, bool>, std::pair<std::vector<float>, std::vector<float>>> affine;
  for (const auto& [l, ffn] : norms) {
    NormRef n = norm_ref(l, ffn);
    std::vector<float> a(dim), b(dim);
    if (bn) {
      batchnorm_affine(n.g, n.beta, n.mean, n.var, dim, c.norm_eps, a, b);
    } else {
      std::copy_n(n.g, dim, a.begin());
      std::copy_n(n.beta, dim, b.begin());
    }
    const auto rd = readers(l, ffn);
    if (folded) {
      for (const Reader& r : rd) {
        for (std::size_t o = 0; o < r.rows; ++o) {
          double acc = 0;
          for (std::size_t j = 0; j < dim; ++j) {
            acc += double(r.w[o * dim + j]) * double(b[j]);
            r.w[o * dim + j] *= a[j];
          }
          r.b[o] = float(double(r.b[o]) + acc);
        }
      }
    } else {
      auto& absmax = calib.absmax[std::size_t(n.out)].at(std::size_t(l + 1));
      std::vector<std::span<const float>> views;
      for (const Reader& r : rd) {
        views.emplace_back(r.w, r.rows * dim);
      }
      const std::vector<float> alpha = smoothing_factors(absmax, views, dim);
      for (const Reader& r : rd) {
        scale_columns({r.w, r.rows * dim}, alpha);
      }
      for (std::size_t j = 0; j < dim; ++j) {
        a[j] /= alpha[j];
        b[j] /= alpha[j];
      }
      scale_down(absmax, alpha);
    }
    affine[{l, ffn}] = {std::move(a), std::move(b)};
  }

  // Residual stream: int16 with one shared scale.
  const double s_res = double(calib.global_max(Act::kResidual)) / 32767.0;
  q.scales.residual = float(s_res);
  if (!bn) {  // BatchNorm's eps is folded into its per-channel scale instead
    const double eps = std::nearbyint(double(c.norm_eps) * double(dim) / (s_res * s_res));
    if (eps >= std::ldexp(1.0, 40)) {
      throw std::runtime_error(fmt::format(
          "quantize: LayerNorm eps in residual LSB^2: expected < 2^40, found {}", eps));
    }
    q.norm_eps = static_cast<std::uint64_t>(eps);
  }
  const std::vector<float> s_emb = quantize_rows(w.token_embedding, vocab, dim, q.token_embedding);
  q.embed_rq = channel_requant(1.0, s_emb, s_res);
  const std::vector<float> s_pos = quantize_rows(w.pos_embedding, seq, dim, q.pos_embedding);
  q.pos_rq = channel_requant(1.0, s_pos, s_res);

  // The int8 input of the matmuls after a norm: its scale, and the norm's parameters.
  auto make_norm = [&](int l, bool ffn, const std::string& name) {
    const NormRef n = norm_ref(l, ffn);
    const auto& [a, b] = affine.at({l, ffn});
    QuantNorm qn;
    double s_out = 0;
    if (folded) {  // the residual itself, per tensor, becomes the int8 matmul input
      s_out = double(calib.layer_max(n.in, l)) / 127.0;
      qn.rq = make_requant(s_res / s_out);
    } else {
      s_out = double(calib.layer_max(n.out, l)) / 127.0;
      qn = bn ? quantize_batchnorm(a, b, s_res, s_out, name)
              : quantize_layernorm(a, b, s_out, name);
    }
    return std::pair{qn, s_out};
  };

  for (int l = 0; l < c.n_layers; ++l) {
    const std::size_t ul = std::size_t(l);
    QuantLayer L;
    std::array<float, std::size_t(Act::kCount)> sc{};
    for (std::size_t a = 0; a < sc.size(); ++a) {
      sc[a] = float(double(calib.layer_max(Act(a), l)) / 127.0);
    }
    sc[std::size_t(Act::kResidual)] = float(s_res);
    auto [an, s_an] = make_norm(l, false, fmt::format("layer {} attention {}", l,
                                                       norm_name(c.norm)));
    L.attn_norm = std::move(an);
    sc[std::size_t(Act::kAttnNorm)] = float(s_an);
    const double s_ao = sc[std::size_t(Act::kAttnOut)];
    auto sq = quantize_rows({w.wq.data() + ul * dim * dim, dim * dim}, dim, dim, L.wq);
    auto sk = quantize_rows({w.wk.data() + ul * dim * dim, dim * dim}, dim, dim, L.wk);
    auto sv = quantize_rows({w.wv.data() + ul * dim * dim, dim * dim}, dim, dim, L.wv);
    auto so = quantize_rows({w.wo.data() + ul * dim * dim, dim * dim}, dim, dim, L.wo);
    auto head_scales = [&](Act act, double levels) {
      std::vector<float> s(nh * hs);
      for (std::size_t h = 0; h < nh; ++h) {
        const double sh = double(calib.range_max(act, l, h * hs, hs)) / levels;
        std::fill_n(s.begin() + std::ptrdiff_t(h * hs), hs, float(sh));
      }
      return s;
    };
    const double qk_levels = double((1 << (kQkBits - 1)) - 1);
    sc[std::size_t(Act::kQ)] = float(double(calib.layer_max(Act::kQ, l)) / qk_levels);
    sc[std::size_t(Act::kK)] = float(double(calib.layer_max(Act::kK, l)) / qk_levels);
    const std::vector<float> hq = head_scales(Act::kQ, qk_levels);
    const std::vector<float> hk = head_scales(Act::kK, qk_levels);
    const std::vector<float> hv = head_scales(Act::kV, 127.0);
    const std::string lname = fmt::format("layer {}", l);
    L.rq_q = with_bias(channel_requant(s_an, sq, hq), {w.bq.data() + ul * dim, dim}, s_an, sq,
                       lname + " query");
    L.rq_k = with_bias(channel_requant(s_an, sk, hk), {w.bk.data() + ul * dim, dim}, s_an, sk,
                       lname + " key");
    L.rq_v = with_bias(channel_requant(s_an, sv, hv), {w.bv.data() + ul * dim, dim}, s_an, sv,
                       lname + " value");
    L.rq_o = with_bias(channel_requant(s_ao, so, s_res), {w.bo.data() + ul * dim, dim}, s_ao, so,
                       lname + " attention output");
    for (std::size_t h = 0; h < nh; ++h) {
      const double sqh = hq[h * hs], skh = hk[h * hs], svh = hv[h * hs];
      L.score_rq.push_back(make_requant(sqh * skh / std::sqrt(double(hs)) *
                                        std::ldexp(1.0, kExpInFracBits)));
      L.attn_out_rq.push_back(make_requant(svh / (double(kProbOne) * s_ao)));
    }

    auto [fn, s_fn] = make_norm(l, true, fmt::format("layer {} FFN {}", l, norm_name(c.norm)));
    L.ffn_norm = std::move(fn);
    sc[std::size_t(Act::kFfnNorm)] = float(s_fn);
    const double s_up = sc[std::size_t(Act::kH1)], s_gelu = sc[std::size_t(Act::kHidden)];
    auto s1 = quantize_rows({w.w1.data() + ul * hidden * dim, hidden * dim}, hidden, dim, L.w1);
    auto s2 = quantize_rows({w.w2.data() + ul * dim * hidden, dim * hidden}, dim, hidden, L.w2);
    L.rq_1 = with_bias(channel_requant(s_fn, s1, s_up), {w.b1.data() + ul * hidden, hidden},
                       s_fn, s1, lname + " FFN up");
    L.rq_2 = with_bias(channel_requant(s_gelu, s2, s_res), {w.b2.data() + ul * dim, dim}, s_gelu,
                       s2, lname + " FFN down");
    L.gelu_in_rq = make_requant(s_up * std::ldexp(1.0, kExpInFracBits));
    L.gelu_out_rq = make_requant(s_up / (std::ldexp(1.0, kGeluPhiFracBits) * s_gelu));
    q.layers.push_back(std::move(L));
    q.scales.layer.push_back(sc);
  }
  auto [fin, s_fin] = make_norm(-1, false, fmt::format("final {}", norm_name(c.norm)));
  q.final_norm = std::move(fin);
  q.scales.final_norm = float(s_fin);
  const double s_logit = std::ldexp(1.0, -kLogitFracBits);
  const auto s_cls = quantize_rows(w.wcls, vocab, dim, q.wcls);
  q.rq_cls = with_bias(channel_requant(s_fin, s_cls, s_logit), bcls, s_fin, s_cls, "classifier");
  return q;
}

}  // namespace

QuantModel quantize(const FloatModel& model, const Calibration& calib_in,
                    const QuantOptions& opts) {
  if (model.config.arch == Arch::kGpt) {
    return quantize_gpt(model, calib_in, opts);
  }
  const ModelConfig& c = model.config;
  const std::size_t dim = std::size_t(c.dim);
  const std::size_t hidden = std::size_t(c.hidden_dim);
  const std::size_t kv_dim = c.kv_dim();
  const std::size_t hs = c.head_size();
  if (c.dim > 4096 || c.hidden_dim > 4096) {
    throw std::runtime_error(fmt::format(
        "quantize: dim and hidden_dim: expected <= 4096 for the int16 RMSNorm, found {} and {}",
        c.dim, c.hidden_dim));
  }

  QuantModel q;
  q.config = c;
  q.source_sha256 = model.sha256;
  q.calibration = calib_in.description;

  // Smooth every int8 matmul input that follows an RMSNorm or the SwiGLU product: the
  // factors fold into the norm gains, the weight columns and the product's requantisation.
  FloatWeights w = model.weights;
  Calibration calib = calib_in;
  if (w.wcls.empty()) {
    w.wcls = w.token_embedding;  // once smoothed, the classifier needs its own int8 copy
  }
  std::vector<std::vector<float>> hidden_alpha(std::size_t(c.n_layers));
  auto smooth_norm = [&](Act act, int l, std::span<float> gain,
                         std::initializer_list<std::span<float>> mats, std::size_t cols) {
    auto& absmax = calib.absmax[std::size_t(act)].at(std::size_t(l + 1));
    std::vector<std::span<const float>> views(mats.begin(), mats.end());
    const std::vector<float> alpha = smoothing_factors(absmax, views, cols);
    for (auto m : mats) {
      scale_columns(m, alpha);
    }
    for (std::size_t j = 0; j < gain.size(); ++j) {
      gain[j] /= alpha[j];
    }
    scale_down(absmax, alpha);
    return alpha;
  };
  {
    const std::size_t kv = c.kv_dim(), hid = std::size_t(c.hidden_dim);
    for (int l = 0; l < c.n_layers; ++l) {
      const std::size_t ul = std::size_t(l);
      smooth_norm(Act::kAttnNorm, l, {w.rms_att.data() + ul * dim, dim},
                  {{w.wq.data() + ul * dim * dim, dim * dim},
                   {w.wk.data() + ul * kv * dim, kv * dim},
                   {w.wv.data() + ul * kv * dim, kv * dim}},
                  dim);
      smooth_norm(Act::kFfnNorm, l, {w.rms_ffn.data() + ul * dim, dim},
                  {{w.w1.data() + ul * hid * dim, hid * dim},
                   {w.w3.data() + ul * hid * dim, hid * dim}},
                  dim);
      hidden_alpha[ul] = smooth_norm(Act::kHidden, l, {},
                                     {{w.w2.data() + ul * dim * hid, dim * hid}}, hid);
    }
    smooth_norm(Act::kFinalNorm, -1, w.rms_final, {std::span<float>(w.wcls)}, dim);
  }

  // Residual stream: int16 with one shared scale, so residual adds need no rescaling.
  const double s_res = double(calib.global_max(Act::kResidual)) / 32767.0;
  q.scales.residual = float(s_res);
  const double eps = std::nearbyint(1e-5 * double(dim) / (s_res * s_res));
  if (eps >= std::ldexp(1.0, 40)) {
    throw std::runtime_error(fmt::format(
        "quantize: RMSNorm eps in residual LSB^2: expected < 2^40, found {}", eps));
  }
  q.norm_eps = static_cast<std::uint64_t>(eps);

  const std::vector<float> s_emb = quantize_rows(w.token_embedding, std::size_t(c.vocab_size),
                                                 dim, q.token_embedding);
  q.embed_rq = channel_requant(1.0, s_emb, s_res);

  auto s8 = [&](Act act, int l) { return double(calib.layer_max(act, l)) / 127.0; };
  for (int l = 0; l < c.n_layers; ++l) {
    const std::size_t ul = std::size_t(l);
    QuantLayer L;
    std::array<float, std::size_t(Act::kCount)> sc{};
    for (std::size_t a = 0; a < sc.size(); ++a) {
      sc[a] = float(s8(Act(a), l));
    }
    // The FFN gate, up and SiLU tensors only meet the vector unit, never a weight matmul,
    // so they stay int16; the product that feeds w2 is int8.
    for (const Act a : {Act::kH1, Act::kH3, Act::kSilu}) {
      sc[std::size_t(a)] = float(double(calib.layer_max(a, l)) / 32767.0);
    }
    sc[std::size_t(Act::kResidual)] = float(s_res);
    const double s_an = sc[std::size_t(Act::kAttnNorm)];
    const double s_ao = sc[std::size_t(Act::kAttnOut)], s_fn = sc[std::size_t(Act::kFfnNorm)];
    const double s_h1 = sc[std::size_t(Act::kH1)], s_h3 = sc[std::size_t(Act::kH3)];
    const double s_silu = sc[std::size_t(Act::kSilu)], s_hid = sc[std::size_t(Act::kHidden)];

    L.attn_norm = quantize_norm({w.rms_att.data() + ul * dim, dim}, s_an,
                                fmt::format("layer {} attention RMSNorm", l));
    auto sq = quantize_rows({w.wq.data() + ul * dim * dim, dim * dim}, dim, dim, L.wq);
    auto sk = quantize_rows({w.wk.data() + ul * kv_dim * dim, kv_dim * dim}, kv_dim, dim, L.wk);
    auto sv = quantize_rows({w.wv.data() + ul * kv_dim * dim, kv_dim * dim}, kv_dim, dim, L.wv);
    auto so = quantize_rows({w.wo.data() + ul * dim * dim, dim * dim}, dim, dim, L.wo);
    // Queries, keys and values get one scale per head: a head's dot products and weighted
    // sums never mix heads, so the per-head scales fold into per-channel and per-head steps.
    auto head_scales = [&](Act act, std::size_t heads, double levels) {
      std::vector<float> s(heads * hs);
      for (std::size_t h = 0; h < heads; ++h) {
        const double sh = double(calib.range_max(act, l, h * hs, hs)) / levels;
        std::fill_n(s.begin() + std::ptrdiff_t(h * hs), hs, float(sh));
      }
      return s;
    };
    sc[std::size_t(Act::kQ)] = float(double(calib.layer_max(Act::kQ, l)) / 2047.0);
    sc[std::size_t(Act::kK)] = float(double(calib.layer_max(Act::kK, l)) / 2047.0);
    const std::size_t n_heads = std::size_t(c.n_heads), n_kv = std::size_t(c.n_kv_heads);
    const double qk_levels = double((1 << (kQkBits - 1)) - 1);
    const std::vector<float> hq = head_scales(Act::kQ, n_heads, qk_levels);
    const std::vector<float> hk = head_scales(Act::kK, n_kv, qk_levels);
    const std::vector<float> hv = head_scales(Act::kV, n_kv, 127.0);
    L.rq_q = channel_requant(s_an, sq, hq);
    L.rq_k = channel_requant(s_an, sk, hk);
    L.rq_v = channel_requant(s_an, sv, hv);
    L.rq_o = channel_requant(s_ao, so, s_res);
    const std::size_t group = n_heads / n_kv;
    for (std::size_t h = 0; h < n_heads; ++h) {
      const double sqh = hq[h * hs], skh = hk[(h / group) * hs], svh = hv[(h / group) * hs];
      L.score_rq.push_back(make_requant(sqh * skh / std::sqrt(double(hs)) *
                                        std::ldexp(1.0, kExpInFracBits)));
      L.attn_out_rq.push_back(make_requant(svh / (double(kProbOne) * s_ao)));
    }

    L.ffn_norm = quantize_norm({w.rms_ffn.data() + ul * dim, dim}, s_fn,
                               fmt::format("layer {} FFN RMSNorm", l));
    auto s1 = quantize_rows({w.w1.data() + ul * hidden * dim, hidden * dim}, hidden, dim, L.w1);
    auto s3 = quantize_rows({w.w3.data() + ul * hidden * dim, hidden * dim}, hidden, dim, L.w3);
    auto s2 = quantize_rows({w.w2.data() + ul * dim * hidden, dim * hidden}, dim, hidden, L.w2);
    L.rq_1 = channel_requant(s_fn, s1, s_h1);
    L.rq_3 = channel_requant(s_fn, s3, s_h3);
    L.rq_2 = channel_requant(s_hid, s2, s_res);
    L.silu_in_rq = make_requant(s_h1 * std::ldexp(1.0, kExpInFracBits));
    L.silu_out_rq = make_requant(s_h1 / (std::ldexp(1.0, kSigmoidFracBits) * s_silu));
    for (std::size_t j = 0; j < hidden; ++j) {
      L.mul_rq.push_back(make_requant(s_silu * s_h3 / (s_hid * double(hidden_alpha[ul][j]))));
    }
    q.layers.push_back(std::move(L));
    q.scales.layer.push_back(sc);
  }

  const double s_fin = double(calib.layer_max(Act::kFinalNorm, -1)) / 127.0;
  q.scales.final_norm = float(s_fin);
  q.final_norm = quantize_norm(w.rms_final, s_fin, "final RMSNorm");
  const double s_logit = std::ldexp(1.0, -kLogitFracBits);
  const auto s_cls = quantize_rows(w.wcls, std::size_t(c.vocab_size), dim, q.wcls);
  q.rq_cls = channel_requant(s_fin, s_cls, s_logit);

  // RoPE tables in Q1.14, from the same float expressions as the float forward.
  const std::size_t half = hs / 2;
  q.rope_cos.resize(std::size_t(c.seq_len) * half);
  q.rope_sin.resize(std::size_t(c.seq_len) * half);
  for (std::size_t pos = 0; pos < std::size_t(c.seq_len); ++pos) {
    for (std::size_t j = 0; j < half; ++j) {
      const float freq =
          1.0f / std::pow(10000.0f, static_cast<float>(2 * j) / static_cast<float>(hs));
      const float val = static_cast<float>(pos) * freq;
      const double one = std::ldexp(1.0, kRopeFracBits);
      q.rope_cos[pos * half + j] = static_cast<std::int16_t>(std::nearbyint(std::cos(val) * one));
      q.rope_sin[pos * half + j] = static_cast<std::int16_t>(std::nearbyint(std::sin(val) * one));
    }
  }
  return q;
}

}  // namespace passim
