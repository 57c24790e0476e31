// SPDX-License-Identifier: Apache-2.0
// Golden attention arithmetic: the two halves of the attn unit (scores, weighted values) and one
// attention layer over the KV cache composed from them and the Softmax, over the row-major cache
// (as the accelerator holds it) and over the host's channel-major cache.
// RTL twin: rtl/attn/psm_attn.sv (ATTN_SCORE, ATTN_VALUE); the Softmax is
// rtl/softmax/psm_softmax.sv.
#include "passim/kernels/attn.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "passim/kernels/require.hpp"

namespace passim::kernels {

void attn_score_i32(std::span<const std::int16_t> q, std::span<const std::int16_t> k,
                    std::size_t stride, Requant rq, std::span<std::int32_t> scores) {
  const std::size_t len = q.size();
  if (!scores.empty()) {
    require_at_least("attn_score_i32", "k", (scores.size() - 1) * stride + len, k.size());
  }
  for (std::size_t t = 0; t < scores.size(); ++t) {
    const std::int16_t* kt = k.data() + t * stride;
    // 16-bit x 16-bit products are exact in int32; the sum wraps like the accumulator.
    std::uint32_t acc = 0;
    for (std::size_t i = 0; i < len; ++i) {
      acc += static_cast<std::uint32_t>(std::int32_t{q[i]} * std::int32_t{kt[i]});
    }
    scores[t] = requantize_result(static_cast<std::int32_t>(acc), rq, 32);
  }
}

template <typename V>
void attn_value_i8(std::span<const std::int16_t> p, std::span<const V> v, std::size_t stride,
                   Requant rq, std::span<std::uint32_t> acc, std::span<std::int8_t> out) {
  const std::size_t len = out.size();
  require_at_least("attn_value_i8", "acc", len, acc.size());
  if (!p.empty()) {
    require_at_least("attn_value_i8", "v", (p.size() - 1) * stride + len, v.size());
  }
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
    out[i] =
        static_cast<std::int8_t>(requantize_result(static_cast<std::int32_t>(sum[i]), rq, 8));
  }
}

template void attn_value_i8<std::int8_t>(std::span<const std::int16_t>,
                                         std::span<const std::int8_t>, std::size_t, Requant,
                                         std::span<std::uint32_t>, std::span<std::int8_t>);
template void attn_value_i8<std::int16_t>(std::span<const std::int16_t>,
                                          std::span<const std::int16_t>, std::size_t, Requant,
                                          std::span<std::uint32_t>, std::span<std::int8_t>);

namespace {

/// The preconditions shared by attention_i8 and attention_cm_i8: 1 <= t_len, heads that
/// group evenly, one step per head, and room for t_len scores in the scratch rows.
void require_attention(std::string_view kernel, std::span<const std::int16_t> q,
                       std::span<const std::int8_t> out, std::size_t t_len,
                       const AttentionParams& p, const AttentionScratch& scratch) {
  require_at_least(kernel, "t_len", 1, t_len);
  require_at_least(kernel, "head_size", 1, p.head_size);
  require(p.n_kv_heads >= 1 && p.n_heads % p.n_kv_heads == 0, kernel,
          "n_heads: expected a multiple of n_kv_heads = " + std::to_string(p.n_kv_heads) +
              ", found " + std::to_string(p.n_heads));
  require_equal(kernel, "score_rq", p.n_heads, p.score_rq.size());
  require_equal(kernel, "out_rq", p.n_heads, p.out_rq.size());
  require_at_least(kernel, "q", p.n_heads * p.head_size, q.size());
  require_at_least(kernel, "out", p.n_heads * p.head_size, out.size());
  require_at_least(kernel, "scratch.scores", t_len, scratch.scores.size());
  require_at_least(kernel, "scratch.exps", t_len, scratch.exps.size());
  require_at_least(kernel, "scratch.probs", t_len, scratch.probs.size());
  if (!scratch.capture.empty()) {
    require_at_least(kernel, "scratch.capture", (p.n_heads - 1) * scratch.capture_stride + t_len,
                     scratch.capture.size());
  }
}

}  // namespace

