// SPDX-License-Identifier: Apache-2.0
// Float32 reference forward pass of a model description (llama2.c run.c semantics for llama
// blocks).
#include "passim/model/float_backend.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace passim {

namespace {

using Vec = Eigen::VectorXf;

/// out (d) = W (d, n) row-major times x (n), each dot product summed sequentially in float32
/// in index order, as run.c does. (Eigen's product would reorder the sums and can flip a
/// greedy token.)
void matvec(Eigen::Ref<Vec> out, const float* w, const Vec& x, std::size_t d, std::size_t n) {
  for (std::size_t i = 0; i < d; ++i) {
    const float* row = w + i * n;
    float acc = 0.0f;
    for (std::size_t j = 0; j < n; ++j) {
      acc += row[j] * x[Eigen::Index(j)];
    }
    out[Eigen::Index(i)] = acc;
  }
}

/// o = weight * (x / sqrt(mean(x^2) + 1e-5)), run.c's RMSNorm.
void rmsnorm(Vec& o, const Vec& x, const float* weight) {
  float ss = 0.0f;
  for (Eigen::Index j = 0; j < x.size(); ++j) {
    ss += x[j] * x[j];
  }
  ss /= static_cast<float>(x.size());
  ss += 1e-5f;
  ss = 1.0f / std::sqrt(ss);
  for (Eigen::Index j = 0; j < x.size(); ++j) {
    o[j] = weight[j] * (ss * x[j]);
  }
}

void softmax(float* x, std::size_t n) {
  float max_val = x[0];
  for (std::size_t i = 1; i < n; ++i) {
    max_val = std::max(max_val, x[i]);
  }
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max_val);
    sum += x[i];
  }
  for (std::size_t i = 0; i < n; ++i) {
    x[i] /= sum;
  }
}

/// GPT norm of x into o: LayerNorm (biased variance over the row) or BatchNorm (the
/// trained running mean/var of each channel), then weight and bias, in double then rounded.
void gpt_norm(Vec& o, const Vec& x, NormKind kind, float eps, const float* weight,
              const float* bias, const float* mean, const float* var) {
  const Eigen::Index n = x.size();
  if (kind == NormKind::kLayer) {
    double mu = 0;
    for (Eigen::Index j = 0; j < n; ++j) {
      mu += x[j];
    }
    mu /= double(n);
    double v = 0;
    for (Eigen::Index j = 0; j < n; ++j) {
      v += (x[j] - mu) * (x[j] - mu);
    }
    v /= double(n);
    const double r = 1.0 / std::sqrt(v + double(eps));
    for (Eigen::Index j = 0; j < n; ++j) {
      o[j] = float((x[j] - mu) * r * weight[j] + bias[j]);
    }
    return;
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    const double r = 1.0 / std::sqrt(double(var[j]) + double(eps));
    o[j] = float((x[j] - mean[j]) * r * weight[j] + bias[j]);
  }
}

/// GELU in place, in the model's form (model/config.hpp GeluForm), computed in double.
void gelu(Vec& v, GeluForm form) {
  const double c = std::sqrt(2.0 / 3.14159265358979323846);
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    const double u = v[i];
    const double phi = form == GeluForm::kErf ? 0.5 * (1.0 + std::erf(u / std::sqrt(2.0)))
                                              : 0.5 * (1.0 + std::tanh(c * (u + 0.044715 * u * u * u)));
    v[i] = float(u * phi);
  }
}

void add_bias(Eigen::Ref<Vec> v, const float* b) {
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    v[i] += b[i];
  }
}

}  // namespace

FloatBackend::FloatBackend(const FloatModel& model) : model_(model), desc_(describe(model.config)) {
  const ModelConfig& c = model.config;
  x_ = Vec::Zero(c.dim);
  xb_ = Vec::Zero(c.dim);
  xb2_ = Vec::Zero(c.dim);
  q_ = Vec::Zero(c.dim);
  hb_ = Vec::Zero(c.hidden_dim);
  hb2_ = Vec::Zero(c.hidden_dim);
  logits_ = Vec::Zero(c.vocab_size);
  att_ = Eigen::MatrixXf::Zero(c.seq_len, c.n_heads);  // column h is head h's row
  const std::size_t cache = std::size_t(c.n_layers) * std::size_t(c.seq_len) * c.kv_dim();
  key_cache_.assign(cache, 0.0f);
  value_cache_.assign(cache, 0.0f);
}

