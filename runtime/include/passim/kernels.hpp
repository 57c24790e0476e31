// SPDX-License-Identifier: Apache-2.0
/// \file The golden integer kernels. They define, bit for bit, what the accelerator computes;
/// docs/numerics.md states the contract and each kernel names its RTL twin.
///
/// Kernels use integer arithmetic only, never allocate, and check preconditions with `assert`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "passim/fixed_point.hpp"

namespace passim::kernels {

/// out = a * w^T with int32 accumulation that wraps on overflow (two's complement), like the
/// PE accumulators. RTL twin: rtl/matmul/psm_systolic_array.sv.
///   a:   (m, k) row-major int8 activations
///   w:   (n, k) row-major int8 weights, i.e. (out_features, in_features) as stored by PyTorch
///   out: (m, n) row-major int32
void matmul_i8(std::span<const std::int8_t> a, std::span<const std::int8_t> w,
               std::span<std::int32_t> out, std::size_t m, std::size_t k, std::size_t n);

/// Per-column requantisation of an accumulator tile: out[r, c] = requantize(acc[r, c], rq[c]).
/// One rounding step (round half up), then saturation to the output type.
/// RTL twin: rtl/common/psm_requant.sv on the accumulator read path.
///   acc: (m, n) row-major int32   rq: (n)   out: (m, n) row-major
void requantize_i8(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                   std::span<std::int8_t> out);
void requantize_i16(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                    std::span<std::int16_t> out);
void requantize_i32(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                    std::span<std::int32_t> out);
/// As above, saturating to `bits` in [2, 16] (e.g. the 12-bit queries and keys).
void requantize_bits(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                     std::span<std::int16_t> out, int bits);

/// Parameters of an RMSNorm (Zhang & Sennrich 2019) on int16 inputs.
struct RmsNormParams {
  std::span<const std::int16_t> gain;  ///< (n) per-channel g * sqrt(n) / s_out, Q.gain_frac_bits
  int gain_frac_bits = 0;              ///< in [0, 13]
  std::uint64_t eps = 0;               ///< eps * n / s_in^2, added to the sum of squares
};

/// RMSNorm in two passes over the row, int16 in, int8 out.
/// Pass 1: ss = sum(x^2) + eps (int64, exact).
/// Between passes: r = rsqrt_requant(ss, gain_frac_bits) (integer Newton square root).
/// Pass 2: out[i] = requantize(x[i] * gain[i], r, 8).
/// The input scale cancels: out = g * x / rms(x) / s_out.  RTL twin: rtl/norm/psm_rmsnorm.sv.
/// Precondition: sum(x^2) + eps < 2^(70 - 2 * gain_frac_bits) (see rsqrt_requant).
///   x: (n) int16   out: (n) int8
void rmsnorm_i8(std::span<const std::int16_t> x, const RmsNormParams& p,
                std::span<std::int8_t> out);

/// Parameters of a LayerNorm (Ba et al. 2016) on int16 inputs.
struct LayerNormParams {
  std::span<const std::int16_t> gain;  ///< (n) per-channel g * sqrt(n) / s_out, Q.gain_frac_bits
  std::span<const std::int16_t> bias;  ///< (n) per-channel beta / s_out, output LSB
  int gain_frac_bits = 0;              ///< in [0, 13]
  std::uint64_t eps = 0;               ///< eps * n / s_in^2, added to the sum of squared deviations
};

/// LayerNorm in three passes over the row, int16 in, int8 out (units: LSB throughout).
/// Pass 1: m = round(sum(x) / n), half up: floor((2 * sum(x) + n) / (2n)), sum exact in int64.
/// Pass 2: d[i] = x[i] - m (|d| <= 65535), ssd = sum(d^2) + eps (uint64, exact); ssd = 0
///   (a constant row with eps = 0) becomes 1, so a constant row gives d = 0 and out = bias.
/// Between passes: r = rsqrt_requant(ssd, gain_frac_bits) (integer Newton square root,
///   I-BERT Alg. 4, as in `rmsnorm_i8`).
/// Pass 3: out[i] = saturate(requantize(d[i] * gain[i], r, 32) + bias[i], 8); d * gain fits
///   int32, and the bias is an integer, so there is one rounding (half up).
/// The input scale cancels: out = g * (x - mean) / sqrt(var + eps) / s_out + beta / s_out,
/// with the mean rounded to an integer LSB (docs/numerics.md gives the effect).
/// RTL twin: rtl/norm/psm_layernorm.sv (LAYERNORM, `mode_i` = 0).
/// Precondition: ssd < 2^(70 - 2 * gain_frac_bits) (see rsqrt_requant).
///   x: (n) int16, n >= 1   out: (n) int8
void layernorm_i8(std::span<const std::int16_t> x, const LayerNormParams& p,
                  std::span<std::int8_t> out);

/// Parameters of an inference-time BatchNorm (Ioffe & Szegedy 2015, Alg. 2) on int16
/// inputs: the trained running mean and variance are folded into a per-channel affine map,
/// y = a[c] * x + b[c] with a = gamma / sqrt(var + eps), b = beta - a * mean.
struct BatchNormParams {
  std::span<const std::int16_t> gain;  ///< (n) a[c] * s_in / s_out / 2^rq-scale, int16
  std::span<const std::int16_t> bias;  ///< (n) b[c] / s_out, output LSB
  Requant rq;                          ///< per-tensor step applied to x * gain (bias 0)
};

/// BatchNorm in ONE pass over the row, int16 in, int8 out (no statistics of the input):
/// out[i] = saturate(requantize(x[i] * gain[i], rq, 32) + bias[i], 8), |x * gain| <= 2^30.
/// This is exactly pass 3 of `layernorm_i8` with a fixed step instead of 1/sqrt(var).
/// RTL twin: rtl/norm/psm_layernorm.sv (BATCHNORM, `mode_i` = 1).
///   x: (n) int16   out: (n) int8
void batchnorm_i8(std::span<const std::int16_t> x, const BatchNormParams& p,
                  std::span<std::int8_t> out);

/// Softmax in three passes over the row (I-BERT Alg. 2 exponential):
/// Pass 1: m = max(x). Pass 2: e[i] = iexp_q10(x[i] - m), sum = sum(e) (int64).
/// Pass 3: out[i] = (e[i] * recip + 2^31) >> 32 with recip = floor(kProbOne * 2^32 / sum).
/// Output probabilities are int16 in [0, kProbOne] (Q0.15, scale 1/32767); each row sums to
/// kProbOne within ceil(n/2) + 1 LSB (docs/numerics.md).  RTL twin: rtl/vector/psm_softmax.sv.
///   x: (n) int32 logits in Q.10, n >= 1   e_scratch: (n)   out: (n) int16
void softmax_i16(std::span<const std::int32_t> x, std::span<std::uint32_t> e_scratch,
                 std::span<std::int16_t> out);

/// Online Softmax in two passes over the row (Milakov & Gimelshein 2018, "Online normalizer
/// calculation for softmax", Alg. 3), in the lane-parallel order of the hardware: element i
/// belongs to lane i % `lanes`, and each lane walks its elements in row order.
/// Pass 1: lane l keeps a running maximum m_l (from INT32_MIN) and sum s_l (from 0). For each
///   of its elements x: if x > m_l, s_l = exp_rescale(s_l, iexp_q10(c(m_l - x))) + kExpOne and
///   m_l = x; otherwise s_l += iexp_q10(c(x - m_l)), where c(d) = max(d, -2^20) (int64 d).
///   Then the lanes combine in one step: m = max_l m_l and
///   sum = sum_l exp_rescale(s_l, iexp_q10(c(m_l - m))) (exact, so their order is irrelevant).
/// Pass 2: exactly pass 3 of `softmax_i16` with this m and sum (the exponentials recomputed).
/// `lanes` = 1 is the sequential Alg. 3. The output differs from `softmax_i16` only through
/// the sum; docs/numerics.md gives the measured differences.
/// RTL twin: rtl/vector/psm_softmax.sv with `online_i` = 1, `Lanes` = `lanes`.
///   x: (n) int32 logits in Q.10, 1 <= n <= 65535   1 <= lanes <= 64   out: (n) int16
void softmax_online_i16(std::span<const std::int32_t> x, std::size_t lanes,
                        std::span<std::int16_t> out);

/// Which Softmax a row gets: three passes (`softmax_i16`) or online (`softmax_online_i16`).
enum class SoftmaxMode : std::uint8_t { kThreePass, kOnline };

/// A Softmax choice for callers that run whole models (attention, devices, backends).
struct SoftmaxOptions {
  SoftmaxMode mode = SoftmaxMode::kThreePass;
  std::size_t lanes = 1;  ///< kOnline: lanes of its lane-parallel order (the hardware's L)
};

/// `softmax_i16` or `softmax_online_i16`, as `opt` says (`e_scratch` only used by the first).
void softmax_row_i16(std::span<const std::int32_t> x, SoftmaxOptions opt,
                     std::span<std::uint32_t> e_scratch, std::span<std::int16_t> out);

/// SiLU(x) = x * sigmoid(x) on int16 inputs (Elfwing et al. 2018), integer only:
/// t = requantize(x, to_q10, 32) (x as Q.10); e = iexp_q10(-|t|);
/// s = floor(kExpOne * 2^15 / (kExpOne + e)) = sigmoid(|x|) in Q0.15, and 2^15 - s for x < 0;
/// out = requantize(x * s, out_rq, 16) (|x * s| <= 2^30).  RTL twin: rtl/vector/psm_silu.sv.
///   x: (n) int16   out: (n) int16 (may alias x)
void silu_i16(std::span<const std::int16_t> x, Requant to_q10, Requant out_rq,
              std::span<std::int16_t> out);

/// The sigmoid used by `silu_i16`, Q0.15, for an input in Q.10.
[[nodiscard]] std::int32_t sigmoid_q15(std::int32_t x_q10) noexcept;

/// GELU(x) = x * Phi(x) (Hendrycks & Gimpel 2016) on int8 inputs, integer only: I-BERT's
/// i-GELU (Kim et al. 2021, Alg. 2), erf by a second-order polynomial with sign and clipping:
/// t = requantize(x, to_q10, 32) (x as Q.10); out = requantize(x * gelu_phi_q16(t), out_rq, 8)
/// (|x * Phi| <= 2^23). int8 in and out, so that every input can be checked exhaustively and the
/// output feeds a matmul directly. RTL twin: rtl/vector/psm_gelu.sv.
///   x: (n) int8   out: (n) int8 (may alias x)
void gelu_i8(std::span<const std::int8_t> x, Requant to_q10, Requant out_rq,
             std::span<std::int8_t> out);

/// Phi(t) = (1 + erf(t / sqrt 2)) / 2 in Q0.16 (1.0 = 2^16), for t in Q.10:
/// u = min(round_shift(|t| * kGeluInvSqrt2, 16), kGeluClip), w = u - kGeluClip (Q.10, <= 0),
/// E = 2^15 - round_shift(w^2 * kGeluA, 21) (erf(|t| / sqrt 2) in Q0.15, in [3167, 2^15]),
/// Phi = 2^15 + E for t >= 0 and 2^15 - E for t < 0 (so Phi(-t) = 2^16 - Phi(t) for t != 0).
/// RTL twin: `psm_gelu_phi_pkg::gelu_phi_q16` in rtl/vector/psm_gelu_phi_pkg.sv.
[[nodiscard]] std::int32_t gelu_phi_q16(std::int32_t t_q10) noexcept;

/// Rotary position embedding (Su et al. 2021, RoFormer Eq. 34) in place on query/key vectors
/// of `kQkBits`-bit values held in int16: for each head and pair j,
/// (v0, v1) -> (v0*c - v1*s, v0*s + v1*c) with c, s in Q1.14, then round_shift by 14 and
/// saturate to kQkBits. The scale is unchanged.  RTL twin: rtl/vector/psm_rope.sv.
///   vec: (n_heads * head_size)   cos, sin: (head_size / 2) Q1.14 for this position
void rope_i16(std::span<std::int16_t> vec, std::size_t head_size,
              std::span<const std::int16_t> cos, std::span<const std::int16_t> sin);

/// Residual add with int16 saturation; a and b share one scale.
/// RTL twin: rtl/vector/psm_eltwise.sv (ADD).
void add_i16(std::span<const std::int16_t> a, std::span<const std::int16_t> b,
             std::span<std::int16_t> out);

/// Elementwise product of int16 vectors to int8: out[i] = requantize(a[i] * b[i], rq[i], 8)
/// (|a * b| <= 2^30 fits int32), one requantisation step per channel.
/// RTL twin: rtl/vector/psm_eltwise.sv (MUL).
void mul_i8(std::span<const std::int16_t> a, std::span<const std::int16_t> b,
            std::span<const Requant> rq, std::span<std::int8_t> out);

/// Embedding row into the int16 residual stream: out = requantize(row, rq, 16).
/// RTL twin: rtl/vector/psm_eltwise.sv (EMBED).
void embed_i16(std::span<const std::int8_t> row, Requant rq, std::span<std::int16_t> out);

/// Shapes and requantisation of one attention layer over the KV cache.
struct AttentionParams {
  std::size_t n_heads = 0;
  std::size_t n_kv_heads = 0;  ///< grouped-query attention: n_heads / n_kv_heads queries share a KV head
  std::size_t head_size = 0;
  std::span<const Requant> score_rq;  ///< (n_heads) q.k accumulator -> Q.10 logits
  std::span<const Requant> out_rq;    ///< (n_heads) sum(p * v) accumulator -> int8 output
  SoftmaxOptions softmax = {};        ///< three-pass (default) or online Softmax
};

/// Causal attention for one query position over `t_len` cached positions (0 .. pos).
/// Queries and keys are kQkBits-bit values in int16 (so q . k over a head of up to 511
/// channels fits int32; 512 channels of -2048 * -2048 sum to exactly 2^31 and wrap); probabilities are Q0.15, so sum_t p[t] * v_t <= 2^15 * 2^7 never
/// overflows; values and the output are int8.
/// Per head h (KV head h / (n_heads / n_kv_heads)):
///   s[t] = requantize(q_h . k_t, score_rq[h], 32); p = softmax_row_i16(s, softmax);
///   out_h[i] = requantize(sum_t p[t] * v_t[i], out_rq[h], 8).
/// Positions after `pos` are never read, which is the causal mask.
/// RTL twins: rtl/vector/psm_attn.sv (ATTN_SCORE, ATTN_VALUE) around rtl/vector/psm_softmax.sv,
/// one instruction each per head (docs/isa.md).
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

}  // namespace passim::kernels
