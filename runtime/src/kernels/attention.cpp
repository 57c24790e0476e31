// SPDX-License-Identifier: Apache-2.0
// Golden causal attention of one query position over the int8 KV cache.
// It is a composition of the matmul, requantise and Softmax twins; the accelerator runs the
// same steps as separate instructions (rtl/vector/psm_attn.sv, rtl/vector/psm_softmax.sv).
#include <algorithm>
#include <cassert>

#include "passim/kernels.hpp"

namespace passim::kernels {

void attention_i8(std::span<const std::int16_t> q, std::span<const std::int16_t> k_cache,
                  std::span<const std::int8_t> v_cache, std::size_t t_len,
                  const AttentionParams& p, const AttentionScratch& scratch,
                  std::span<std::int8_t> out) {
  const std::size_t hs = p.head_size;
  const std::size_t kv_dim = p.n_kv_heads * hs;
  const std::size_t group = p.n_heads / p.n_kv_heads;
  assert(t_len >= 1 && p.n_heads % p.n_kv_heads == 0 && scratch.head_acc.size() >= hs);
  assert(p.score_rq.size() == p.n_heads && p.out_rq.size() == p.n_heads);
  assert(q.size() >= p.n_heads * hs && out.size() >= p.n_heads * hs);
  assert(k_cache.size() >= t_len * kv_dim && v_cache.size() >= t_len * kv_dim);
  assert(scratch.scores.size() >= t_len && scratch.exps.size() >= t_len &&
         scratch.probs.size() >= t_len);
  const auto scores = scratch.scores.first(t_len);
  const auto probs = scratch.probs.first(t_len);
  for (std::size_t h = 0; h < p.n_heads; ++h) {
    const std::int16_t* qh = q.data() + h * hs;
    const std::size_t kv_off = (h / group) * hs;
    // Scores: q . k_t, 12-bit x 12-bit products in wrapping int32, then to Q.10 logits.
    for (std::size_t t = 0; t < t_len; ++t) {
      const std::int16_t* kt = k_cache.data() + t * kv_dim + kv_off;
      std::uint32_t acc = 0;
      for (std::size_t i = 0; i < hs; ++i) {
        acc += static_cast<std::uint32_t>(std::int32_t{qh[i]} * std::int32_t{kt[i]});
      }
      scores[t] = requantize(static_cast<std::int32_t>(acc), p.score_rq[h], 32);
    }
    softmax_row_i16(scores, p.softmax, scratch.exps, probs);
    if (!scratch.capture.empty()) {
      assert(scratch.capture.size() >= (h + 1) * scratch.capture_stride);
      std::copy(probs.begin(), probs.end(), scratch.capture.begin() +
                                                std::ptrdiff_t(h * scratch.capture_stride));
    }
    // Weighted sum of values: Q0.15 probabilities times int8 values. Walk the cache row by
    // row (contiguous); integer sums do not depend on the order.
    const auto acc = scratch.head_acc.first(hs);
    std::fill(acc.begin(), acc.end(), 0u);
    for (std::size_t t = 0; t < t_len; ++t) {
      const std::int8_t* vt = v_cache.data() + t * kv_dim + kv_off;
      const std::int32_t pt = probs[t];
      for (std::size_t i = 0; i < hs; ++i) {
        acc[i] += static_cast<std::uint32_t>(pt * std::int32_t{vt[i]});
      }
    }
    for (std::size_t i = 0; i < hs; ++i) {
      out[h * hs + i] =
          static_cast<std::int8_t>(requantize(static_cast<std::int32_t>(acc[i]), p.out_rq[h], 8));
    }
  }
}

}  // namespace passim::kernels
