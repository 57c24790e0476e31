// SPDX-License-Identifier: Apache-2.0
// Fixed-point primitives that are not constexpr: requantiser construction, integer square root.
#include "passim/fixed_point.hpp"

#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

namespace passim {

Requant make_requant(double multiplier) {
  if (!(multiplier > 0.0) || !std::isfinite(multiplier)) {
    if (multiplier == 0.0) {
      return {};
    }
    throw std::out_of_range("requantisation multiplier must be finite and >= 0, found " +
                            std::to_string(multiplier));
  }
  int exponent = 0;
  const double mantissa = std::frexp(multiplier, &exponent);  // multiplier = mantissa * 2^exp
  std::int64_t mult = std::llround(mantissa * 2147483648.0);   // [2^30, 2^31]
  if (mult == (std::int64_t{1} << 31)) {
    mult >>= 1;
    ++exponent;
  }
  std::int64_t shift = 31 - exponent;
  if (shift < 0) {
    throw std::out_of_range("requantisation multiplier " + std::to_string(multiplier) +
                            " exceeds 2^31");
  }
  if (shift > 63 + 31) {  // the 31-bit mantissa would be shifted out entirely
    return {};
  }
  if (shift > 63) {  // keep the value, lose mantissa bits
    mult = round_shift(mult, static_cast<int>(shift - 63));
    shift = 63;
    if (mult == 0) {
      return {};
    }
  }
  return {static_cast<std::int32_t>(mult), static_cast<std::int32_t>(shift)};
}

double requant_value(Requant rq) noexcept { return std::ldexp(double(rq.mult), -rq.shift); }

std::uint64_t isqrt_u64(std::uint64_t x) noexcept {
  if (x < 2) {
    return x;
  }
  // Start above the root: 2^ceil(bits/2) >= sqrt(x). Newton's step then decreases
  // monotonically and stops at floor(sqrt(x)) (I-BERT Alg. 4).
  const int bits = static_cast<int>(std::bit_width(x));
  std::uint64_t y = std::uint64_t{1} << ((bits + 1) / 2);
  for (;;) {
    const std::uint64_t z = (y + x / y) >> 1;
    if (z >= y) {
      return y;
    }
    y = z;
  }
}

Requant rsqrt_requant(std::uint64_t x, int extra_shift) noexcept {
  assert(x >= 1 && x < (std::uint64_t{1} << rsqrt_limit_bits(extra_shift)));
  const int bits = static_cast<int>(std::bit_width(x));
  const int k = (62 - bits) / 2;                     // x << 2k lands in [2^60, 2^62)
  const std::uint64_t s = isqrt_u64(x << (2 * k));   // [2^30, 2^31)
  const std::uint64_t mult = (std::uint64_t{1} << 59) / s;  // (2^28, 2^29]
  const int shift = 59 - k + extra_shift;
  assert(shift >= 0 && shift <= 63);
  return {static_cast<std::int32_t>(mult), static_cast<std::int32_t>(shift)};
}

}  // namespace passim
