// SPDX-License-Identifier: Apache-2.0
// Integer forward pass of a model description, built from the golden kernels.
#include "passim/quant/cpu_backend.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/kernels/attn.hpp"
#include "passim/kernels/batchnorm.hpp"
#include "passim/kernels/eltwise.hpp"
#include "passim/kernels/gelu.hpp"
#include "passim/kernels/layernorm.hpp"
#include "passim/kernels/matmul.hpp"
#include "passim/kernels/rmsnorm.hpp"
#include "passim/kernels/rope.hpp"
#include "passim/kernels/silu.hpp"

namespace passim {

namespace k = kernels;

void norm_i8(const QuantModel& m, NormKind kind, const QuantNorm& n,
             std::span<const std::int16_t> x, std::span<std::int8_t> out) {
  switch (kind) {
    case NormKind::kRms:
      k::rmsnorm_i8(x, {n.gain, n.frac_bits, m.norm_eps}, out);
      return;
    case NormKind::kLayer:
      k::layernorm_i8(x, {n.gain, n.bias, n.frac_bits, m.norm_eps}, out);
      return;
    case NormKind::kBatch:
      if (m.batchnorm == BatchNormMode::kUnfused) {
        k::batchnorm_i8(x, {n.gain, n.bias, n.rq}, out);
        return;
      }
      residual_i8(n, x, out);  // folded: the DMA's int16 -> int8 step
      return;
  }
}

void residual_i8(const QuantNorm& n, std::span<const std::int16_t> x,
                 std::span<std::int8_t> out) {
  for (std::size_t i = 0; i < x.size(); ++i) {  // the DMA's int16 -> int8 step
    out[i] = static_cast<std::int8_t>(requantize(x[i], n.rq, 8));
  }
}

CpuBackend::CpuBackend(const QuantModel& model, kernels::SoftmaxOptions softmax)
    : model_(model), desc_(describe(model.config)), softmax_(softmax) {
  const ModelConfig& c = model.config;
  const auto dim = std::size_t(c.dim), hidden = std::size_t(c.hidden_dim);
  const auto seq = std::size_t(c.seq_len), vocab = std::size_t(c.vocab_size);
  const std::size_t q_dim = desc_.layers.front().attention.q_dim();
  x_.assign(seq * dim, 0);
  branch_.assign(seq * dim, 0);
  xn_.assign(seq * dim, 0);
  q_.assign(seq * q_dim, 0);
  att_.assign(seq * q_dim, 0);
  gate_.assign(seq * hidden, 0);
  up_.assign(seq * hidden, 0);
  hid_.assign(seq * hidden, 0);
  acc_.assign(seq * std::max({dim, hidden, q_dim}), 0);
  k_rows_.assign(seq * c.kv_dim(), 0);
  v_rows_.assign(seq * c.kv_dim(), 0);
  key_cache_.assign(std::size_t(c.n_layers) * seq * c.kv_dim(), 0);
  value_cache_.assign(key_cache_.size(), 0);
  scores_.assign(seq, 0);
  exps_.assign(seq, 0);
  probs_.assign(seq, 0);
  head_acc_.assign(c.head_size(), 0);
  logits_.assign(vocab, 0);
  logits_f32_.assign(vocab, 0.0f);
}

std::span<const std::int16_t> CpuBackend::attention_row(int layer, int h) const {
  const ModelConfig& c = model_.config;
  if (!capture_ || captured_.empty()) {
    throw std::logic_error("attention_row: capture_attention(true) before forward()");
  }
  const std::size_t seq = std::size_t(c.seq_len);
  return {captured_.data() + (std::size_t(layer) * std::size_t(c.n_heads) + std::size_t(h)) * seq,
          std::size_t(last_pos_ + 1)};
}

void CpuBackend::forward(int token, int pos) { forward_sequence(std::span(&token, 1), pos); }

void CpuBackend::block_input(const NormDesc& nd, const QuantNorm& qn, std::size_t n) {
  // xn (n, dim) int8: norm(x) (pre-norm), or x itself per tensor, requantize(x, rq, 8) (post-norm)
  const std::size_t dim = desc_.dim;
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = std::span(x_).subspan(i * dim, dim);
    const auto xn = std::span(xn_).subspan(i * dim, dim);
    if (nd.placement == NormPlacement::kPost) {
      residual_i8(qn, x, xn);
    } else {
      norm_i8(model_, nd.kind, qn, x, xn);
    }
  }
}

void CpuBackend::post_norm(const NormDesc& nd, const QuantNorm& qn, std::size_t n) {
  // x (n, dim) int16 = out_rq(norm(x) int8): a post-norm block's norm after its residual add
  if (nd.placement != NormPlacement::kPost) {
    return;
  }
  const std::size_t dim = desc_.dim;
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = std::span(x_).subspan(i * dim, dim);
    const auto xn = std::span(xn_).subspan(i * dim, dim);
    norm_i8(model_, nd.kind, qn, x, xn);
    k::embed_i16(xn, qn.out_rq, x);
  }
}