void FloatBackend::observe(Act act, int layer, Eigen::Ref<const Eigen::VectorXf> v) const {
  if (observer_ != nullptr) {
    observer_->observe(act, layer, {v.data(), std::size_t(v.size())});
  }
}

std::span<const float> FloatBackend::attention_row(int h) const noexcept {
  return {att_.col(h).data(), std::size_t(last_pos_ + 1)};
}

void FloatBackend::forward(int token, int pos) {
  if (unmasked(desc_)) {  // an encoder's one position is a whole sequence of one
    forward_sequence(std::span(&token, 1), pos);
    return;
  }
  check_token_position(model_.config, token, pos);
  last_pos_ = pos;
  embed(token, std::size_t(pos));  // x (dim)
  for (std::size_t l = 0; l < desc_.layers.size(); ++l) {
    attention_in(l, std::size_t(pos));                // q (q_dim); k, v (kv_dim) cached at pos
    attention_out(l, std::size_t(pos) + 1);  // x (dim) += attention over 0 .. pos (causal)
    ffn_block(l);                                     // x (dim) += ffn
  }
  head(pos);  // logits (vocab)
}

void FloatBackend::forward_sequence(std::span<const int> tokens, int pos) {
  if (desc_.embedding.features > 0) {
    throw std::runtime_error(fmt::format(
        "float backend: this model takes {} features per position (forward_features), not "
        "token ids", desc_.embedding.features));
  }
  if (!unmasked(desc_)) {
    Backend::forward_sequence(tokens, pos);  // causal: one position after the other
    return;
  }
  check_sequence(model_.config, tokens, pos);
  require_whole_sequence(desc_, pos, "float backend");
  const std::size_t n = tokens.size();
  Eigen::MatrixXf rows(x_.size(), Eigen::Index(n));  // (dim, n): column i is row i's x
  for (std::size_t i = 0; i < n; ++i) {
    embed(tokens[i], i);
    rows.col(Eigen::Index(i)) = x_;
  }
  encode(rows);
}

void FloatBackend::forward_features(std::span<const float> features, std::size_t frames) {
  const std::size_t nf = desc_.embedding.features, dim = desc_.dim;
  const std::size_t n = require_features(desc_, features.size(), frames, "float backend");
  const FloatWeights& w = model_.weights;
  Eigen::MatrixXf rows(x_.size(), Eigen::Index(n));  // (dim, n): column i is row i's x
  for (std::size_t i = 0; i < n; ++i) {
    if (desc_.embedding.class_token && i == 0) {
      x_ = Eigen::Map<const Vec>(w.class_token.data(), Eigen::Index(dim));  // x (dim)
    } else {
      const std::size_t f = i - (desc_.embedding.class_token ? 1 : 0);
      const Vec in = Eigen::Map<const Vec>(features.data() + f * nf, Eigen::Index(nf));
      matvec(x_, w.input_proj.data(), in, dim, nf);
      add_bias(x_, w.input_bias.data());  // x (dim) = input_proj f + input_bias
    }
    if (desc_.embedding.positions == PositionKind::kLearned) {
      x_ += Eigen::Map<const Vec>(w.pos_embedding.data() + i * dim, Eigen::Index(dim));
    }
    observe(Act::kResidual, -1, x_);
    rows.col(Eigen::Index(i)) = x_;
  }
  encode(rows);
}

