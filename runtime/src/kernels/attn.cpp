// SPDX-License-Identifier: Apache-2.0
// Golden attention arithmetic: the two halves of the attn unit (scores, weighted values) and one
// attention layer over the KV cache composed from them and the Softmax.
// RTL twin: rtl/attn/psm_attn.sv (ATTN_SCORE, ATTN_VALUE); the Softmax is
// rtl/softmax/psm_softmax.sv.
#include "passim/kernels/attn.hpp"

#include <algorithm>
#include <cassert>

namespace passim::kernels {

void attn_score_i32(std::span<const std::int16_t> q, std::span<const std::int16_t> k,
                    std::size_t stride, Requant rq, std::span<std::int32_t> scores) {
  const std::size_t len = q.size();
  assert(scores.empty() || k.size() >= (scores.size() - 1) * stride + len);
  for (std::size_t t = 0; t < scores.size(); ++t) {
    const std::int16_t* kt = k.data() + t * stride;
    // 16-bit x 16-bit products are exact in int32; the sum wraps like the accumulator.
    std::uint32_t acc = 0;
    for (std::size_t i = 0; i < len; ++i) {
      acc += static_cast<std::uint32_t>(std::int32_t{q[i]} * std::int32_t{kt[i]});
    }
    scores[t] = requantize(static_cast<std::int32_t>(acc), rq, 32);
  }
}

template <typename V>
void attn_value_i8(std::span<const std::int16_t> p, std::span<const V> v, std::size_t stride,
                   Requant rq, std::span<std::uint32_t> acc, std::span<std::int8_t> out) {
  const std::size_t len = out.size();
  assert(acc.size() >= len && (p.empty() || v.size() >= (p.size() - 1) * stride + len));
  const auto sum = acc.first(len);
  std::fill(sum.begin(), sum.end(), 0u);
  // Walk the cache row by row (contiguous); integer sums do not depend on the order.
  for (std::size_t t = 0; t < p.size(); ++t) {
    const V* vt = v.data() + t * stride;
    const std::int32_t pt = p[t];
    for (std::size_t i = 0; i < len; ++i) {
      sum[i] += static_cast<std::uint32_t>(pt * std::int32_t{vt[i]});
    }
  }
  for (std::size_t i = 0; i < len; ++i) {
    out[i] = static_cast<std::int8_t>(requantize(static_cast<std::int32_t>(sum[i]), rq, 8));
  }
}

template void attn_value_i8<std::int8_t>(std::span<const std::int16_t>,
                                         std::span<const std::int8_t>, std::size_t, Requant,
                                         std::span<std::uint32_t>, std::span<std::int8_t>);
template void attn_value_i8<std::int16_t>(std::span<const std::int16_t>,
                                          std::span<const std::int16_t>, std::size_t, Requant,
                                          std::span<std::uint32_t>, std::span<std::int8_t>);

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
    const std::size_t kv_off = (h / group) * hs;  // this head's KV head
    attn_score_i32(q.subspan(h * hs, hs), k_cache.subspan(kv_off), kv_dim, p.score_rq[h],
                   scores);
    softmax_row_i16(scores, p.softmax, scratch.exps, probs);
    if (!scratch.capture.empty()) {
      assert(scratch.capture.size() >= (h + 1) * scratch.capture_stride);
      std::copy(probs.begin(), probs.end(),
                scratch.capture.begin() + std::ptrdiff_t(h * scratch.capture_stride));
    }
    attn_value_i8<std::int8_t>(probs, v_cache.subspan(kv_off), kv_dim, p.out_rq[h],
                               scratch.head_acc, out.subspan(h * hs, hs));
  }
}

}  // namespace passim::kernels