void attention_i8(std::span<const std::int16_t> q, std::span<const std::int16_t> k_cache,
                  std::span<const std::int8_t> v_cache, std::size_t t_len,
                  const AttentionParams& p, const AttentionScratch& scratch,
                  std::span<std::int8_t> out) {
  require_attention("attention_i8", q, out, t_len, p, scratch);
  const std::size_t hs = p.head_size;
  const std::size_t kv_dim = p.n_kv_heads * hs;
  const std::size_t group = p.n_heads / p.n_kv_heads;
  require_at_least("attention_i8", "scratch.head_acc", hs, scratch.head_acc.size());
  require_at_least("attention_i8", "k_cache", t_len * kv_dim, k_cache.size());
  require_at_least("attention_i8", "v_cache", t_len * kv_dim, v_cache.size());
  const auto scores = scratch.scores.first(t_len);
  const auto probs = scratch.probs.first(t_len);
  for (std::size_t h = 0; h < p.n_heads; ++h) {
    const std::size_t kv_off = (h / group) * hs;  // this head's KV head
    attn_score_i32(q.subspan(h * hs, hs), k_cache.subspan(kv_off), kv_dim, p.score_rq[h],
                   scores);
    softmax_row_i16(scores, p.softmax, scratch.exps, probs);
    if (!scratch.capture.empty()) {
      std::copy(probs.begin(), probs.end(),
                scratch.capture.begin() + std::ptrdiff_t(h * scratch.capture_stride));
    }
    attn_value_i8<std::int8_t>(probs, v_cache.subspan(kv_off), kv_dim, p.out_rq[h],
                               scratch.head_acc, out.subspan(h * hs, hs));
  }
}

namespace {

/// s[t] = requantize(acc[t], rq, 32); returns max(s). The step is monotone in its input
/// (mult >= 0), so max(s) is the step of max(acc), and when neither end of the accumulator
/// range saturates no element does: then the clamp is left out of the per-element loop.
///   acc: (t_len) wrapped int32 sums   scores: (t_len) int32 Q.10
std::int32_t requantize_scores(std::span<const std::uint32_t> acc, Requant rq,
                               std::span<std::int32_t> scores) {
  std::int32_t lo = std::numeric_limits<std::int32_t>::max();
  std::int32_t hi = std::numeric_limits<std::int32_t>::min();
  for (const std::uint32_t a : acc) {
    lo = std::min(lo, static_cast<std::int32_t>(a));
    hi = std::max(hi, static_cast<std::int32_t>(a));
  }
  const auto unclamped = [rq](std::int32_t x) {
    return round_shift((std::int64_t{x} + rq.bias) * rq.mult, rq.shift);
  };
  if (unclamped(lo) >= std::numeric_limits<std::int32_t>::min() &&
      unclamped(hi) <= std::numeric_limits<std::int32_t>::max()) {
    for (std::size_t t = 0; t < acc.size(); ++t) {
      scores[t] = static_cast<std::int32_t>(unclamped(static_cast<std::int32_t>(acc[t])));
    }
  } else {
    for (std::size_t t = 0; t < acc.size(); ++t) {
      scores[t] = requantize_result(static_cast<std::int32_t>(acc[t]), rq, 32);
    }
  }
  return requantize(hi, rq, 32);
}

/// acc[t] += sum_j q[j] * k[j * ld + t] over 8 channels (wrapping): one pass over the
/// positions keeps the eight products of each position in registers.
void add_8_channels(const std::int16_t* q, const std::int16_t* k, std::size_t ld,
                    std::span<std::uint32_t> acc) {
  const std::int32_t q0 = q[0], q1 = q[1], q2 = q[2], q3 = q[3];
  const std::int32_t q4 = q[4], q5 = q[5], q6 = q[6], q7 = q[7];
  const std::int16_t *k0 = k, *k1 = k + ld, *k2 = k + 2 * ld, *k3 = k + 3 * ld;
  const std::int16_t *k4 = k + 4 * ld, *k5 = k + 5 * ld, *k6 = k + 6 * ld, *k7 = k + 7 * ld;
  const auto u = [](std::int32_t prod) { return static_cast<std::uint32_t>(prod); };
  for (std::size_t t = 0; t < acc.size(); ++t) {
    acc[t] += u(q0 * k0[t]) + u(q1 * k1[t]) + u(q2 * k2[t]) + u(q3 * k3[t]) + u(q4 * k4[t]) +
              u(q5 * k5[t]) + u(q6 * k6[t]) + u(q7 * k7[t]);
  }
}

/// One head's scores from a channel-major key block: acc[t] = sum_i q[i] * k[i * ld + t]
/// (wrapping), then s[t] = requantize(acc[t], rq, 32). Returns max(s).
///   q: (hs) int16   k: (hs rows at ld) int16   acc: (t_len) scratch   scores: (t_len) int32
std::int32_t score_cm(const std::int16_t* q, const std::int16_t* k, std::size_t hs,
                      std::size_t ld, Requant rq, std::span<std::uint32_t> acc,
                      std::span<std::int32_t> scores) {
  const std::size_t t_len = scores.size();
  const auto a = acc.first(t_len);
  std::fill(a.begin(), a.end(), 0u);
  std::size_t c = 0;
  for (; c + 8 <= hs; c += 8) {
    add_8_channels(q + c, k + c * ld, ld, a);
  }
  for (; c < hs; ++c) {
    const std::int32_t qc = q[c];
    const std::int16_t* kc = k + c * ld;
    for (std::size_t t = 0; t < t_len; ++t) {
      a[t] += static_cast<std::uint32_t>(qc * std::int32_t{kc[t]});
    }
  }
  return requantize_scores(a, rq, scores);
}

/// One head's weighted values from a channel-major value block:
/// out[i] = requantize(sum_t p[t] * v[i * ld + t], rq, 8) (the sum wrapping).
///   p: (t_len) int16 Q0.15   v: (hs rows at ld) int16   out: (hs) int8
void value_cm(std::span<const std::int16_t> p, const std::int16_t* v, std::size_t ld,
              Requant rq, std::span<std::int8_t> out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int16_t* vi = v + i * ld;
    std::uint32_t acc = 0;
    for (std::size_t t = 0; t < p.size(); ++t) {
      acc += static_cast<std::uint32_t>(std::int32_t{p[t]} * std::int32_t{vi[t]});
    }
    out[i] = static_cast<std::int8_t>(requantize_result(static_cast<std::int32_t>(acc), rq, 8));
  }
}

}  // namespace

