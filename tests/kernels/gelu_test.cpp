// SPDX-License-Identifier: Apache-2.0
// Tests of the integer GELU (I-BERT i-GELU): Phi in Q0.16 and gelu_i8 on every int8 input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_test_util.hpp"
#include "passim/kernels/gelu.hpp"

namespace {

using passim::Requant;
using passim::test::MaxError;
using passim::test::mismatch_report;

constexpr std::int32_t kPhiOne = 1 << passim::kGeluPhiFracBits;  // 1.0 in Q0.16

double gelu_ref(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

/// Bound on |x * Phi_int(x) - GELU(x)| in real units, over every x. The error is |x| / 2 times
/// the error of I-BERT's erf polynomial; it peaks at x = 2.35 (0.0182, measured below over all
/// Q.10 inputs in [-16, 16]), just below the clip at 1.769 sqrt 2 = 2.50, where the polynomial
/// already reaches 1. Beyond the clip Phi is exactly 0 or 1 and the error decays like the
/// Gaussian tail.
constexpr double kGeluAbsErr = 0.0185;

// x * Phi(x) against GELU(x) for every Q.10 input in [-16, 16]: the error before any output
// rounding.
TEST(GeluPhiQ16, TimesXMatchesGeluOverAllQ10Inputs) {
  MaxError err;
  for (std::int32_t t = -16 * 1024; t <= 16 * 1024; ++t) {
    const double x = double(t) / 1024.0;
    const double e =
        std::fabs(x * double(passim::kernels::gelu_phi_q16(t)) / kPhiOne - gelu_ref(x));
    err.add(e, "t_q10 " + std::to_string(t));
    ASSERT_LE(e, kGeluAbsErr) << "t_q10 " << t;
  }
  err.print("x * gelu_phi_q16 vs GELU, x in [-16, 16]", "(real units)", "exhaustive");
}

// Phi(-t) = 1 - Phi(t) exactly for t != 0 (one magnitude, then a sign flip), Phi is monotone,
// in [0, 1], and exactly 0 / 1 beyond the clip (|t| / sqrt 2 >= 1.769).
TEST(GeluPhiQ16, SymmetricMonotoneAndClipped) {
  std::int32_t prev = passim::kernels::gelu_phi_q16(-40000);
  EXPECT_EQ(prev, 0);
  EXPECT_EQ(passim::kernels::gelu_phi_q16(40000), kPhiOne);
  EXPECT_EQ(passim::kernels::gelu_phi_q16(INT32_MIN), 0);
  EXPECT_EQ(passim::kernels::gelu_phi_q16(INT32_MAX), kPhiOne);
  for (std::int32_t t = -39999; t <= 40000; ++t) {
    const std::int32_t p = passim::kernels::gelu_phi_q16(t);
    ASSERT_GE(p, prev) << "t_q10 " << t;
    ASSERT_LE(p, kPhiOne) << "t_q10 " << t;
    if (t != 0) {
      ASSERT_EQ(p + passim::kernels::gelu_phi_q16(-t), kPhiOne) << "t_q10 " << t;
    }
    prev = p;
  }
}

/// gelu_i8 on all 256 inputs with input scale 2^-in_bits and output scale 2^-out_bits:
/// to_q10 multiplies by 2^(10 - in_bits), out_rq by 2^(out_bits - in_bits - 16).
std::vector<std::int8_t> run_gelu_all(int in_bits, int out_bits) {
  std::vector<std::int8_t> x(256);
  for (int i = 0; i < 256; ++i) {
    x[std::size_t(i)] = static_cast<std::int8_t>(i - 128);
  }
  const Requant to_q10{1 << 30, 30 - (10 - in_bits)};
  const Requant out_rq{1 << 30, 30 + 16 + in_bits - out_bits};
  std::vector<std::int8_t> out(256, std::int8_t{99});  // poison
  passim::kernels::gelu_i8(x, to_q10, out_rq, out);
  return out;
}

// Every int8 input at the stated scale s_in = s_out = 2^-4 (inputs in [-8, 7.94]), and at
// 2^-3 and 2^-5: one rounding (0.5 LSB) plus kGeluAbsErr / s_out. The reference is clamped to
// int8 (saturation).
TEST(GeluI8, AllInt8InputsMatchGeluWithinBound) {
  for (const int bits : {4, 3, 5}) {
    MaxError err;
    const double s = std::ldexp(1.0, -bits);
    const auto out = run_gelu_all(bits, bits);
    for (int i = 0; i < 256; ++i) {
      const int xq = i - 128;
      const double ref = std::clamp(gelu_ref(xq * s) / s, -128.0, 127.0);
      const double e = std::fabs(double(out[std::size_t(i)]) - ref);
      err.add(e, "x " + std::to_string(xq));
      ASSERT_LE(e, 0.5 + kGeluAbsErr / s) << "scale 2^-" << bits << ", x " << xq << ", ref " << ref
                                          << ", found " << int(out[std::size_t(i)]);
    }
    err.print("gelu_i8 vs GELU, all int8, s_in = s_out = 2^-" + std::to_string(bits), "LSB",
              "exhaustive");
  }
}

// The stated scale 2^-4: the measured maximum is 0.646 LSB (at x = -33, i.e. -2.06); assert
// a bound just above it so that a change of constants or rounding shows up here.
TEST(GeluI8, StatedScaleMaxErrorBelowTwoThirdsLsb) {
  const auto out = run_gelu_all(4, 4);
  double worst = 0.0;
  for (int i = 0; i < 256; ++i) {
    const double ref = gelu_ref((i - 128) / 16.0) * 16.0;
    worst = std::max(worst, std::fabs(double(out[std::size_t(i)]) - ref));
  }
  EXPECT_LE(worst, 0.65);
}

// Exact values: GELU(0) = 0; large positive inputs pass through unchanged (Phi = 1 beyond the
// clip), large negative inputs give 0.
TEST(GeluI8, ZeroIdentityAndZeroTails) {
  const auto out = run_gelu_all(4, 4);
  EXPECT_EQ(out[128], 0);
  for (int xq = 45; xq <= 127; ++xq) {  // x >= 2.81 > 1.769 sqrt 2
    EXPECT_EQ(out[std::size_t(xq + 128)], xq) << "x " << xq;
  }
  for (int xq = -128; xq <= -45; ++xq) {
    EXPECT_EQ(out[std::size_t(xq + 128)], 0) << "x " << xq;
  }
}

// With a finer output scale both ends saturate: s_out = 2^-10 makes GELU(7.94) = 8128 LSB
// -> 127, and the minimum GELU(-0.75) = -0.17 = -174 LSB -> -128.
TEST(GeluI8, SaturatesAtBothEnds) {
  const auto out = run_gelu_all(4, 10);
  EXPECT_EQ(out[255], 127);
  EXPECT_EQ(*std::min_element(out.begin(), out.end()), -128);
  EXPECT_EQ(out[128 - 12], -128);  // x = -0.75
  EXPECT_EQ(out[0], 0);            // x = -8: Phi = 0
}

// The kernel may run in place.
TEST(GeluI8, InPlaceMatchesOutOfPlace) {
  std::vector<std::int8_t> x(256);
  for (int i = 0; i < 256; ++i) {
    x[std::size_t(i)] = static_cast<std::int8_t>(i - 128);
  }
  const auto expect = run_gelu_all(4, 4);
  passim::kernels::gelu_i8(x, Requant{1 << 30, 24}, Requant{1 << 30, 46}, x);
  EXPECT_EQ(x, expect) << mismatch_report(expect, x);
}

}  // namespace
