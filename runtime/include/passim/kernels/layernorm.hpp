// SPDX-License-Identifier: Apache-2.0
/// \file The golden LayerNorm (three passes).
/// A kernel here throws std::invalid_argument naming itself and the operand when an operand
/// has the wrong size (passim/kernels/require.hpp), in every build type.
#pragma once

#include <cstdint>
#include <span>

#include "passim/fixed_point.hpp"

namespace passim::kernels {

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
/// RTL twin: rtl/layernorm/psm_layernorm.sv (LAYERNORM, `mode_i` = 0).
/// Precondition: ssd < 2^rsqrt_limit_bits(gain_frac_bits), i.e. below
/// 2^min(62, 70 - 2 * gain_frac_bits) (see rsqrt_requant); else std::invalid_argument.
///   x: (n) int16, n >= 1   out: (n) int8
void layernorm_i8(std::span<const std::int16_t> x, const LayerNormParams& p,
                  std::span<std::int8_t> out);

}  // namespace passim::kernels
