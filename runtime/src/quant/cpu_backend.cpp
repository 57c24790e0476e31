// SPDX-License-Identifier: Apache-2.0
// Integer forward pass of a model description, built from the golden kernels.
#include "passim/quant/cpu_backend.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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
      for (std::size_t i = 0; i < x.size(); ++i) {  // folded: the DMA's int16 -> int8 step
        out[i] = static_cast<std::int8_t>(requantize(x[i], n.rq, 8));
      }
      return;
  }
}

CpuBackend::CpuBackend(const QuantModel& model, kernels::SoftmaxOptions softmax)
    : model_(model), desc_(describe(model.config)), softmax_(softmax) {
  require_pre_norm_causal(desc_, "cpu backend");
  const ModelConfig& c = model.config;
  const auto dim = std::size_t(c.dim), hidden = std::size_t(c.hidden_dim);
  const auto seq = std::size_t(c.seq_len), vocab = std::size_t(c.vocab_size);
  x_.assign(dim, 0);
  branch_.assign(dim, 0);
  xn_.assign(dim, 0);
  q_.assign(dim, 0);
  att_.assign(dim, 0);
  gate_.assign(hidden, 0);
  up_.assign(hidden, 0);
  hid_.assign(hidden, 0);
  acc_.assign(std::max({dim, hidden, vocab}), 0);
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

void CpuBackend::forward(int token, int pos) {
  const ModelConfig& c = model_.config;
  check_token_position(c, token, pos);
  last_pos_ = pos;
  if (capture_) {
    captured_.assign(std::size_t(c.n_layers * c.n_heads) * std::size_t(c.seq_len), 0);
  }
  embed(token, std::size_t(pos));  // x (dim) int16
  for (std::size_t l = 0; l < desc_.layers.size(); ++l) {
    attention_block(l, std::size_t(pos));  // x (dim) += attention(norm(x))
    ffn_block(l);                          // x (dim) += ffn(norm(x))
    if (residual_observer_) {
      residual_observer_(int(l), x_);
    }
  }
  head();  // logits (vocab) int32 Q.16
}

void CpuBackend::embed(int token, std::size_t pos) {
  const std::size_t dim = desc_.dim;
  // x (dim) int16 = token row (+ position row), each requantised into the residual scale
  k::embed_i16({model_.token_embedding.data() + std::size_t(token) * dim, dim},
               model_.embed_rq[std::size_t(token)], x_);
  if (desc_.embedding.positions == PositionKind::kLearned) {
    k::embed_i16({model_.pos_embedding.data() + pos * dim, dim}, model_.pos_rq[pos], branch_);
    k::add_i16(x_, branch_, x_);
  }
  if (residual_observer_) {
    residual_observer_(-1, x_);
  }
}

void CpuBackend::attention_block(std::size_t l, std::size_t pos) {
  const AttentionDesc& a = desc_.layers[l].attention;
  const QuantLayer& L = model_.layers[l];
  const std::size_t dim = desc_.dim, q_dim = a.q_dim(), kv = a.kv_dim(), hs = a.head_size;
  const std::size_t loff = l * desc_.embedding.max_positions * kv;
  const std::span<std::int16_t> k_row(key_cache_.data() + loff + pos * kv, kv);
  const std::span<std::int8_t> v_row(value_cache_.data() + loff + pos * kv, kv);
  const std::span<std::int32_t> acc_q(acc_.data(), q_dim), acc_kv(acc_.data(), kv);

  norm_i8(model_, a.norm.kind, L.attn_norm, x_, xn_);  // (dim) int8
  k::matmul_i8(xn_, L.wq, acc_q, 1, dim, q_dim);         // q (q_dim) 12-bit (+ bias)
  k::requantize_bits(acc_q, L.rq_q, q_, kQkBits);
  k::matmul_i8(xn_, L.wk, acc_kv, 1, dim, kv);            // k (kv_dim) 12-bit
  k::requantize_bits(acc_kv, L.rq_k, k_row, kQkBits);
  k::matmul_i8(xn_, L.wv, acc_kv, 1, dim, kv);            // v (kv_dim) int8
  k::requantize_i8(acc_kv, L.rq_v, v_row);
  if (a.rope) {
    const std::size_t half = hs / 2;
    const std::span<const std::int16_t> cos(model_.rope_cos.data() + pos * half, half);
    const std::span<const std::int16_t> sin(model_.rope_sin.data() + pos * half, half);
    k::rope_i16(q_, hs, cos, sin);
    k::rope_i16(k_row, hs, cos, sin);
  }
  const std::size_t t_len = pos + 1;  // causal: positions 0..pos
  attend(l, pos, {key_cache_.data() + loff, t_len * kv}, {value_cache_.data() + loff, t_len * kv});
  const std::span<std::int32_t> acc_dim(acc_.data(), dim);
  k::matmul_i8(att_, L.wo, acc_dim, 1, q_dim, dim);  // (dim) -> int16 residual branch
  k::requantize_i16(acc_dim, L.rq_o, branch_);
  k::add_i16(x_, branch_, x_);
}

void CpuBackend::attend(std::size_t l, std::size_t pos, std::span<const std::int16_t> k_cache,
                        std::span<const std::int8_t> v_cache) {
  const AttentionDesc& a = desc_.layers[l].attention;
  const QuantLayer& L = model_.layers[l];
  const k::AttentionParams ap{a.n_heads, a.n_kv_heads, a.head_size, L.score_rq, L.attn_out_rq,
                              softmax_};
  k::AttentionScratch scratch{scores_, exps_, probs_, head_acc_};
  const std::size_t seq = desc_.embedding.max_positions;
  if (capture_) {
    scratch.capture = {captured_.data() + l * a.n_heads * seq, a.n_heads * seq};
    scratch.capture_stride = seq;
  }
  k::attention_i8(q_, k_cache, v_cache, pos + 1, ap, scratch, att_);  // att (q_dim) int8
}

void CpuBackend::ffn_block(std::size_t l) {
  const FfnDesc& f = desc_.layers[l].ffn;
  const QuantLayer& L = model_.layers[l];
  const std::size_t dim = desc_.dim, hidden = f.hidden;
  const std::span<std::int32_t> acc_h(acc_.data(), hidden), acc_dim(acc_.data(), dim);

  norm_i8(model_, f.norm.kind, L.ffn_norm, x_, xn_);  // (dim) int8
  k::matmul_i8(xn_, L.w1, acc_h, 1, dim, hidden);
  if (f.kind == FfnKind::kSwiGlu) {
    k::requantize_i16(acc_h, L.rq_1, gate_);                  // gate (hidden) int16
    k::matmul_i8(xn_, L.w3, acc_h, 1, dim, hidden);
    k::requantize_i16(acc_h, L.rq_3, up_);                    // up (hidden) int16
    k::silu_i16(gate_, L.silu_in_rq, L.silu_out_rq, gate_);   // silu(gate) int16
    k::mul_i8(gate_, up_, L.mul_rq, hid_);                    // silu(gate) * up, int8
  } else {
    k::requantize_i8(acc_h, L.rq_1, hid_);                    // up (hidden) int8 (+ bias)
    k::gelu_i8(hid_, L.gelu_in_rq, L.gelu_out_rq, hid_);      // gelu(up) int8
  }
  k::matmul_i8(hid_, L.w2, acc_dim, 1, hidden, dim);  // down (dim) -> int16 residual branch
  k::requantize_i16(acc_dim, L.rq_2, branch_);
  k::add_i16(x_, branch_, x_);
}

void CpuBackend::head() {
  const std::size_t dim = desc_.dim, classes = desc_.head.classes;
  norm_i8(model_, desc_.head.norm, model_.final_norm, x_, xn_);  // (dim) int8
  k::matmul_i8(xn_, model_.classifier(), logits_, 1, dim, classes);
  k::requantize_i32(logits_, model_.rq_cls, logits_);  // (classes) int32 Q.16
  for (std::size_t i = 0; i < classes; ++i) {
    logits_f32_[i] = static_cast<float>(std::ldexp(double(logits_[i]), -kLogitFracBits));
  }
}

}  // namespace passim
