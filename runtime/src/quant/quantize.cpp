// SPDX-License-Identifier: Apache-2.0
// Post-training quantisation of a model description (docs/numerics.md, "Quantisation"):
// SmoothQuant or BatchNorm folding at every norm, then int8 weights and requantisation steps
// block by block, in the order the model runs.
#include "passim/quant/quantize.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "passim/model/description.hpp"
#include "scales.hpp"

namespace passim {

namespace {

using quant::channel_requant;
using quant::quantize_rows;
using quant::with_bias;

/// Where a norm sits: before a layer's attention or FFN, or in the head.
enum class Site { kAttention, kFfn, kFinal };

/// A matrix (rows, dim) row-major that reads a norm's output, and its bias (rows) or nullptr.
struct Reader {
  float* w;
  float* b;
  std::size_t rows;
};

/// A norm's real affine map once smoothed or folded: gain a (dim), shift b (dim; RMSNorm has
/// none).
struct Affine {
  std::vector<float> a, b;
};

using LayerScales = std::array<float, std::size_t(Act::kCount)>;

/// Copies of the float weights and calibrated ranges, which SmoothQuant and BatchNorm folding
/// rewrite, and one pass over the description that fills a QuantModel.
class Quantiser {
 public:
  Quantiser(const FloatModel& model, const Calibration& calib, const QuantOptions& opts);
  QuantModel run();

 private:
  [[nodiscard]] NormKind kind(Site s, std::size_t l) const;
  [[nodiscard]] std::string site_name(Site s, std::size_t l) const;
  [[nodiscard]] const float* norm_param(Site s, std::size_t l, const std::vector<float>& att,
                                        const std::vector<float>& ffn,
                                        const std::vector<float>& fin) const;
  [[nodiscard]] std::vector<Reader> readers(Site s, std::size_t l);
  [[nodiscard]] Affine& affine(Site s, std::size_t l);
  void prepare(Site s, std::size_t l);
  void fold(const Affine& af, const std::vector<Reader>& rd) const;
  void smooth(Affine& af, const std::vector<Reader>& rd, Act act, int layer);
  void smooth_hidden(std::size_t l);
  [[nodiscard]] bool reads_residual(Site s, std::size_t l) const;
  [[nodiscard]] double input_scale(Site s, std::size_t l) const;
  [[nodiscard]] std::pair<QuantNorm, double> quantize_norm(Site s, std::size_t l);
  [[nodiscard]] std::pair<QuantNorm, double> quantize_post_norm(Site s, std::size_t l);
  void residual_scale(QuantModel& q);
  void embedding(QuantModel& q);
  [[nodiscard]] LayerScales initial_scales(std::size_t l) const;
  [[nodiscard]] std::vector<float> head_scales(Act act, std::size_t l, std::size_t heads,
                                               double levels) const;
  void attention(std::size_t l, QuantLayer& L, LayerScales& sc);
  void ffn(std::size_t l, QuantLayer& L, LayerScales& sc);
  void head(QuantModel& q);
  void rope_tables(QuantModel& q) const;

