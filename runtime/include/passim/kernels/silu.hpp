// SPDX-License-Identifier: Apache-2.0
/// \file The golden SiLU.
/// A kernel here throws std::invalid_argument naming itself and the operand when an operand
/// has the wrong size (passim/kernels/require.hpp), in every build type.
#pragma once

#include <cstdint>
#include <span>

#include "passim/fixed_point.hpp"

namespace passim::kernels {

/// The sigmoid of `silu_i16` below, Q0.15, for an input in Q.10.
[[nodiscard]] std::int32_t sigmoid_q15(std::int32_t x_q10) noexcept;

/// SiLU(x) = x * sigmoid(x) on int16 inputs (Elfwing et al. 2018), integer only:
/// t = requantize(x, to_q10, 32) (x as Q.10); e = iexp_q10(-|t|);
/// s = floor(kExpOne * 2^15 / (kExpOne + e)) = sigmoid(|x|) in Q0.15, and 2^15 - s for x < 0;
/// out = requantize(x * s, out_rq, 16) (|x * s| <= 2^30).  RTL twin: rtl/silu/psm_silu.sv.
///   x: (n) int16   out: (n) int16 (may alias x)
void silu_i16(std::span<const std::int16_t> x, Requant to_q10, Requant out_rq,
              std::span<std::int16_t> out);

}  // namespace passim::kernels
