// SPDX-License-Identifier: Apache-2.0
// Golden integer GELU (I-BERT i-GELU, erf by a clipped quadratic).
// RTL twin: rtl/gelu/psm_gelu.sv.
#include "passim/kernels/gelu.hpp"

#include <algorithm>
#include <cstdlib>

#include "passim/kernels/require.hpp"

namespace passim::kernels {

std::int32_t gelu_phi_q16(std::int32_t t_q10) noexcept {
  // u = |t| / sqrt 2 in Q.10; |t| < 2^31, so the product is below 2^47.
  const std::int64_t mag = std::llabs(std::int64_t{t_q10});
  const std::int64_t u = std::min(round_shift(mag * kGeluInvSqrt2, kGeluInvSqrt2Shift), kGeluClip);
  const std::int64_t w = u - kGeluClip;  // [-kGeluClip, 0]; w^2 * kGeluA < 2^37
  const std::int64_t erf = (std::int64_t{1} << 15) - round_shift(w * w * kGeluA, kGeluAShift);
  const std::int64_t half = std::int64_t{1} << (kGeluPhiFracBits - 1);
  return static_cast<std::int32_t>(t_q10 >= 0 ? half + erf : half - erf);
}

void gelu_i8(std::span<const std::int8_t> x, Requant to_q10, Requant out_rq,
             std::span<std::int8_t> out) {
  require_at_least("gelu_i8", "out", x.size(), out.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int32_t t = requantize(x[i], to_q10, 32);
    const std::int32_t phi = gelu_phi_q16(t);            // [0, 2^16]
    const std::int32_t prod = std::int32_t{x[i]} * phi;  // |prod| <= 2^23
    out[i] = static_cast<std::int8_t>(requantize_result(prod, out_rq, 8));
  }
}

}  // namespace passim::kernels
