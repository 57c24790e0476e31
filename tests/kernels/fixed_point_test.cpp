// SPDX-License-Identifier: Apache-2.0
// Tests of the fixed-point primitives.
#include <gtest/gtest.h>

#include "passim/fixed_point.hpp"

TEST(RequantizeI8, TiesRoundTowardPlusInfinity) {
  const passim::Requant half{1 << 30, 31};  // multiplier 0.5
  EXPECT_EQ(passim::requantize(3, half, 8), 2);    // +1.5 -> 2
  EXPECT_EQ(passim::requantize(-3, half, 8), -1);  // -1.5 -> -1
}
