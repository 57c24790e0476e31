// SPDX-License-Identifier: Apache-2.0
/// \file The golden GELU (I-BERT i-GELU).
/// A kernel here throws std::invalid_argument naming itself and the operand when an operand
/// has the wrong size (passim/kernels/require.hpp), in every build type.
#pragma once

#include <cstdint>
#include <span>

#include "passim/fixed_point.hpp"

namespace passim::kernels {

/// GELU(x) = x * Phi(x) (Hendrycks & Gimpel 2016) on int8 inputs, integer only: I-BERT's
/// i-GELU (Kim et al. 2021, Alg. 2), erf by a second-order polynomial with sign and clipping:
/// t = requantize(x, to_q10, 32) (x as Q.10); out = requantize(x * gelu_phi_q16(t), out_rq, 8)
/// (|x * Phi| <= 2^23). int8 in and out, so that every input can be checked exhaustively and the
/// output feeds a matmul directly. RTL twin: rtl/gelu/psm_gelu.sv.
///   x: (n) int8   out: (n) int8 (may alias x)
void gelu_i8(std::span<const std::int8_t> x, Requant to_q10, Requant out_rq,
             std::span<std::int8_t> out);

/// Phi(t) = (1 + erf(t / sqrt 2)) / 2 in Q0.16 (1.0 = 2^16), for t in Q.10:
/// u = min(round_shift(|t| * kGeluInvSqrt2, 16), kGeluClip), w = u - kGeluClip (Q.10, <= 0),
/// E = 2^15 - round_shift(w^2 * kGeluA, 21) (erf(|t| / sqrt 2) in Q0.15, in [3167, 2^15]),
/// Phi = 2^15 + E for t >= 0 and 2^15 - E for t < 0 (so Phi(-t) = 2^16 - Phi(t) for t != 0).
/// RTL twin: `psm_gelu_phi_pkg::gelu_phi_q16` in rtl/gelu/psm_gelu_phi_pkg.sv.
[[nodiscard]] std::int32_t gelu_phi_q16(std::int32_t t_q10) noexcept;

}  // namespace passim::kernels
