// SPDX-License-Identifier: Apache-2.0
/// \file Size preconditions of the public kernels, checked in every build type.
///
/// A kernel called with a row that is empty, too short or the wrong size throws
/// std::invalid_argument naming the kernel, the operand, and the expected and found sizes,
/// e.g. "softmax_i16: x: expected at least 1 element, found 0". These checks cost a compare
/// or two per call, against a loop over the row; asserts would vanish in Release, where a
/// bad size used to read out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "passim/fixed_point.hpp"

namespace passim::kernels {

/// Throws std::invalid_argument "<kernel>: <operand>: expected <relation> <expected>
/// element(s), found <found>". Out of line, so that the checks stay small.
[[noreturn]] void throw_size_error(std::string_view kernel, std::string_view operand,
                                   std::string_view relation, std::size_t expected,
                                   std::size_t found);

/// Throws std::invalid_argument "<kernel>: <what>" (a precondition that is not a size).
[[noreturn]] void throw_precondition(std::string_view kernel, std::string_view what);

/// `found >= expected`, else throw_size_error.
inline void require_at_least(std::string_view kernel, std::string_view operand,
                             std::size_t expected, std::size_t found) {
  if (found < expected) {
    throw_size_error(kernel, operand, "at least", expected, found);
  }
}

/// `found == expected`, else throw_size_error.
inline void require_equal(std::string_view kernel, std::string_view operand,
                          std::size_t expected, std::size_t found) {
  if (found != expected) {
    throw_size_error(kernel, operand, "exactly", expected, found);
  }
}

/// `ok`, else throw_precondition(kernel, what).
inline void require(bool ok, std::string_view kernel, std::string_view what) {
  if (!ok) {
    throw_precondition(kernel, what);
  }
}

/// The norms' reciprocal square root: `gain_frac_bits` in 0..13, and rsqrt_requant(x,
/// gain_frac_bits) when x (the sum `what`, e.g. "sum of squares + eps") is below
/// 2^rsqrt_limit_bits(gain_frac_bits); otherwise throws "<kernel>: <what>: expected below 2^L
/// (gain_frac_bits F), found x" (a large eps breaks it). RTL twin: rtl/common/psm_rsqrt.sv.
[[nodiscard]] Requant checked_rsqrt(std::string_view kernel, std::string_view what,
                                    std::uint64_t x, int gain_frac_bits);

}  // namespace passim::kernels
