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

}  // namespace passim::kernels