  const FloatModel& model_;
  ModelDesc d_;
  FloatWeights w_;
  Calibration calib_;
  QuantOptions opts_;
  bool folded_ = false;  // BatchNorm folded into the matmuls that read each norm
  double s_res_ = 0;     // the int16 residual stream's one scale
  std::vector<float> bcls_;  // classifier bias: only a folded final BatchNorm has one
  std::vector<Affine> attn_affine_, ffn_affine_;
  Affine final_affine_;
  std::vector<std::vector<float>> hidden_alpha_;  // SwiGLU: smoothing of each w2 input
};

Quantiser::Quantiser(const FloatModel& model, const Calibration& calib,
                     const QuantOptions& opts)
    : model_(model), d_(describe(model.config)), w_(model.weights), calib_(calib), opts_(opts) {
  const ModelConfig& c = model.config;
  if (c.dim > 4096 || c.hidden_dim > 4096) {
    throw std::runtime_error(fmt::format(
        "quantize: dim and hidden_dim: expected <= 4096 for the int16 norms, found {} and {}",
        c.dim, c.hidden_dim));
  }
  folded_ = c.norm == NormKind::kBatch && opts.batchnorm == BatchNormMode::kFolded;
  if (w_.wcls.empty()) {
    w_.wcls = w_.token_embedding;  // once smoothed or folded, the classifier needs its own copy
  }
  bcls_ = w_.bcls;  // a classifier bias of the model's own, or none
  bcls_.resize(d_.head.classes, 0.0f);
  attn_affine_.resize(d_.layers.size());
  ffn_affine_.resize(d_.layers.size());
  hidden_alpha_.resize(d_.layers.size());
}

NormKind Quantiser::kind(Site s, std::size_t l) const {
  switch (s) {
    case Site::kAttention:
      return d_.layers[l].attention.norm.kind;
    case Site::kFfn:
      return d_.layers[l].ffn.norm.kind;
    default:
      return d_.head.norm;
  }
}

std::string Quantiser::site_name(Site s, std::size_t l) const {
  const char* norm = norm_name(kind(s, l));
  if (s == Site::kFinal) {
    return fmt::format("final {}", norm);
  }
  return fmt::format("layer {} {} {}", l, s == Site::kAttention ? "attention" : "FFN", norm);
}

const float* Quantiser::norm_param(Site s, std::size_t l, const std::vector<float>& att,
                                   const std::vector<float>& ffn,
                                   const std::vector<float>& fin) const {
  const std::vector<float>& v = s == Site::kAttention ? att : s == Site::kFfn ? ffn : fin;
  return v.empty() ? nullptr : v.data() + (s == Site::kFinal ? 0 : l * d_.dim);
}

std::vector<Reader> Quantiser::readers(Site s, std::size_t l) {
  const std::size_t dim = d_.dim;
  auto bias = [](std::vector<float>& b, std::size_t off) {
    return b.empty() ? nullptr : b.data() + off;
  };
  if (s == Site::kFinal) {
    return {{w_.wcls.data(), bcls_.data(), d_.head.classes}};
  }
  if (s == Site::kFfn) {
    const FfnDesc& f = d_.layers[l].ffn;
    const std::size_t h = f.hidden;
    std::vector<Reader> rd{{w_.w1.data() + l * h * dim, bias(w_.b1, l * h), h}};
    if (f.kind == FfnKind::kSwiGlu) {
      rd.push_back({w_.w3.data() + l * h * dim, nullptr, h});
    }
    return rd;
  }
  const AttentionDesc& a = d_.layers[l].attention;
  const std::size_t q = a.q_dim(), kv = a.kv_dim();
  return {{w_.wq.data() + l * q * dim, bias(w_.bq, l * q), q},
          {w_.wk.data() + l * kv * dim, bias(w_.bk, l * kv), kv},
          {w_.wv.data() + l * kv * dim, bias(w_.bv, l * kv), kv}};
}

Affine& Quantiser::affine(Site s, std::size_t l) {
  return s == Site::kAttention ? attn_affine_[l] : s == Site::kFfn ? ffn_affine_[l]
                                                                   : final_affine_;
}

void Quantiser::prepare(Site s, std::size_t l) {
  // The norm's real affine map: RMSNorm and LayerNorm keep their gain (and LayerNorm its
  // beta); BatchNorm becomes a = g / sqrt(var + eps), b = beta - a mean per channel.
  const FloatWeights& w = w_;
  const NormKind k = kind(s, l);
  const std::size_t dim = d_.dim;
  const float* g = norm_param(s, l, w.rms_att, w.rms_ffn, w.rms_final);
  const float* beta = norm_param(s, l, w.att_norm_bias, w.ffn_norm_bias, w.final_norm_bias);
  Affine& af = affine(s, l);
  if (s == Site::kFinal && !d_.head.has_norm) {
    return;  // no final norm: the classifier reads the residual
  }
  if (k == NormKind::kBatch) {
    quant::batchnorm_affine(g, beta, norm_param(s, l, w.att_norm_mean, w.ffn_norm_mean,
                                                 w.final_norm_mean),
                            norm_param(s, l, w.att_norm_var, w.ffn_norm_var, w.final_norm_var),
                            dim, model_.config.norm_eps, af.a, af.b);
  } else {
    af.a.assign(g, g + dim);
    if (k == NormKind::kLayer) {
      af.b.assign(beta, beta + dim);
    }
  }
  if (reads_residual(s, l)) {
    return;  // the residual feeds the readers as it is: nothing to smooth or fold into
  }
  const std::vector<Reader> rd = readers(s, l);
  if (folded_) {
    fold(af, rd);
  } else {
    smooth(af, rd, s == Site::kAttention ? Act::kAttnNorm
                   : s == Site::kFfn     ? Act::kFfnNorm
                                         : Act::kFinalNorm,
           s == Site::kFinal ? -1 : int(l));
  }
}

void Quantiser::fold(const Affine& af, const std::vector<Reader>& rd) const {
  // W' = W diag(a) and b' = b + W b_norm (with W before scaling): the norm costs no pass.
  const std::size_t dim = d_.dim;
  for (const Reader& r : rd) {
    for (std::size_t o = 0; o < r.rows; ++o) {
      double acc = 0;
      for (std::size_t j = 0; j < dim; ++j) {
        acc += double(r.w[o * dim + j]) * double(af.b[j]);
        r.w[o * dim + j] *= af.a[j];
      }
      r.b[o] = float(double(r.b[o]) + acc);
    }
  }
}

void Quantiser::smooth(Affine& af, const std::vector<Reader>& rd, Act act, int layer) {
  // SmoothQuant on the norm's output, folded into its gain and shift and the readers' columns.
  const std::size_t dim = d_.dim;
  auto& absmax = calib_.absmax[std::size_t(act)].at(std::size_t(layer + 1));
  std::vector<std::span<const float>> views;
  for (const Reader& r : rd) {
    views.emplace_back(r.w, r.rows * dim);
  }
  const std::vector<float> alpha = quant::smoothing_factors(absmax, views, dim);
  for (const Reader& r : rd) {
    quant::scale_columns({r.w, r.rows * dim}, alpha);
  }
  for (std::size_t j = 0; j < dim; ++j) {
    af.a[j] /= alpha[j];
    if (!af.b.empty()) {
      af.b[j] /= alpha[j];
    }
  }
  quant::scale_down(absmax, alpha);
}

void Quantiser::smooth_hidden(std::size_t l) {
  // SwiGLU: smooth the product silu(gate) * up that feeds w2; the factors fold into w2's
  // columns and into the product's per-channel requantisation (mul_rq).
  const std::size_t dim = d_.dim, hidden = d_.layers[l].ffn.hidden;
  const std::span<float> w2(w_.w2.data() + l * dim * hidden, dim * hidden);
  auto& absmax = calib_.absmax[std::size_t(Act::kHidden)].at(l + 1);
  hidden_alpha_[l] = quant::smoothing_factors(absmax, {w2}, hidden);
  quant::scale_columns(w2, hidden_alpha_[l]);
  quant::scale_down(absmax, hidden_alpha_[l]);
}

bool Quantiser::reads_residual(Site s, std::size_t l) const {
  // The matmuls after this site read the residual itself: a post-norm block, or a head
  // without a norm.
  if (s == Site::kFinal) {
    return !d_.head.has_norm;
  }
  const LayerDesc& L = d_.layers[l];
  const NormDesc& n = s == Site::kAttention ? L.attention.norm : L.ffn.norm;
  return n.placement == NormPlacement::kPost;
}

double Quantiser::input_scale(Site s, std::size_t l) const {
  // The int8 scale of the residual entering site (s, l): the range of x there. The float
  // forward reports it as the matmul input when the site reads the residual, else as the
  // norm's input.
  const int layer = s == Site::kFinal ? -1 : int(l);
  const bool direct = reads_residual(s, l);
  const Act act = s == Site::kAttention ? (direct ? Act::kAttnNorm : Act::kAttnNormIn)
                  : s == Site::kFfn     ? (direct ? Act::kFfnNorm : Act::kFfnNormIn)
                                        : (direct ? Act::kFinalNorm : Act::kFinalNormIn);
  return double(calib_.layer_max(act, layer)) / 127.0;
}

std::pair<QuantNorm, double> Quantiser::quantize_post_norm(Site s, std::size_t l) {
  // The block reads x itself: rq takes the int16 residual to int8 at its input scale s_in.
  // A post-norm block's LayerNorm, after its residual add, writes int8 at the scale of the
  // next site's input, and out_rq takes that back into the residual (docs/numerics.md,
  // "Post-norm blocks").
  QuantNorm qn;
  const double s_in = input_scale(s, l);
  qn.rq = make_requant(s_res_ / s_in);
  if (s == Site::kFinal) {
    return {qn, s_in};
  }
  const bool last = l + 1 == d_.layers.size();
  const double s_next = s == Site::kAttention ? input_scale(Site::kFfn, l)
                        : last                ? input_scale(Site::kFinal, 0)
                                              : input_scale(Site::kAttention, l + 1);
  const Affine& af = affine(s, l);
  const QuantNorm ln = quant::quantize_layernorm(af.a, af.b, s_next, site_name(s, l));
  qn.gain = ln.gain;
  qn.bias = ln.bias;
  qn.frac_bits = ln.frac_bits;
  qn.out_rq = make_requant(s_next / s_res_);
  return {qn, s_in};
}

std::pair<QuantNorm, double> Quantiser::quantize_norm(Site s, std::size_t l) {
  // The int8 matmul input after the norm: its scale s_out, and the norm's parameters.
  if (reads_residual(s, l)) {
    return quantize_post_norm(s, l);
  }
  const NormKind k = kind(s, l);
  const int layer = s == Site::kFinal ? -1 : int(l);
  const Affine& af = affine(s, l);
  const std::string name = site_name(s, l);
  QuantNorm qn;
  if (folded_) {  // the residual itself, per tensor, becomes the int8 matmul input
    const Act in = s == Site::kAttention ? Act::kAttnNormIn
                   : s == Site::kFfn     ? Act::kFfnNormIn
                                         : Act::kFinalNormIn;
    const double s_out = double(calib_.layer_max(in, layer)) / 127.0;
    qn.rq = make_requant(s_res_ / s_out);
    return {qn, s_out};
  }
  const Act out = s == Site::kAttention ? Act::kAttnNorm
                  : s == Site::kFfn     ? Act::kFfnNorm
                                        : Act::kFinalNorm;
  double s_out = double(calib_.layer_max(out, layer)) / 127.0;
  if (k == NormKind::kRms && s != Site::kFinal) {
    // RMSNorm layers take their scale through the float table (QuantScales::layer), as the
    // .psm files of llama models have always been written.
    s_out = double(float(s_out));
    return {quant::quantize_rmsnorm(af.a, s_out, name), s_out};
  }
  if (k == NormKind::kRms) {
    return {quant::quantize_rmsnorm(af.a, s_out, name), s_out};
  }
  if (k == NormKind::kLayer) {
    return {quant::quantize_layernorm(af.a, af.b, s_out, name), s_out};
  }
  return {quant::quantize_batchnorm(af.a, af.b, s_res_, s_out, name), s_out};
}

void Quantiser::residual_scale(QuantModel& q) {
  // Residual stream: int16 with one shared scale, so residual adds need no rescaling.
  s_res_ = double(calib_.global_max(Act::kResidual)) / 32767.0;
  q.scales.residual = float(s_res_);
  const NormKind k = d_.head.norm;
  if (k == NormKind::kBatch) {
    return;  // BatchNorm's eps is folded into its per-channel scale instead
  }
  // The norms' eps in residual LSB^2. RMSNorm uses run.c's 1e-5 exactly (the config holds it
  // as a float, which would round it).
  const double eps_real = k == NormKind::kRms ? 1e-5 : double(model_.config.norm_eps);
  const double eps = std::nearbyint(eps_real * double(d_.dim) / (s_res_ * s_res_));
  if (eps >= std::ldexp(1.0, 40)) {
    throw std::runtime_error(fmt::format(
        "quantize: {} eps in residual LSB^2: expected < 2^40, found {}", norm_name(k), eps));
  }
  q.norm_eps = static_cast<std::uint64_t>(eps);
}

void Quantiser::embedding(QuantModel& q) {
  const std::size_t dim = d_.dim;
  const std::vector<float>& table =
      d_.embedding.features > 0 ? w_.class_token : w_.token_embedding;  // the class token: 1 row
  const std::vector<float> s_emb = quantize_rows(table, d_.embedding.vocab, dim, q.token_embedding);
  q.embed_rq = channel_requant(1.0, s_emb, s_res_);
  if (d_.embedding.features > 0) {
    // x (dim) = input_proj f + input_bias, f_j = input_scale[j] q_j: each feature's scale
    // folded into its column of the projection, then per-row weight scales
    const std::size_t nf = d_.embedding.features;
    std::vector<float> folded = w_.input_proj;  // (dim, nf)
    for (std::size_t j = 0; j < nf; ++j) {
      q.input_scale.push_back(float(double(calib_.input_absmax[j]) / 127.0));
      for (std::size_t r = 0; r < dim; ++r) {
        folded[r * nf + j] *= q.input_scale[j];
      }
    }
    const std::vector<float> s_in = quantize_rows(folded, dim, nf, q.input_proj);
    q.rq_input = with_bias(channel_requant(1.0, s_in, s_res_), w_.input_bias, 1.0, s_in,
                           "input projection");
  }
  if (d_.embedding.positions == PositionKind::kLearned) {
    const std::vector<float> s_pos =
        quantize_rows(w_.pos_embedding, d_.embedding.max_positions, dim, q.pos_embedding);
    q.pos_rq = channel_requant(1.0, s_pos, s_res_);
  }
}

LayerScales Quantiser::initial_scales(std::size_t l) const {
  // int8 tensors span +-127; SwiGLU's gate, up and SiLU only meet the vector unit, never a
  // weight matmul, so they stay int16.
  LayerScales sc{};
  const int layer = int(l);
  for (std::size_t a = 0; a < sc.size(); ++a) {
    sc[a] = float(double(calib_.layer_max(Act(a), layer)) / 127.0);
  }
  if (d_.layers[l].ffn.kind == FfnKind::kSwiGlu) {
    for (const Act a : {Act::kH1, Act::kH3, Act::kSilu}) {
      sc[std::size_t(a)] = float(double(calib_.layer_max(a, layer)) / 32767.0);
    }
  }
  sc[std::size_t(Act::kResidual)] = float(s_res_);
  return sc;
}

std::vector<float> Quantiser::head_scales(Act act, std::size_t l, std::size_t heads,
                                          double levels) const {
  // One scale per head: a head's dot products and weighted sums never mix heads, so per-head
  // scales fold into per-channel and per-head requantisation steps.
  const std::size_t hs = d_.layers[l].attention.head_size;
  std::vector<float> s(heads * hs);
  for (std::size_t h = 0; h < heads; ++h) {
    const double sh = double(calib_.range_max(act, int(l), h * hs, hs)) / levels;
    std::fill_n(s.begin() + std::ptrdiff_t(h * hs), hs, float(sh));
  }
  return s;
}

/// `rq` with the projection's bias folded in when the block has biases.
std::vector<Requant> biased(std::vector<Requant> rq, bool has_bias, const std::vector<float>& b,
                            std::size_t off, double s_in, const std::vector<float>& s_w,
                            const std::string& what) {
  if (!has_bias) {
    return rq;
  }
  const std::size_t n = rq.size();
  return with_bias(std::move(rq), {b.data() + off, n}, s_in, s_w, what);
}

void Quantiser::attention(std::size_t l, QuantLayer& L, LayerScales& sc) {
  const AttentionDesc& a = d_.layers[l].attention;
  const std::size_t dim = d_.dim, q = a.q_dim(), kv = a.kv_dim(), hs = a.head_size;
  auto [norm, s_an] = quantize_norm(Site::kAttention, l);
  L.attn_norm = std::move(norm);
  sc[std::size_t(Act::kAttnNorm)] = float(s_an);
  const double s_ao = sc[std::size_t(Act::kAttnOut)];
  const auto sq = quantize_rows({w_.wq.data() + l * q * dim, q * dim}, q, dim, L.wq);
  const auto sk = quantize_rows({w_.wk.data() + l * kv * dim, kv * dim}, kv, dim, L.wk);
  const auto sv = quantize_rows({w_.wv.data() + l * kv * dim, kv * dim}, kv, dim, L.wv);
  const auto so = quantize_rows({w_.wo.data() + l * dim * q, dim * q}, dim, q, L.wo);
  const double qk_levels = double((1 << (kQkBits - 1)) - 1);  // queries, keys: kQkBits bits
  sc[std::size_t(Act::kQ)] = float(double(calib_.layer_max(Act::kQ, int(l))) / qk_levels);
  sc[std::size_t(Act::kK)] = float(double(calib_.layer_max(Act::kK, int(l))) / qk_levels);
  const std::vector<float> hq = head_scales(Act::kQ, l, a.n_heads, qk_levels);
  const std::vector<float> hk = head_scales(Act::kK, l, a.n_kv_heads, qk_levels);
  const std::vector<float> hv = head_scales(Act::kV, l, a.n_kv_heads, 127.0);
  const std::string name = fmt::format("layer {}", l);
  L.rq_q = biased(channel_requant(s_an, sq, hq), a.bias, w_.bq, l * q, s_an, sq, name + " query");
  L.rq_k = biased(channel_requant(s_an, sk, hk), a.bias, w_.bk, l * kv, s_an, sk, name + " key");
  L.rq_v = biased(channel_requant(s_an, sv, hv), a.bias, w_.bv, l * kv, s_an, sv,
                  name + " value");
  L.rq_o = biased(channel_requant(s_ao, so, s_res_), a.bias, w_.bo, l * dim, s_ao, so,
                  name + " attention output");
  for (std::size_t h = 0; h < a.n_heads; ++h) {
    const std::size_t g = h / a.group();  // this head's KV head
    const double sqh = hq[h * hs], skh = hk[g * hs], svh = hv[g * hs];
    L.score_rq.push_back(make_requant(sqh * skh / std::sqrt(double(hs)) *
                                      std::ldexp(1.0, kExpInFracBits)));
    L.attn_out_rq.push_back(make_requant(svh / (double(kProbOne) * s_ao)));
  }
}

void Quantiser::ffn(std::size_t l, QuantLayer& L, LayerScales& sc) {
  const FfnDesc& f = d_.layers[l].ffn;
  const std::size_t dim = d_.dim, hidden = f.hidden;
  auto [norm, s_fn] = quantize_norm(Site::kFfn, l);
  L.ffn_norm = std::move(norm);
  sc[std::size_t(Act::kFfnNorm)] = float(s_fn);
  const auto at = [&](Act a) { return double(sc[std::size_t(a)]); };
  const auto s1 = quantize_rows({w_.w1.data() + l * hidden * dim, hidden * dim}, hidden, dim, L.w1);
  const auto s2 = quantize_rows({w_.w2.data() + l * dim * hidden, dim * hidden}, dim, hidden, L.w2);
  const std::string name = fmt::format("layer {} FFN", l);
  if (f.kind == FfnKind::kGelu) {
    const double s_up = at(Act::kH1), s_gelu = at(Act::kHidden);
    L.rq_1 = biased(channel_requant(s_fn, s1, s_up), f.bias, w_.b1, l * hidden, s_fn, s1,
                    name + " up");
    L.rq_2 = biased(channel_requant(s_gelu, s2, s_res_), f.bias, w_.b2, l * dim, s_gelu, s2,
                    name + " down");
    L.gelu_in_rq = make_requant(s_up * std::ldexp(1.0, kExpInFracBits));
    L.gelu_out_rq = make_requant(s_up / (std::ldexp(1.0, kGeluPhiFracBits) * s_gelu));
    return;
  }
  const auto s3 = quantize_rows({w_.w3.data() + l * hidden * dim, hidden * dim}, hidden, dim, L.w3);
  const double s_h1 = at(Act::kH1), s_h3 = at(Act::kH3), s_silu = at(Act::kSilu);
  const double s_hid = at(Act::kHidden);
  L.rq_1 = channel_requant(s_fn, s1, s_h1);
  L.rq_3 = channel_requant(s_fn, s3, s_h3);
  L.rq_2 = channel_requant(s_hid, s2, s_res_);
  L.silu_in_rq = make_requant(s_h1 * std::ldexp(1.0, kExpInFracBits));
  L.silu_out_rq = make_requant(s_h1 / (std::ldexp(1.0, kSigmoidFracBits) * s_silu));
  for (std::size_t j = 0; j < hidden; ++j) {
    L.mul_rq.push_back(make_requant(s_silu * s_h3 / (s_hid * double(hidden_alpha_[l][j]))));
  }
}

void Quantiser::head(QuantModel& q) {
  auto [norm, s_fin] = quantize_norm(Site::kFinal, 0);
  q.final_norm = std::move(norm);
  q.scales.final_norm = float(s_fin);
  const double s_logit = std::ldexp(1.0, -kLogitFracBits);
  const auto s_cls = quantize_rows(w_.wcls, d_.head.classes, d_.dim, q.wcls);
  q.rq_cls = with_bias(channel_requant(s_fin, s_cls, s_logit), bcls_, s_fin, s_cls, "classifier");
}

void Quantiser::rope_tables(QuantModel& q) const {
  // RoPE tables in Q1.14, from the same float expressions as the float forward.
  const std::size_t hs = d_.layers.front().attention.head_size, half = hs / 2;
  const std::size_t seq = d_.embedding.max_positions;
  q.rope_cos.resize(seq * half);
  q.rope_sin.resize(seq * half);
  for (std::size_t pos = 0; pos < seq; ++pos) {
    for (std::size_t j = 0; j < half; ++j) {
      const float freq =
          1.0f / std::pow(10000.0f, static_cast<float>(2 * j) / static_cast<float>(hs));
      const float val = static_cast<float>(pos) * freq;
      const double one = std::ldexp(1.0, kRopeFracBits);
      q.rope_cos[pos * half + j] = static_cast<std::int16_t>(std::nearbyint(std::cos(val) * one));
      q.rope_sin[pos * half + j] = static_cast<std::int16_t>(std::nearbyint(std::sin(val) * one));
    }
  }
}

QuantModel Quantiser::run() {
  const ModelConfig& c = model_.config;
  QuantModel q;
  q.config = c;
  q.source_sha256 = model_.sha256;
  q.calibration = calib_.description;
  q.batchnorm = c.norm == NormKind::kBatch ? opts_.batchnorm : BatchNormMode::kUnfused;
  for (std::size_t l = 0; l < d_.layers.size(); ++l) {  // smoothing or folding, norm by norm
    prepare(Site::kAttention, l);
    prepare(Site::kFfn, l);
    if (d_.layers[l].ffn.kind == FfnKind::kSwiGlu) {
      smooth_hidden(l);
    }
  }
  prepare(Site::kFinal, 0);
  residual_scale(q);
  embedding(q);
  for (std::size_t l = 0; l < d_.layers.size(); ++l) {
    QuantLayer L;
    LayerScales sc = initial_scales(l);
    attention(l, L, sc);
    ffn(l, L, sc);
    q.layers.push_back(std::move(L));
    q.scales.layer.push_back(sc);
  }
  head(q);
  if (d_.layers.front().attention.rope) {
    rope_tables(q);
  }
  return q;
}

}  // namespace

QuantModel quantize(const FloatModel& model, const Calibration& calib, const QuantOptions& opts) {
  if (model.config.input_features > 0 &&
      calib.input_absmax.size() != std::size_t(model.config.input_features)) {
    throw std::runtime_error(fmt::format(
        "quantize {}: a model over {} input features needs a calibration over features "
        "(calibrate_features), found one over token ids", model.source,
        model.config.input_features));
  }
  return Quantiser(model, calib, opts).run();
}

}  // namespace passim
