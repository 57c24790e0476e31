// SPDX-License-Identifier: Apache-2.0
/// \file The golden RMSNorm (two passes).
/// A kernel here throws std::invalid_argument naming itself and the operand when an operand
/// has the wrong size (passim/kernels/require.hpp), in every build type.
#pragma once

#include <cstdint>
#include <span>

#include "passim/fixed_point.hpp"

namespace passim::kernels {

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
/// The input scale cancels: out = g * x / rms(x) / s_out.  RTL twin: rtl/rmsnorm/psm_rmsnorm.sv.
/// Precondition: sum(x^2) + eps < 2^rsqrt_limit_bits(gain_frac_bits), i.e. below
/// 2^min(62, 70 - 2 * gain_frac_bits) (see rsqrt_requant); else std::invalid_argument.
///   x: (n) int16   out: (n) int8
void rmsnorm_i8(std::span<const std::int16_t> x, const RmsNormParams& p,
                std::span<std::int8_t> out);

}  // namespace passim::kernels