void CpuBackend::forward_sequence(std::span<const int> tokens, int pos) {
  const ModelConfig& c = model_.config;
  if (desc_.embedding.features > 0) {
    throw std::runtime_error(fmt::format(
        "cpu backend: this model takes {} features per position (forward_features), not "
        "token ids", desc_.embedding.features));
  }
  check_sequence(c, tokens, pos);
  require_whole_sequence(desc_, pos, "cpu backend");
  const std::size_t n = tokens.size(), p0 = std::size_t(pos);
  last_pos_ = pos + int(n) - 1;
  if (capture_) {
    captured_.assign(std::size_t(c.n_layers * c.n_heads) * std::size_t(c.seq_len), 0);
  }
  embed(tokens, p0);  // x (n, dim) int16
  run_layers(p0, n);
}

void CpuBackend::forward_features(std::span<const std::int8_t> features, std::size_t frames) {
  const std::size_t nf = desc_.embedding.features, dim = desc_.dim;
  const std::size_t first = desc_.embedding.class_token ? 1 : 0;
  const std::size_t n = require_features(desc_, features.size(), frames, "cpu backend");
  last_pos_ = int(n) - 1;
  if (capture_) {
    captured_.assign(std::size_t(model_.config.n_layers * model_.config.n_heads) *
                     std::size_t(model_.config.seq_len), 0);
  }
  // x (n, dim) int16: the class token's row, then input_proj f + input_bias per frame
  if (first == 1) {
    k::embed_i16({model_.token_embedding.data(), dim}, model_.embed_rq[0], {x_.data(), dim});
  }
  const std::span<std::int32_t> acc(acc_.data(), frames * dim);
  k::matmul_i8(features, model_.input_proj, acc, frames, nf, dim);  // acc (frames, dim)
  k::requantize_i16(acc, model_.rq_input, std::span(x_).subspan(first * dim, frames * dim));
  for (std::size_t i = 0; i < n; ++i) {  // x (n, dim) += position rows
    const std::span<std::int16_t> x(x_.data() + i * dim, dim), p(branch_.data() + i * dim, dim);
    k::embed_i16({model_.pos_embedding.data() + i * dim, dim}, model_.pos_rq[i], p);
    k::add_i16(x, p, x);
  }
  observe(-1, n);
  run_layers(0, n);
}

void CpuBackend::run_layers(std::size_t p0, std::size_t n) {
  for (std::size_t l = 0; l < desc_.layers.size(); ++l) {
    attention_block(l, p0, n);  // x (n, dim) += attention(norm(x)), or norm(x + attention(x))
    ffn_block(l, n);            // x (n, dim) += ffn(norm(x)), or norm(x + ffn(x))
    observe(int(l), n);
  }
  head(n);  // logits (classes) int32 Q.16 of the last position, or of the class token
}

std::vector<std::int8_t> quantize_features(const QuantModel& m, std::span<const float> f) {
  std::vector<std::int8_t> q(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) {
    const double s = m.input_scale[i % m.input_scale.size()];
    const double v = std::round(double(f[i]) / s);  // halves away from zero
    q[i] = static_cast<std::int8_t>(std::clamp(v, -127.0, 127.0));
  }
  return q;
}

void CpuBackend::observe(int layer, std::size_t n) {
  if (residual_observer_) {
    for (std::size_t i = 0; i < n; ++i) {
      residual_observer_(layer, std::span(x_).subspan(i * desc_.dim, desc_.dim));
    }
  }
}

template <typename T>
void CpuBackend::note(std::size_t layer, std::string_view tensor, std::span<const T> v, int bits) {
  if (!saturation_observer_) {
    return;
  }
  const std::int32_t hi = (std::int32_t{1} << (bits - 1)) - 1, lo = -hi - 1;
  const auto at_limit = std::size_t(std::count_if(
      v.begin(), v.end(), [&](T x) { return std::int32_t{x} == hi || std::int32_t{x} == lo; }));
  saturation_observer_(int(layer), tensor, at_limit, v.size());
}

void CpuBackend::embed(std::span<const int> tokens, std::size_t pos) {
  const std::size_t dim = desc_.dim;
  // x (n, dim) int16 = token rows (+ position rows), each requantised into the residual scale
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto token = std::size_t(tokens[i]);
    const std::span<std::int16_t> x(x_.data() + i * dim, dim);
    k::embed_i16({model_.token_embedding.data() + token * dim, dim}, model_.embed_rq[token], x);
    if (desc_.embedding.positions == PositionKind::kLearned) {
      const std::span<std::int16_t> p(branch_.data() + i * dim, dim);
      k::embed_i16({model_.pos_embedding.data() + (pos + i) * dim, dim}, model_.pos_rq[pos + i], p);
      k::add_i16(x, p, x);
    }
  }
  observe(-1, tokens.size());
}