void FloatBackend::encode(Eigen::MatrixXf& rows) {
  const auto n = std::size_t(rows.cols());
  last_pos_ = int(n) - 1;
  Eigen::MatrixXf qs(q_.size(), Eigen::Index(n));  // (q_dim, n): row i's queries
  for (std::size_t l = 0; l < desc_.layers.size(); ++l) {
    for (std::size_t i = 0; i < n; ++i) {  // every row's keys and values first: no mask
      x_ = rows.col(Eigen::Index(i));
      attention_in(l, i);
      qs.col(Eigen::Index(i)) = q_;
    }
    for (std::size_t i = 0; i < n; ++i) {
      x_ = rows.col(Eigen::Index(i));
      q_ = qs.col(Eigen::Index(i));
      attention_out(l, n);  // x (dim) += attention over all n positions
      ffn_block(l);            // x (dim)
      rows.col(Eigen::Index(i)) = x_;
    }
  }
  const std::size_t read = desc_.head.reads_first ? 0 : n - 1;
  x_ = rows.col(Eigen::Index(read));
  head(int(read));  // logits (classes) of the class token or the last position
}

void FloatBackend::embed(int token, std::size_t pos) {
  const FloatWeights& w = model_.weights;
  const std::size_t dim = desc_.dim;
  // x (dim) = token embedding row (+ the learned position row)
  x_ = Eigen::Map<const Vec>(w.token_embedding.data() + std::size_t(token) * dim,
                             Eigen::Index(dim));
  if (desc_.embedding.positions == PositionKind::kLearned) {
    x_ += Eigen::Map<const Vec>(w.pos_embedding.data() + pos * dim, Eigen::Index(dim));
  }
  observe(Act::kResidual, -1, x_);
}

void FloatBackend::norm(NormSite site, std::size_t l, const Vec& in, Vec& out) {
  const FloatWeights& w = model_.weights;
  const std::size_t off = site == NormSite::kFinal ? 0 : l * desc_.dim;
  const LayerDesc* layer = site == NormSite::kFinal ? nullptr : &desc_.layers[l];
  const NormKind kind = layer == nullptr                 ? desc_.head.norm
                        : site == NormSite::kAttention ? layer->attention.norm.kind
                                                       : layer->ffn.norm.kind;
  auto pick = [&](const std::vector<float>& att, const std::vector<float>& ffn,
                  const std::vector<float>& fin) {
    const std::vector<float>& v = site == NormSite::kAttention ? att
                                  : site == NormSite::kFfn     ? ffn
                                                               : fin;
    return v.empty() ? nullptr : v.data() + off;
  };
  const float* gain = pick(w.rms_att, w.rms_ffn, w.rms_final);
  if (kind == NormKind::kRms) {
    rmsnorm(out, in, gain);
    return;
  }
  gpt_norm(out, in, kind, model_.config.norm_eps, gain,
           pick(w.att_norm_bias, w.ffn_norm_bias, w.final_norm_bias),
           pick(w.att_norm_mean, w.ffn_norm_mean, w.final_norm_mean),
           pick(w.att_norm_var, w.ffn_norm_var, w.final_norm_var));
}

void FloatBackend::block_input(NormSite site, std::size_t l, const NormDesc& nd) {
  // xb (dim): the block's matmul input, norm(x) (pre-norm) or x itself (post-norm)
  const int layer = int(l);
  const bool att = site == NormSite::kAttention;
  if (nd.placement == NormPlacement::kPost) {
    xb_ = x_;
  } else {
    if (nd.kind != NormKind::kRms) {  // LayerNorm and BatchNorm quantise from its range
      observe(att ? Act::kAttnNormIn : Act::kFfnNormIn, layer, x_);
    }
    norm(site, l, x_, xb_);
  }
  observe(att ? Act::kAttnNorm : Act::kFfnNorm, layer, xb_);
}

void FloatBackend::post_norm(NormSite site, std::size_t l, const NormDesc& nd) {
  // x (dim) = norm(x) after the residual add of a post-norm block
  if (nd.placement != NormPlacement::kPost) {
    return;
  }
  const int layer = int(l);
  observe(site == NormSite::kAttention ? Act::kAttnNormIn : Act::kFfnNormIn, layer, x_);
  norm(site, l, x_, xb2_);
  x_ = xb2_;
  observe(Act::kResidual, layer, x_);
}

