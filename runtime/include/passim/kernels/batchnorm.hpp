// SPDX-License-Identifier: Apache-2.0
/// \file The golden inference BatchNorm (one pass).
/// A kernel here throws std::invalid_argument naming itself and the operand when an operand
/// has the wrong size (passim/kernels/require.hpp), in every build type.
#pragma once

#include <cstdint>
#include <span>

#include "passim/fixed_point.hpp"

namespace passim::kernels {

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
/// RTL twin: rtl/batchnorm/psm_batchnorm.sv, run by rtl/layernorm/psm_layernorm.sv (BATCHNORM,
/// `mode_i` = 1).
///   x: (n) int16   out: (n) int8
void batchnorm_i8(std::span<const std::int16_t> x, const BatchNormParams& p,
                  std::span<std::int8_t> out);

}  // namespace passim::kernels
