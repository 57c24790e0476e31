// SPDX-License-Identifier: Apache-2.0
// Tests of the one-pass integer BatchNorm (int16 in, int8 out).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernel_test_util.hpp"
#include "passim/fixed_point.hpp"
#include "passim/kernels/batchnorm.hpp"
#include "passim/kernels/layernorm.hpp"

namespace {

using passim::test::seeded_rng;
using passim::test::uniform_int;

// One-pass BatchNorm: every int16 input against exact integer arithmetic and against real
// arithmetic within 0.5 LSB (one rounding) plus the bias, with saturation at both ends.
TEST(BatchnormI8, MatchesExactAndRealArithmetic) {
  auto rng = seeded_rng(41);
  const std::size_t n = 65536;
  std::vector<std::int16_t> x(n), gain(n), bias(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<std::int16_t>(int(i) - 32768);
    gain[i] = uniform_int<std::int16_t>(rng, -32768, 32767);
    bias[i] = uniform_int<std::int16_t>(rng, -300, 300);
  }
  const passim::Requant rq = passim::make_requant(std::ldexp(1.0, -22));
  std::vector<std::int8_t> out(n, 99);
  passim::kernels::batchnorm_i8(x, {gain, bias, rq}, out);
  double max_err = 0;
  int sat = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double real = double(x[i]) * gain[i] * passim::requant_value(rq) + bias[i];
    const double clamped = std::clamp(real, -128.0, 127.0);
    max_err = std::max(max_err, std::abs(out[i] - clamped));
    sat += (real > 127.5 || real < -128.5) ? 1 : 0;
    const std::int64_t xg = std::int64_t{x[i]} * gain[i];
    const std::int64_t exact = std::clamp<std::int64_t>(
        ((xg * rq.mult + (std::int64_t{1} << (rq.shift - 1))) >> rq.shift) + bias[i], -128, 127);
    ASSERT_EQ(out[i], exact) << "x " << x[i] << ", gain " << gain[i] << ", bias " << bias[i];
  }
  EXPECT_LE(max_err, 0.5 + 1e-9);
  EXPECT_GT(sat, 1000);  // the row exercises saturation at both ends
}

// BatchNorm is LayerNorm's last pass with a fixed step: a LayerNorm row whose mean is 0
// and whose 1/sqrt(ssd) equals the BatchNorm step gives the same output.
TEST(BatchnormI8, EqualsLayernormPassThreeWithFixedStep) {
  const std::vector<std::int16_t> x{-300, 100, 300, -100};  // mean 0, ssd = 200000
  const std::vector<std::int16_t> gain{1000, -2000, 3000, 32767}, bias{1, -2, 3, 0};
  const passim::Requant r = passim::rsqrt_requant(200000, 4);
  std::vector<std::int8_t> ln(4), bn(4);
  passim::kernels::layernorm_i8(x, {gain, bias, 4, 0}, ln);
  passim::kernels::batchnorm_i8(x, {gain, bias, r}, bn);
  EXPECT_EQ(ln, bn);
  EXPECT_NE(bn, (std::vector<std::int8_t>(4, 0)));
}

}  // namespace