void FloatBackend::attention_in(std::size_t l, std::size_t pos) {
  const AttentionDesc& a = desc_.layers[l].attention;
  const FloatWeights& w = model_.weights;
  const std::size_t dim = desc_.dim, q_dim = a.q_dim(), kv_dim = a.kv_dim();
  const int layer = int(l);
  block_input(NormSite::kAttention, l, a.norm);  // xb (dim)
  const std::size_t loff = l * desc_.embedding.max_positions * kv_dim;
  Eigen::Map<Vec> k(key_cache_.data() + loff + pos * kv_dim, Eigen::Index(kv_dim));
  Eigen::Map<Vec> v(value_cache_.data() + loff + pos * kv_dim, Eigen::Index(kv_dim));
  matvec(q_, w.wq.data() + l * q_dim * dim, xb_, q_dim, dim);  // q (q_dim)
  matvec(k, w.wk.data() + l * kv_dim * dim, xb_, kv_dim, dim);  // k (kv_dim)
  matvec(v, w.wv.data() + l * kv_dim * dim, xb_, kv_dim, dim);  // v (kv_dim)
  if (a.bias) {
    add_bias(q_, w.bq.data() + l * q_dim);
    add_bias(k, w.bk.data() + l * kv_dim);
    add_bias(v, w.bv.data() + l * kv_dim);
  }
  observe(Act::kQ, layer, q_);
  observe(Act::kK, layer, k);
  observe(Act::kV, layer, v);
  if (a.rope) {
    rope(l, pos, k);
    observe(Act::kQ, layer, q_);
    observe(Act::kK, layer, k);
  }
}

void FloatBackend::attention_out(std::size_t l, std::size_t t_len) {
  const AttentionDesc& a = desc_.layers[l].attention;
  const FloatWeights& w = model_.weights;
  const std::size_t dim = desc_.dim, q_dim = a.q_dim();
  const int layer = int(l);
  attend(l, t_len);  // xb (q_dim) over positions 0 .. t_len - 1
  observe(Act::kAttnOut, layer, xb_);
  matvec(xb2_, w.wo.data() + l * dim * q_dim, xb_, dim, q_dim);  // xb2 (dim)
  residual_add(layer, xb2_, a.bias ? w.bo.data() + l * dim : nullptr);
  post_norm(NormSite::kAttention, l, a.norm);  // x (dim)
}

void FloatBackend::residual_add(int layer, Vec& branch, const float* bias) {
  // x (dim) += the branch (dim) and its bias, if any.
  if (bias != nullptr) {
    add_bias(branch, bias);
  }
  observe(Act::kResidual, layer, branch);
  x_ += branch;
  observe(Act::kResidual, layer, x_);
}

void FloatBackend::rope(std::size_t l, std::size_t pos, Eigen::Ref<Vec> k) {
  // RoPE on q (all heads) and k (kv heads), pairs (2i, 2i+1), as run.c computes it.
  const AttentionDesc& a = desc_.layers[l].attention;
  const std::size_t hs = a.head_size, kv_dim = a.kv_dim();
  for (std::size_t i = 0; i < a.q_dim(); i += 2) {
    const std::size_t head_dim = i % hs;
    const float freq =
        1.0f / std::pow(10000.0f, static_cast<float>(head_dim) / static_cast<float>(hs));
    const float val = static_cast<float>(pos) * freq;
    const float fcr = std::cos(val);
    const float fci = std::sin(val);
    const int rotn = i < kv_dim ? 2 : 1;
    for (int r = 0; r < rotn; ++r) {
      float* vec = r == 0 ? q_.data() : k.data();
      const float v0 = vec[i];
      const float v1 = vec[i + 1];
      vec[i] = v0 * fcr - v1 * fci;
      vec[i + 1] = v0 * fci + v1 * fcr;
    }
  }
}

