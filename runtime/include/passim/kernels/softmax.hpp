// SPDX-License-Identifier: Apache-2.0
/// \file The golden Softmax: three passes, or online in two.
/// A kernel here throws std::invalid_argument naming itself and the operand when an operand
/// has the wrong size (passim/kernels/require.hpp), in every build type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "passim/fixed_point.hpp"

namespace passim::kernels {

/// The most lanes `softmax_online_i16` follows: its per-lane state lives in fixed arrays (no
/// allocation). The hardware spec's lane limit must not exceed it (tests/sim/spec_test.cpp).
inline constexpr std::size_t kMaxSoftmaxLanes = 64;

/// Softmax in three passes over the row (I-BERT Alg. 2 exponential):
/// Pass 1: m = max(x). Pass 2: e[i] = iexp_q10(x[i] - m), sum = sum(e) (int64).
/// Pass 3: out[i] = (e[i] * recip + 2^31) >> 32 with recip = floor(kProbOne * 2^32 / sum).
/// Output probabilities are int16 in [0, kProbOne] (Q0.15, scale 1/32767); each row sums to
/// kProbOne within ceil(n/2) + 1 LSB (docs/numerics.md).  RTL twin: rtl/softmax/psm_softmax.sv.
///   x: (n) int32 logits in Q.10, n >= 1   e_scratch: (n)   out: (n) int16
void softmax_i16(std::span<const std::int32_t> x, std::span<std::uint32_t> e_scratch,
                 std::span<std::int16_t> out);

/// Passes 2 and 3 of `softmax_i16` for a caller that already has the row maximum
/// (m == max(x), e.g. taken while the logits were written): the same output.
///   x: (n) int32 logits in Q.10, n >= 1   m: max(x)   e_scratch: (n)   out: (n) int16
void softmax_max_i16(std::span<const std::int32_t> x, std::int32_t m,
                     std::span<std::uint32_t> e_scratch, std::span<std::int16_t> out);

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
/// RTL twin: rtl/softmax/psm_softmax.sv with `online_i` = 1, `Lanes` = `lanes`.
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

}  // namespace passim::kernels
