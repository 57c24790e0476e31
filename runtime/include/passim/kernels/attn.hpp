// SPDX-License-Identifier: Apache-2.0
/// \file The golden attention arithmetic: scores and weighted values (the attn unit), and one
/// attention layer over the KV cache composed from them and the Softmax.
/// A kernel here throws std::invalid_argument naming itself and the operand when an operand
/// has the wrong size (passim/kernels/require.hpp), in every build type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "passim/fixed_point.hpp"
#include "passim/kernels/softmax.hpp"

namespace passim::kernels {

/// ATTN_SCORE for one head: s[t] = requantize(sum_i q[i] * k_t[i], rq, 32) for t < t_len, with
/// k_t = k[t * stride, t * stride + len). 16-bit operands (kQkBits-bit queries and keys), exact
/// int32 products, a sum that wraps like the int32 accumulator. RTL twin: rtl/attn/psm_attn.sv
/// (ATTN_SCORE).
///   q: (len) int16   k: (t_len rows at `stride`) int16   scores: (t_len) int32 Q.10
void attn_score_i32(std::span<const std::int16_t> q, std::span<const std::int16_t> k,
                    std::size_t stride, Requant rq, std::span<std::int32_t> scores);

/// ATTN_VALUE for one head: out[i] = requantize(sum_t p[t] * v_t[i], rq, 8) for i < len, with
/// v_t = v[t * stride, t * stride + len); int16 Q0.15 probabilities, int8 values (held in int8
/// or, as in the vector scratchpad's lanes, int16), a sum that wraps like the int32 accumulator.
/// RTL twin: rtl/attn/psm_attn.sv (ATTN_VALUE).
///   p: (t_len) int16   v: (t_len rows at `stride`)   acc: (len) scratch   out: (len) int8
template <typename V>
void attn_value_i8(std::span<const std::int16_t> p, std::span<const V> v, std::size_t stride,
                   Requant rq, std::span<std::uint32_t> acc, std::span<std::int8_t> out);

/// Shapes and requantisation of one attention layer over the KV cache.
struct AttentionParams {
  std::size_t n_heads = 0;
  std::size_t n_kv_heads = 0;  ///< grouped-query attention: n_heads / n_kv_heads queries per KV head
  std::size_t head_size = 0;
  std::span<const Requant> score_rq;  ///< (n_heads) q.k accumulator -> Q.10 logits
  std::span<const Requant> out_rq;    ///< (n_heads) sum(p * v) accumulator -> int8 output
  SoftmaxOptions softmax = {};        ///< three-pass (default) or online Softmax
};

/// Causal attention for one query position over `t_len` cached positions (0 .. pos).
/// Queries and keys are kQkBits-bit values in int16 (so q . k over a head of up to 511
/// channels fits int32; 512 channels of -2048 * -2048 sum to exactly 2^31 and wrap);
/// probabilities are Q0.15, so sum_t p[t] * v_t <= 2^15 * 2^7 never overflows; values and the
/// output are int8.
/// Per head h (KV head h / (n_heads / n_kv_heads)):
///   s[t] = requantize(q_h . k_t, score_rq[h], 32); p = softmax_row_i16(s, softmax);
///   out_h[i] = requantize(sum_t p[t] * v_t[i], out_rq[h], 8).
/// Positions after `pos` are never read, which is the causal mask.
/// Per head it is `attn_score_i32`, `softmax_row_i16` and `attn_value_i8`: the accelerator runs
/// the same three steps as ATTN_SCORE, SOFTMAX and ATTN_VALUE instructions (docs/isa.md).
///   q: (n_heads * head_size) int16    k_cache: (>= t_len, kv_dim) int16 row-major
///   v_cache: (>= t_len, kv_dim) int8 row-major
///   scores: (t_len) int32 scratch  e: (t_len) scratch  probs: (t_len) int16 scratch
///   head_acc: (head_size) scratch
///   out: (n_heads * head_size) int8
struct AttentionScratch {
  std::span<std::int32_t> scores;
  std::span<std::uint32_t> exps;
  std::span<std::int16_t> probs;
  std::span<std::uint32_t> head_acc;  ///< (head_size) value accumulators
  /// Optional (n_heads, capture_stride) output of every head's probabilities (tests, tools).
  std::span<std::int16_t> capture = {};
  std::size_t capture_stride = 0;
};
void attention_i8(std::span<const std::int16_t> q, std::span<const std::int16_t> k_cache,
                  std::span<const std::int8_t> v_cache, std::size_t t_len,
                  const AttentionParams& p, const AttentionScratch& scratch,
                  std::span<std::int8_t> out);

/// attention_i8 over channel-major caches, the host's layout: channel c of position t at
/// k_cm[c * ld + t] (and v_cm likewise), so that the score and value sums run over contiguous
/// positions and vectorise. The same scores, probabilities (and capture) and outputs as
/// attention_i8 on the row-major caches, bit for bit: every sum is the same set of int32
/// products added with wrap-around, and integer sums do not depend on the order.
///   q: (n_heads * head_size) int16     k_cm: (kv_dim, ld) int16 kQkBits, positions < t_len set
///   v_cm: (kv_dim, ld) int16 holding int8 values    ld >= t_len
///   scratch: as attention_i8 (`exps` also holds the (t_len) score accumulators)
///   out: (n_heads * head_size) int8
void attention_cm_i8(std::span<const std::int16_t> q, std::span<const std::int16_t> k_cm,
                     std::span<const std::int16_t> v_cm, std::size_t ld, std::size_t t_len,
                     const AttentionParams& p, const AttentionScratch& scratch,
                     std::span<std::int8_t> out);

}  // namespace passim::kernels
