// SPDX-License-Identifier: Apache-2.0
// Golden rotary position embedding. RTL twin: rtl/rope/psm_rope.sv.
#include "passim/kernels/rope.hpp"

#include <string>

#include "passim/kernels/require.hpp"

namespace passim::kernels {

void rope_i16(std::span<std::int16_t> vec, std::size_t head_size,
             std::span<const std::int16_t> cos, std::span<const std::int16_t> sin) {
  require(head_size >= 2 && head_size % 2 == 0, "rope_i16",
          "head_size: expected an even number >= 2, found " + std::to_string(head_size));
  require(vec.size() % head_size == 0, "rope_i16",
          "vec: expected a multiple of head_size = " + std::to_string(head_size) +
              " elements, found " + std::to_string(vec.size()));
  require_at_least("rope_i16", "cos", head_size / 2, cos.size());
  require_at_least("rope_i16", "sin", head_size / 2, sin.size());
  for (std::size_t base = 0; base < vec.size(); base += head_size) {
    for (std::size_t j = 0; j < head_size / 2; ++j) {
      const std::int32_t v0 = vec[base + 2 * j];
      const std::int32_t v1 = vec[base + 2 * j + 1];
      const std::int32_t c = cos[j];
      const std::int32_t s = sin[j];
      // |v * c| <= 2^15 * 2^14, so each sum fits int64 exactly before the one rounding.
      const std::int64_t r0 = std::int64_t{v0} * c - std::int64_t{v1} * s;
      const std::int64_t r1 = std::int64_t{v0} * s + std::int64_t{v1} * c;
      vec[base + 2 * j] =
          static_cast<std::int16_t>(saturate_result(round_shift(r0, kRopeFracBits), kQkBits));
      vec[base + 2 * j + 1] =
          static_cast<std::int16_t>(saturate_result(round_shift(r1, kRopeFracBits), kQkBits));
    }
  }
}

}  // namespace passim::kernels
