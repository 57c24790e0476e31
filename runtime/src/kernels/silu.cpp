// SPDX-License-Identifier: Apache-2.0
// Golden integer SiLU through the I-BERT exponential. RTL twin: rtl/silu/psm_silu.sv.
#include "passim/kernels/silu.hpp"

#include <cstdlib>

#include "passim/kernels/require.hpp"

namespace passim::kernels {

std::int32_t sigmoid_q15(std::int32_t x_q10) noexcept {
  // sigmoid(|x|) = 1 / (1 + exp(-|x|)) = one / (one + e), with one = kExpOne in exp units.
  const std::int64_t mag = std::llabs(std::int64_t{x_q10});
  const std::int32_t neg = static_cast<std::int32_t>(mag > (std::int64_t{1} << 30)
                                                         ? -(std::int64_t{1} << 30)
                                                         : -mag);
  const std::uint64_t e = iexp_q10(neg);
  const std::uint64_t num = std::uint64_t{kExpOne} << kSigmoidFracBits;
  const auto pos = static_cast<std::int32_t>(num / (std::uint64_t{kExpOne} + e));  // floor
  return x_q10 >= 0 ? pos : (std::int32_t{1} << kSigmoidFracBits) - pos;
}

void silu_i16(std::span<const std::int16_t> x, Requant to_q10, Requant out_rq,
              std::span<std::int16_t> out) {
  require_at_least("silu_i16", "out", x.size(), out.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int32_t t = requantize(x[i], to_q10, 32);
    const std::int32_t s = sigmoid_q15(t);                 // [0, 2^15]
    const std::int32_t prod = std::int32_t{x[i]} * s;      // |prod| <= 2^30
    out[i] = static_cast<std::int16_t>(requantize_result(prod, out_rq, 16));
  }
}

}  // namespace passim::kernels
