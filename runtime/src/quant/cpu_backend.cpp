// SPDX-License-Identifier: Apache-2.0
// Integer forward pass built from the golden kernels.
#include "passim/quant/cpu_backend.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

#include "passim/kernels/matmul.hpp"
#include "passim/kernels/rmsnorm.hpp"
#include "passim/kernels/layernorm.hpp"
#include "passim/kernels/batchnorm.hpp"
#include "passim/kernels/softmax.hpp"
#include "passim/kernels/silu.hpp"
#include "passim/kernels/gelu.hpp"
#include "passim/kernels/rope.hpp"
#include "passim/kernels/eltwise.hpp"
#include "passim/kernels/attn.hpp"

namespace passim {

namespace k = kernels;

namespace {
kernels::RmsNormParams norm_params(const QuantNorm& n, std::uint64_t eps) {
  return {n.gain, n.frac_bits, eps};
}
}  // namespace

void gpt_norm_i8(const QuantModel& m, const QuantNorm& n, std::span<const std::int16_t> x,
                 std::span<std::int8_t> out) {
  if (m.config.norm == NormKind::kLayer) {
    k::layernorm_i8(x, {n.gain, n.bias, n.frac_bits, m.norm_eps}, out);
  } else if (m.batchnorm == BatchNormMode::kUnfused) {
    k::batchnorm_i8(x, {n.gain, n.bias, n.rq}, out);
  } else {
    for (std::size_t i = 0; i < x.size(); ++i) {  // folded: the DMA's int16 -> int8 step
      out[i] = static_cast<std::int8_t>(requantize(x[i], n.rq, 8));
    }
  }
}

CpuBackend::CpuBackend(const QuantModel& model, kernels::SoftmaxOptions softmax)
    : model_(model), softmax_(softmax) {
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
  assert(token >= 0 && token < c.vocab_size && pos >= 0 && pos < c.seq_len);
  const auto dim = std::size_t(c.dim);
  last_pos_ = pos;
  if (capture_) {
    captured_.assign(std::size_t(c.n_layers * c.n_heads) * std::size_t(c.seq_len), 0);
  }

  if (c.arch == Arch::kGpt) {
    forward_gpt(token, std::size_t(pos));
    return;
  }
  // x (dim) int16 = embedding row, requantised into the residual scale
  k::embed_i16({model_.token_embedding.data() + std::size_t(token) * dim, dim},
               model_.embed_rq[std::size_t(token)], x_);
  if (residual_observer_) {
    residual_observer_(-1, x_);
  }
  for (std::size_t l = 0; l < model_.layers.size(); ++l) {
    attention_block(l, std::size_t(pos));
    ffn_block(l);
    if (residual_observer_) {
      residual_observer_(int(l), x_);
    }
  }
  // final RMSNorm (dim) int8, classifier (vocab) int32 Q.16
  k::rmsnorm_i8(x_, norm_params(model_.final_norm, model_.norm_eps), xn_);
  const auto vocab = std::size_t(c.vocab_size);
  k::matmul_i8(xn_, model_.classifier(), logits_, 1, dim, vocab);
  k::requantize_i32(logits_, model_.rq_cls, logits_);
  for (std::size_t i = 0; i < vocab; ++i) {
    logits_f32_[i] = static_cast<float>(std::ldexp(double(logits_[i]), -kLogitFracBits));
  }
}

void CpuBackend::attention_block(std::size_t l, std::size_t pos) {
  const ModelConfig& c = model_.config;
  const QuantLayer& L = model_.layers[l];
  const auto dim = std::size_t(c.dim), kv = c.kv_dim(), hs = c.head_size();
  const std::size_t half = hs / 2;
  const std::size_t loff = l * std::size_t(c.seq_len) * kv;
  const std::span<std::int16_t> k_row(key_cache_.data() + loff + pos * kv, kv);
  const std::span<std::int8_t> v_row(value_cache_.data() + loff + pos * kv, kv);
  const std::span<std::int32_t> acc_dim(acc_.data(), dim);
  const std::span<std::int32_t> acc_kv(acc_.data(), kv);

  k::rmsnorm_i8(x_, norm_params(L.attn_norm, model_.norm_eps), xn_);  // (dim) int8
  k::matmul_i8(xn_, L.wq, acc_dim, 1, dim, dim);                      // q (dim) 12-bit
  k::requantize_bits(acc_dim, L.rq_q, q_, kQkBits);
  k::matmul_i8(xn_, L.wk, acc_kv, 1, dim, kv);                        // k (kv_dim) 12-bit
  k::requantize_bits(acc_kv, L.rq_k, k_row, kQkBits);
  k::matmul_i8(xn_, L.wv, acc_kv, 1, dim, kv);                        // v (kv_dim)
  k::requantize_i8(acc_kv, L.rq_v, v_row);
  const std::span<const std::int16_t> cos(model_.rope_cos.data() + pos * half, half);
  const std::span<const std::int16_t> sin(model_.rope_sin.data() + pos * half, half);
  k::rope_i16(q_, hs, cos, sin);
  k::rope_i16(k_row, hs, cos, sin);

  const k::AttentionParams ap{
      std::size_t(c.n_heads), std::size_t(c.n_kv_heads), hs, L.score_rq, L.attn_out_rq, softmax_};
  const std::size_t t_len = pos + 1;
  k::AttentionScratch scratch{scores_, exps_, probs_, head_acc_};
  if (capture_) {
    scratch.capture = {captured_.data() + l * std::size_t(c.n_heads) * std::size_t(c.seq_len),
                       std::size_t(c.n_heads) * std::size_t(c.seq_len)};
    scratch.capture_stride = std::size_t(c.seq_len);
  }
  k::attention_i8(q_, {key_cache_.data() + loff, t_len * kv},
                  {value_cache_.data() + loff, t_len * kv}, t_len, ap, scratch,
                  att_);  // att (dim) int8
  k::matmul_i8(att_, L.wo, acc_dim, 1, dim, dim);  // (dim) -> int16 residual branch
  k::requantize_i16(acc_dim, L.rq_o, branch_);
  k::add_i16(x_, branch_, x_);
}

void CpuBackend::ffn_block(std::size_t l) {
  const ModelConfig& c = model_.config;
  const QuantLayer& L = model_.layers[l];
  const auto dim = std::size_t(c.dim), hidden = std::size_t(c.hidden_dim);
  const std::span<std::int32_t> acc_h(acc_.data(), hidden);
  const std::span<std::int32_t> acc_dim(acc_.data(), dim);

  k::rmsnorm_i8(x_, norm_params(L.ffn_norm, model_.norm_eps), xn_);  // (dim) int8
  k::matmul_i8(xn_, L.w1, acc_h, 1, dim, hidden);                    // gate (hidden) int16
  k::requantize_i16(acc_h, L.rq_1, gate_);
  k::matmul_i8(xn_, L.w3, acc_h, 1, dim, hidden);                    // up (hidden) int16
  k::requantize_i16(acc_h, L.rq_3, up_);
  k::silu_i16(gate_, L.silu_in_rq, L.silu_out_rq, gate_);           // silu(gate) int16
  k::mul_i8(gate_, up_, L.mul_rq, hid_);                            // silu(gate) * up, int8
  k::matmul_i8(hid_, L.w2, acc_dim, 1, hidden, dim);                // down (dim)
  k::requantize_i16(acc_dim, L.rq_2, branch_);
  k::add_i16(x_, branch_, x_);
}

void CpuBackend::forward_gpt(int token, std::size_t pos) {
  const ModelConfig& c = model_.config;
  const auto dim = std::size_t(c.dim), hidden = std::size_t(c.hidden_dim);
  const auto vocab = std::size_t(c.vocab_size), hs = c.head_size();
  const std::span<std::int32_t> acc_dim(acc_.data(), dim);
  const std::span<std::int32_t> acc_h(acc_.data(), hidden);
  // x (dim) int16 = token row + position row, each requantised into the residual scale
  k::embed_i16({model_.token_embedding.data() + std::size_t(token) * dim, dim},
               model_.embed_rq[std::size_t(token)], x_);
  k::embed_i16({model_.pos_embedding.data() + pos * dim, dim}, model_.pos_rq[pos], branch_);
  k::add_i16(x_, branch_, x_);
  if (residual_observer_) {
    residual_observer_(-1, x_);
  }
  for (std::size_t l = 0; l < model_.layers.size(); ++l) {
    const QuantLayer& L = model_.layers[l];
    const std::size_t loff = l * std::size_t(c.seq_len) * dim;
    const std::span<std::int16_t> k_row(key_cache_.data() + loff + pos * dim, dim);
    const std::span<std::int8_t> v_row(value_cache_.data() + loff + pos * dim, dim);
    gpt_norm_i8(model_, L.attn_norm, x_, xn_);                     // (dim) int8
    k::matmul_i8(xn_, L.wq, acc_dim, 1, dim, dim);                  // q (dim) 12-bit, + bias
    k::requantize_bits(acc_dim, L.rq_q, q_, kQkBits);
    k::matmul_i8(xn_, L.wk, acc_dim, 1, dim, dim);                  // k (dim) 12-bit
    k::requantize_bits(acc_dim, L.rq_k, k_row, kQkBits);
    k::matmul_i8(xn_, L.wv, acc_dim, 1, dim, dim);                  // v (dim) int8
    k::requantize_i8(acc_dim, L.rq_v, v_row);
    const k::AttentionParams ap{std::size_t(c.n_heads), std::size_t(c.n_heads), hs, L.score_rq,
                                L.attn_out_rq, softmax_};
    const std::size_t t_len = pos + 1;
    k::AttentionScratch scratch{scores_, exps_, probs_, head_acc_};
    if (capture_) {
      scratch.capture = {captured_.data() + l * std::size_t(c.n_heads) * std::size_t(c.seq_len),
                         std::size_t(c.n_heads) * std::size_t(c.seq_len)};
      scratch.capture_stride = std::size_t(c.seq_len);
    }
    k::attention_i8(q_, {key_cache_.data() + loff, t_len * dim},
                    {value_cache_.data() + loff, t_len * dim}, t_len, ap, scratch, att_);
    k::matmul_i8(att_, L.wo, acc_dim, 1, dim, dim);
    k::requantize_i16(acc_dim, L.rq_o, branch_);
    k::add_i16(x_, branch_, x_);

    gpt_norm_i8(model_, L.ffn_norm, x_, xn_);
    k::matmul_i8(xn_, L.w1, acc_h, 1, dim, hidden);                 // up (hidden) int8, + bias
    k::requantize_i8(acc_h, L.rq_1, hid_);
    k::gelu_i8(hid_, L.gelu_in_rq, L.gelu_out_rq, hid_);            // gelu(up) int8
    k::matmul_i8(hid_, L.w2, acc_dim, 1, hidden, dim);              // down (dim) + bias
    k::requantize_i16(acc_dim, L.rq_2, branch_);
    k::add_i16(x_, branch_, x_);
    if (residual_observer_) {
      residual_observer_(int(l), x_);
    }
  }
  gpt_norm_i8(model_, model_.final_norm, x_, xn_);
  k::matmul_i8(xn_, model_.classifier(), logits_, 1, dim, vocab);
  k::requantize_i32(logits_, model_.rq_cls, logits_);
  for (std::size_t i = 0; i < vocab; ++i) {
    logits_f32_[i] = static_cast<float>(std::ldexp(double(logits_[i]), -kLogitFracBits));
  }
}

}  // namespace passim
