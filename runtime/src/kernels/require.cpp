// SPDX-License-Identifier: Apache-2.0
// The kernels' precondition errors.
#include "passim/kernels/require.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace passim::kernels {

void throw_size_error(std::string_view kernel, std::string_view operand,
                      std::string_view relation, std::size_t expected, std::size_t found) {
  throw std::invalid_argument(fmt::format("{}: {}: expected {} {} element{}, found {}", kernel,
                                          operand, relation, expected, expected == 1 ? "" : "s",
                                          found));
}

void throw_precondition(std::string_view kernel, std::string_view what) {
  throw std::invalid_argument(fmt::format("{}: {}", kernel, what));
}

Requant checked_rsqrt(std::string_view kernel, std::string_view what, std::uint64_t x,
                      int gain_frac_bits) {
  if (gain_frac_bits < 0 || gain_frac_bits > 13) {
    throw_precondition(kernel, fmt::format("gain_frac_bits: expected 0..13, found {}",
                                           gain_frac_bits));
  }
  const int limit = rsqrt_limit_bits(gain_frac_bits);
  if (x >= (std::uint64_t{1} << limit)) {
    throw_precondition(kernel, fmt::format("{}: expected below 2^{} (gain_frac_bits {}), found {}",
                                           what, limit, gain_frac_bits, x));
  }
  return rsqrt_requant(x, gain_frac_bits);
}

}  // namespace passim::kernels