void CpuBackend::attention_block(std::size_t l, std::size_t pos, std::size_t n) {
  const AttentionDesc& a = desc_.layers[l].attention;
  const QuantLayer& L = model_.layers[l];
  const std::size_t dim = desc_.dim, q_dim = a.q_dim();
  block_input(a.norm, L.attn_norm, n);  // xn (n, dim) int8
  note<std::int8_t>(l, "xn", std::span(xn_).first(n * dim), 8);
  qkv(l, pos, n);     // q (n, q_dim); k, v rows pos .. pos + n - 1 of the cache
  attend(l, pos, n);  // att (n, q_dim) int8
  const std::span<std::int32_t> acc(acc_.data(), n * dim);
  k::matmul_i8(std::span(att_).first(n * q_dim), L.wo, acc, n, q_dim, dim);
  k::requantize_i16(acc, L.rq_o, std::span(branch_).first(n * dim));  // int16 residual branch
  note<std::int16_t>(l, "o", std::span(branch_).first(n * dim), 16);
  k::add_i16(std::span(x_).first(n * dim), std::span(branch_).first(n * dim),
             std::span(x_).first(n * dim));
  post_norm(a.norm, L.attn_norm, n);  // x (n, dim) int16
}

void CpuBackend::qkv(std::size_t l, std::size_t pos, std::size_t n) {
  const AttentionDesc& a = desc_.layers[l].attention;
  const QuantLayer& L = model_.layers[l];
  const std::size_t dim = desc_.dim, q_dim = a.q_dim(), kv = a.kv_dim(), hs = a.head_size;
  const auto k_rows = std::span(k_rows_).first(n * kv);
  const auto v_rows = std::span(v_rows_).first(n * kv);
  const auto xn = std::span(xn_).first(n * dim);
  const std::span<std::int32_t> acc_q(acc_.data(), n * q_dim), acc_kv(acc_.data(), n * kv);
  k::matmul_i8(xn, L.wq, acc_q, n, dim, q_dim);  // q (n, q_dim) 12-bit (+ bias)
  k::requantize_bits(acc_q, L.rq_q, std::span(q_).first(n * q_dim), kQkBits);
  k::matmul_i8(xn, L.wk, acc_kv, n, dim, kv);  // k (n, kv_dim) 12-bit
  k::requantize_bits(acc_kv, L.rq_k, k_rows, kQkBits);
  k::matmul_i8(xn, L.wv, acc_kv, n, dim, kv);  // v (n, kv_dim) int8
  k::requantize_i8(acc_kv, L.rq_v, v_rows);
  note<std::int16_t>(l, "q", std::span(q_).first(n * q_dim), kQkBits);
  note<std::int16_t>(l, "k", k_rows, kQkBits);
  note<std::int8_t>(l, "v", v_rows, 8);
  const std::size_t half = hs / 2;
  for (std::size_t i = 0; a.rope && i < n; ++i) {  // each row at its own position
    const std::span<const std::int16_t> cos(model_.rope_cos.data() + (pos + i) * half, half);
    const std::span<const std::int16_t> sin(model_.rope_sin.data() + (pos + i) * half, half);
    k::rope_i16(std::span(q_).subspan(i * q_dim, q_dim), hs, cos, sin);
    k::rope_i16(k_rows.subspan(i * kv, kv), hs, cos, sin);
  }
  store_kv(l, pos, n);
}

void CpuBackend::store_kv(std::size_t l, std::size_t pos, std::size_t n) {
  // k_rows, v_rows (n, kv_dim) -> positions pos .. pos + n - 1 of the channel-major caches
  const std::size_t kv = desc_.layers[l].attention.kv_dim(), seq = desc_.embedding.max_positions;
  std::int16_t* kc = key_cache_.data() + l * kv * seq + pos;
  std::int16_t* vc = value_cache_.data() + l * kv * seq + pos;
  for (std::size_t c = 0; c < kv; ++c) {
    for (std::size_t i = 0; i < n; ++i) {
      kc[c * seq + i] = k_rows_[i * kv + c];
      vc[c * seq + i] = v_rows_[i * kv + c];
    }
  }
}