void attention_cm_i8(std::span<const std::int16_t> q, std::span<const std::int16_t> k_cm,
                     std::span<const std::int16_t> v_cm, std::size_t ld, std::size_t t_len,
                     const AttentionParams& p, const AttentionScratch& scratch,
                     std::span<std::int8_t> out) {
  require_attention("attention_cm_i8", q, out, t_len, p, scratch);
  require_at_least("attention_cm_i8", "ld", t_len, ld);
  const std::size_t hs = p.head_size;
  const std::size_t group = p.n_heads / p.n_kv_heads;
  require_at_least("attention_cm_i8", "k_cm", p.n_kv_heads * hs * ld, k_cm.size());
  require_at_least("attention_cm_i8", "v_cm", p.n_kv_heads * hs * ld, v_cm.size());
  const auto scores = scratch.scores.first(t_len);
  const auto probs = scratch.probs.first(t_len);
  for (std::size_t h = 0; h < p.n_heads; ++h) {
    const std::size_t kv_off = (h / group) * hs * ld;  // this head's KV head: hs channel rows
    const std::int32_t m = score_cm(q.data() + h * hs, k_cm.data() + kv_off, hs, ld,
                                    p.score_rq[h], scratch.exps, scores);
    if (p.softmax.mode == SoftmaxMode::kThreePass) {
      softmax_max_i16(scores, m, scratch.exps, probs);
    } else {
      softmax_row_i16(scores, p.softmax, scratch.exps, probs);
    }
    if (!scratch.capture.empty()) {
      std::copy(probs.begin(), probs.end(),
                scratch.capture.begin() + std::ptrdiff_t(h * scratch.capture_stride));
    }
    value_cm(probs, v_cm.data() + kv_off, ld, p.out_rq[h], out.subspan(h * hs, hs));
  }
}

}  // namespace passim::kernels
