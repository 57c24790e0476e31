// SPDX-License-Identifier: Apache-2.0
// Float32 reference forward pass (llama2.c run.c semantics).
#include "passim/model/float_backend.hpp"

#include <cassert>
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

void add_bias(Eigen::Ref<Vec> v, const float* b) {
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    v[i] += b[i];
  }
}

}  // namespace

FloatBackend::FloatBackend(const FloatModel& model) : model_(model) {
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
  const ModelConfig& c = model_.config;
  const FloatWeights& w = model_.weights;
  assert(token >= 0 && token < c.vocab_size && pos >= 0 && pos < c.seq_len);
  if (c.arch == Arch::kGpt) {
    forward_gpt(token, pos);
    return;
  }
  const std::size_t dim = std::size_t(c.dim);
  const std::size_t hidden = std::size_t(c.hidden_dim);
  const std::size_t kv_dim = c.kv_dim();
  const std::size_t hs = c.head_size();
  const std::size_t kv_mul = std::size_t(c.n_heads / c.n_kv_heads);
  const std::size_t upos = std::size_t(pos);
  last_pos_ = pos;

  // x (dim) = token embedding row
  x_ = Eigen::Map<const Vec>(w.token_embedding.data() + std::size_t(token) * dim, c.dim);
  observe(Act::kResidual, -1, x_);

  for (int l = 0; l < c.n_layers; ++l) {
    const std::size_t ul = std::size_t(l);
    // ---- attention ----
    rmsnorm(xb_, x_, w.rms_att.data() + ul * dim);  // xb (dim)
    observe(Act::kAttnNorm, l, xb_);
    const std::size_t loff = ul * std::size_t(c.seq_len) * kv_dim;
    Eigen::Map<Vec> k(key_cache_.data() + loff + upos * kv_dim, Eigen::Index(kv_dim));
    Eigen::Map<Vec> v(value_cache_.data() + loff + upos * kv_dim, Eigen::Index(kv_dim));
    matvec(q_, w.wq.data() + ul * dim * dim, xb_, dim, dim);         // q (dim)
    matvec(k, w.wk.data() + ul * kv_dim * dim, xb_, kv_dim, dim);    // k (kv_dim)
    matvec(v, w.wv.data() + ul * kv_dim * dim, xb_, kv_dim, dim);    // v (kv_dim)
    observe(Act::kQ, l, q_);
    observe(Act::kK, l, k);
    observe(Act::kV, l, v);
    // RoPE on q (all heads) and k (kv heads), pairs (2i, 2i+1)
    for (std::size_t i = 0; i < dim; i += 2) {
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
    observe(Act::kQ, l, q_);
    observe(Act::kK, l, k);
    // multi-head attention over positions 0..pos; att column h (pos + 1)
    for (int h = 0; h < c.n_heads; ++h) {
      const std::size_t uh = std::size_t(h);
      const float* qh = q_.data() + uh * hs;
      float* att = att_.col(h).data();
      for (std::size_t t = 0; t <= upos; ++t) {
        const float* kt = key_cache_.data() + loff + t * kv_dim + (uh / kv_mul) * hs;
        float score = 0.0f;
        for (std::size_t i = 0; i < hs; ++i) {
          score += qh[i] * kt[i];
        }
        att[t] = score / std::sqrt(static_cast<float>(hs));
      }
      softmax(att, upos + 1);
      float* xbh = xb_.data() + uh * hs;  // xb (dim): head h's slice
      std::fill(xbh, xbh + hs, 0.0f);
      for (std::size_t t = 0; t <= upos; ++t) {
        const float* vt = value_cache_.data() + loff + t * kv_dim + (uh / kv_mul) * hs;
        const float a = att[t];
        for (std::size_t i = 0; i < hs; ++i) {
          xbh[i] += a * vt[i];
        }
      }
    }
    observe(Act::kAttnOut, l, xb_);
    matvec(xb2_, w.wo.data() + ul * dim * dim, xb_, dim, dim);  // xb2 (dim)
    observe(Act::kResidual, l, xb2_);
    x_ += xb2_;
    observe(Act::kResidual, l, x_);

    // ---- feed-forward (SwiGLU) ----
    rmsnorm(xb_, x_, w.rms_ffn.data() + ul * dim);
    observe(Act::kFfnNorm, l, xb_);
    matvec(hb_, w.w1.data() + ul * hidden * dim, xb_, hidden, dim);   // hb (hidden)
    matvec(hb2_, w.w3.data() + ul * hidden * dim, xb_, hidden, dim);  // hb2 (hidden)
    observe(Act::kH1, l, hb_);
    observe(Act::kH3, l, hb2_);
    for (Eigen::Index i = 0; i < hb_.size(); ++i) {
      hb_[i] = hb_[i] * (1.0f / (1.0f + std::exp(-hb_[i])));
    }
    observe(Act::kSilu, l, hb_);
    hb_ = hb_.cwiseProduct(hb2_);
    observe(Act::kHidden, l, hb_);
    matvec(xb_, w.w2.data() + ul * dim * hidden, hb_, dim, hidden);  // xb (dim)
    observe(Act::kResidual, l, xb_);
    x_ += xb_;
    observe(Act::kResidual, l, x_);
  }

  rmsnorm(x_, x_, w.rms_final.data());
  observe(Act::kFinalNorm, -1, x_);
  matvec(logits_, w.classifier().data(), x_, std::size_t(c.vocab_size), dim);  // (vocab)
  if (!logits_.allFinite()) {
    // Finite weights can still overflow float32 (e.g. a huge norm gain): never sample from it.
    throw std::runtime_error(fmt::format(
        "float forward at position {}: non-finite logits (the weights overflow float32 "
        "arithmetic)", pos));
  }
}

void FloatBackend::forward_gpt(int token, int pos) {
  const ModelConfig& c = model_.config;
  const FloatWeights& w = model_.weights;
  const std::size_t dim = std::size_t(c.dim), hidden = std::size_t(c.hidden_dim);
  const std::size_t hs = c.head_size(), upos = std::size_t(pos);
  const bool bn = c.norm == NormKind::kBatch;
  last_pos_ = pos;
  auto stat = [&](const std::vector<float>& v, std::size_t off) {
    return bn ? v.data() + off : nullptr;
  };

  // x (dim) = token embedding + position embedding
  x_ = Eigen::Map<const Vec>(w.token_embedding.data() + std::size_t(token) * dim, c.dim) +
       Eigen::Map<const Vec>(w.pos_embedding.data() + upos * dim, c.dim);
  observe(Act::kResidual, -1, x_);
  for (int l = 0; l < c.n_layers; ++l) {
    const std::size_t ul = std::size_t(l), lo = ul * dim;
    // ---- attention ----
    observe(Act::kAttnNormIn, l, x_);
    gpt_norm(xb_, x_, c.norm, c.norm_eps, w.rms_att.data() + lo, w.att_norm_bias.data() + lo,
             stat(w.att_norm_mean, lo), stat(w.att_norm_var, lo));
    observe(Act::kAttnNorm, l, xb_);
    const std::size_t loff = ul * std::size_t(c.seq_len) * dim;
    Eigen::Map<Vec> k(key_cache_.data() + loff + upos * dim, Eigen::Index(dim));
    Eigen::Map<Vec> v(value_cache_.data() + loff + upos * dim, Eigen::Index(dim));
    matvec(q_, w.wq.data() + ul * dim * dim, xb_, dim, dim);
    add_bias(q_, w.bq.data() + lo);
    matvec(k, w.wk.data() + ul * dim * dim, xb_, dim, dim);
    add_bias(k, w.bk.data() + lo);
    matvec(v, w.wv.data() + ul * dim * dim, xb_, dim, dim);
    add_bias(v, w.bv.data() + lo);
    observe(Act::kQ, l, q_);
    observe(Act::kK, l, k);
    observe(Act::kV, l, v);
    for (int h = 0; h < c.n_heads; ++h) {
      const std::size_t uh = std::size_t(h);
      const float* qh = q_.data() + uh * hs;
      float* att = att_.col(h).data();
      for (std::size_t t = 0; t <= upos; ++t) {
        const float* kt = key_cache_.data() + loff + t * dim + uh * hs;
        float score = 0.0f;
        for (std::size_t i = 0; i < hs; ++i) {
          score += qh[i] * kt[i];
        }
        att[t] = score / std::sqrt(static_cast<float>(hs));
      }
      softmax(att, upos + 1);
      float* xbh = xb_.data() + uh * hs;
      std::fill(xbh, xbh + hs, 0.0f);
      for (std::size_t t = 0; t <= upos; ++t) {
        const float* vt = value_cache_.data() + loff + t * dim + uh * hs;
        for (std::size_t i = 0; i < hs; ++i) {
          xbh[i] += att[t] * vt[i];
        }
      }
    }
    observe(Act::kAttnOut, l, xb_);
    matvec(xb2_, w.wo.data() + ul * dim * dim, xb_, dim, dim);
    add_bias(xb2_, w.bo.data() + lo);
    observe(Act::kResidual, l, xb2_);
    x_ += xb2_;
    observe(Act::kResidual, l, x_);

    // ---- feed-forward (GELU) ----
    observe(Act::kFfnNormIn, l, x_);
    gpt_norm(xb_, x_, c.norm, c.norm_eps, w.rms_ffn.data() + lo, w.ffn_norm_bias.data() + lo,
             stat(w.ffn_norm_mean, lo), stat(w.ffn_norm_var, lo));
    observe(Act::kFfnNorm, l, xb_);
    matvec(hb_, w.w1.data() + ul * hidden * dim, xb_, hidden, dim);
    add_bias(hb_, w.b1.data() + ul * hidden);
    observe(Act::kH1, l, hb_);
    for (Eigen::Index i = 0; i < hb_.size(); ++i) {
      const double u = hb_[i];
      hb_[i] = float(0.5 * u * (1.0 + std::erf(u / std::sqrt(2.0))));
    }
    observe(Act::kHidden, l, hb_);
    matvec(xb_, w.w2.data() + ul * dim * hidden, hb_, dim, hidden);
    add_bias(xb_, w.b2.data() + lo);
    observe(Act::kResidual, l, xb_);
    x_ += xb_;
    observe(Act::kResidual, l, x_);
  }
  observe(Act::kFinalNormIn, -1, x_);
  gpt_norm(xb_, x_, c.norm, c.norm_eps, w.rms_final.data(), w.final_norm_bias.data(),
           stat(w.final_norm_mean, 0), stat(w.final_norm_var, 0));
  observe(Act::kFinalNorm, -1, xb_);
  matvec(logits_, w.classifier().data(), xb_, std::size_t(c.vocab_size), dim);
  if (!logits_.allFinite()) {
    throw std::runtime_error(fmt::format(
        "float forward at position {}: non-finite logits (the weights overflow float32 "
        "arithmetic)", pos));
  }
}

}  // namespace passim