void CpuBackend::attend(std::size_t l, std::size_t pos, std::size_t n) {
  const AttentionDesc& a = desc_.layers[l].attention;
  const QuantLayer& L = model_.layers[l];
  const std::size_t kv = a.kv_dim(), q_dim = a.q_dim(), seq = desc_.embedding.max_positions;
  const std::size_t loff = l * seq * kv;
  const k::AttentionParams ap{a.n_heads, a.n_kv_heads, a.head_size, L.score_rq, L.attn_out_rq,
                              softmax_};
  for (std::size_t i = 0; i < n; ++i) {
    k::AttentionScratch scratch{scores_, exps_, probs_, head_acc_};
    if (capture_ && i + 1 == n) {  // the last position's probabilities
      scratch.capture = {captured_.data() + l * a.n_heads * seq, a.n_heads * seq};
      scratch.capture_stride = seq;
    }
    // causal: positions 0 .. pos + i; no mask: the whole sequence 0 .. n - 1 (pos = 0)
    const std::size_t t_len = a.mask == MaskKind::kNone ? pos + n : pos + i + 1;
    k::attention_cm_i8(std::span(q_).subspan(i * q_dim, q_dim),
                       {key_cache_.data() + loff, kv * seq}, {value_cache_.data() + loff, kv * seq},
                       seq, t_len, ap, scratch, std::span(att_).subspan(i * q_dim, q_dim));
  }
}

void CpuBackend::ffn_block(std::size_t l, std::size_t n) {
  const FfnDesc& f = desc_.layers[l].ffn;
  const QuantLayer& L = model_.layers[l];
  const std::size_t dim = desc_.dim, hidden = f.hidden;
  const std::span<std::int32_t> acc_h(acc_.data(), n * hidden), acc_dim(acc_.data(), n * dim);
  const auto hid = std::span(hid_).first(n * hidden);
  block_input(f.norm, L.ffn_norm, n);  // xn (n, dim) int8
  note<std::int8_t>(l, "xn", std::span(xn_).first(n * dim), 8);
  k::matmul_i8(std::span(xn_).first(n * dim), L.w1, acc_h, n, dim, hidden);
  if (f.kind == FfnKind::kSwiGlu) {
    const auto gate = std::span(gate_).first(n * hidden), up = std::span(up_).first(n * hidden);
    k::requantize_i16(acc_h, L.rq_1, gate);                                  // gate int16
    k::matmul_i8(std::span(xn_).first(n * dim), L.w3, acc_h, n, dim, hidden);
    k::requantize_i16(acc_h, L.rq_3, up);                                    // up int16
    note<std::int16_t>(l, "gate", gate, 16);
    note<std::int16_t>(l, "up", up, 16);
    k::silu_i16(gate, L.silu_in_rq, L.silu_out_rq, gate);                  // silu(gate) int16
    for (std::size_t i = 0; i < n; ++i) {                                    // silu(gate) * up
      k::mul_i8(gate.subspan(i * hidden, hidden), up.subspan(i * hidden, hidden), L.mul_rq,
                hid.subspan(i * hidden, hidden));
    }
  } else {
    k::requantize_i8(acc_h, L.rq_1, hid);                  // up (n, hidden) int8 (+ bias)
    note<std::int8_t>(l, "up", hid, 8);
    k::gelu_i8(hid, L.gelu_in_rq, L.gelu_out_rq, hid);    // gelu(up) int8
  }
  note<std::int8_t>(l, "hidden", hid, 8);
  k::matmul_i8(hid, L.w2, acc_dim, n, hidden, dim);  // down (n, dim) -> int16 residual branch
  k::requantize_i16(acc_dim, L.rq_2, std::span(branch_).first(n * dim));
  note<std::int16_t>(l, "down", std::span(branch_).first(n * dim), 16);
  k::add_i16(std::span(x_).first(n * dim), std::span(branch_).first(n * dim),
             std::span(x_).first(n * dim));
  post_norm(f.norm, L.ffn_norm, n);  // x (n, dim) int16
}

void CpuBackend::head(std::size_t n) {
  // The last position's logits (the class token's, at row 0, when the head reads it): final
  // norm (or the residual itself), classifier.
  const std::size_t dim = desc_.dim, classes = desc_.head.classes;
  const std::size_t last = (desc_.head.reads_first ? 0 : n - 1) * dim;
  const auto xn = std::span(xn_).subspan(last, dim);
  if (desc_.head.has_norm) {
    norm_i8(model_, desc_.head.norm, model_.final_norm, std::span(x_).subspan(last, dim), xn);
  } else {
    residual_i8(model_.final_norm, std::span(x_).subspan(last, dim), xn);
  }
  k::matmul_i8(xn, model_.classifier(), logits_, 1, dim, classes);
  k::requantize_i32(logits_, model_.rq_cls, logits_);  // (classes) int32 Q.16
  // times 2^-16 in double: exact (a power of two, int32 values), the same as ldexp
  const double unit = 1.0 / double(std::int64_t{1} << kLogitFracBits);
  for (std::size_t i = 0; i < classes; ++i) {
    logits_f32_[i] = static_cast<float>(double(logits_[i]) * unit);
  }
}

}  // namespace passim