void FloatBackend::attend(std::size_t l, std::size_t t_len) {
  // Multi-head attention over positions 0 .. t_len - 1 (causal: t_len = pos + 1; no mask: the
  // whole sequence); att column h (t_len).
  const AttentionDesc& a = desc_.layers[l].attention;
  const std::size_t hs = a.head_size, kv_dim = a.kv_dim(), group = a.group();
  const std::size_t loff = l * desc_.embedding.max_positions * kv_dim;
  for (std::size_t h = 0; h < a.n_heads; ++h) {
    const float* qh = q_.data() + h * hs;
    float* att = att_.col(Eigen::Index(h)).data();
    const std::size_t kv_off = (h / group) * hs;
    for (std::size_t t = 0; t < t_len; ++t) {
      const float* kt = key_cache_.data() + loff + t * kv_dim + kv_off;
      float score = 0.0f;
      for (std::size_t i = 0; i < hs; ++i) {
        score += qh[i] * kt[i];
      }
      att[t] = score / std::sqrt(static_cast<float>(hs));
    }
    softmax(att, t_len);
    float* xbh = xb_.data() + h * hs;  // xb (q_dim): head h's slice
    std::fill(xbh, xbh + hs, 0.0f);
    for (std::size_t t = 0; t < t_len; ++t) {
      const float* vt = value_cache_.data() + loff + t * kv_dim + kv_off;
      const float p = att[t];
      for (std::size_t i = 0; i < hs; ++i) {
        xbh[i] += p * vt[i];
      }
    }
  }
}

void FloatBackend::ffn_block(std::size_t l) {
  const FfnDesc& f = desc_.layers[l].ffn;
  const FloatWeights& w = model_.weights;
  const std::size_t dim = desc_.dim, hidden = f.hidden;
  const int layer = int(l);
  block_input(NormSite::kFfn, l, f.norm);  // xb (dim)
  matvec(hb_, w.w1.data() + l * hidden * dim, xb_, hidden, dim);  // hb (hidden)
  if (f.kind == FfnKind::kSwiGlu) {
    matvec(hb2_, w.w3.data() + l * hidden * dim, xb_, hidden, dim);  // hb2 (hidden)
    observe(Act::kH1, layer, hb_);
    observe(Act::kH3, layer, hb2_);
    for (Eigen::Index i = 0; i < hb_.size(); ++i) {
      hb_[i] = hb_[i] * (1.0f / (1.0f + std::exp(-hb_[i])));  // silu(gate)
    }
    observe(Act::kSilu, layer, hb_);
    hb_ = hb_.cwiseProduct(hb2_);
  } else {
    if (f.bias) {
      add_bias(hb_, w.b1.data() + l * hidden);
    }
    observe(Act::kH1, layer, hb_);
    gelu(hb_, f.gelu);
  }
  observe(Act::kHidden, layer, hb_);
  matvec(xb_, w.w2.data() + l * dim * hidden, hb_, dim, hidden);  // xb (dim)
  residual_add(layer, xb_, f.bias ? w.b2.data() + l * dim : nullptr);
  post_norm(NormSite::kFfn, l, f.norm);  // x (dim)
}

void FloatBackend::head(int pos) {
  if (!desc_.head.has_norm) {
    xb_ = x_;  // xb (dim): the classifier reads the residual stream
  } else {
    if (desc_.head.norm != NormKind::kRms) {
      observe(Act::kFinalNormIn, -1, x_);
    }
    norm(NormSite::kFinal, 0, x_, xb_);  // xb (dim)
  }
  observe(Act::kFinalNorm, -1, xb_);
  matvec(logits_, model_.weights.classifier().data(), xb_, desc_.head.classes, desc_.dim);
  if (!model_.weights.bcls.empty()) {
    add_bias(logits_, model_.weights.bcls.data());  // logits (classes) += classifier bias
  }
  if (!logits_.allFinite()) {
    // Finite weights can still overflow float32 (e.g. a huge norm gain): never sample from it.
    throw std::runtime_error(fmt::format(
        "float forward at position {}: non-finite logits (the weights overflow float32 "
        "arithmetic)", pos));
  }
}

}  // namespace passim
