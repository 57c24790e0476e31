// SPDX-License-Identifier: Apache-2.0
// Tests of the integer sigmoid (Q.10 in, Q0.15 out) and SiLU (int16 in and out).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.hpp"
#include "passim/kernels/silu.hpp"

namespace {

using passim::Requant;
using passim::test::MaxError;
using passim::test::mismatch_report;

constexpr std::int32_t kSigOne = 1 << passim::kSigmoidFracBits;  // 1.0 in Q0.15

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double silu_ref(double x) { return x * sigmoid_ref(x); }

/// Sigmoid tolerance in Q0.15 LSB at x (real). The kernel computes 1 / (1 + e') with
/// e' = iexp_q10(-|x|) / kExpOne = exp(-|x|) + a, |a| <= kIexpAbsErr. Since
/// |d/de 1/(1+e)| = 1/(1+e)^2, the sigmoid is off by at most kIexpAbsErr / (1 + e - a)^2,
/// plus 1 LSB for the floor of the integer division.
double sigmoid_tol_lsb(double x) {
  const double e = std::exp(-std::fabs(x));
  const double a = passim::test::kIexpAbsErr;
  return double(kSigOne) * a / ((1.0 + e - a) * (1.0 + e - a)) + 1.0;
}

TEST(SigmoidQ15, MatchesDoubleReference) {
  MaxError err;
  for (std::int32_t x = -24 * 1024; x <= 24 * 1024; ++x) {
    const double xr = double(x) / 1024.0;
    const double e = std::fabs(double(passim::kernels::sigmoid_q15(x)) - kSigOne * sigmoid_ref(xr));
    err.add(e, "x_q10 " + std::to_string(x));
    ASSERT_LE(e, sigmoid_tol_lsb(xr)) << "x_q10 " << x;
  }
  err.print("sigmoid_q15 vs double, x in [-24, 24]", "LSB (Q0.15)", "exhaustive");
}

// The sigmoid is exactly the integer definition (docs/numerics.md): e = iexp_q10(-|x|),
// pos = floor((kExpOne << 15) / (kExpOne + e)) by integer division, for every input whose
// exponential is not 0 and a sweep of the rest up to the int32 extremes.
TEST(SigmoidQ15, EqualsIntegerDivisionDefinition) {
  const auto ref = [](std::int32_t x) {
    const std::int64_t mag = std::min<std::int64_t>(std::llabs(std::int64_t{x}), 1 << 30);
    const std::uint64_t e = passim::iexp_q10(static_cast<std::int32_t>(-mag));
    const std::uint64_t num = std::uint64_t{passim::kExpOne} << passim::kSigmoidFracBits;
    const auto pos = static_cast<std::int32_t>(num / (std::uint64_t{passim::kExpOne} + e));
    return x >= 0 ? pos : kSigOne - pos;
  };
  for (std::int32_t x = -40000; x <= 40000; ++x) {
    ASSERT_EQ(passim::kernels::sigmoid_q15(x), ref(x)) << "x_q10 " << x;
  }
  for (std::int64_t x = std::numeric_limits<std::int32_t>::min();
       x <= std::numeric_limits<std::int32_t>::max(); x += 999983) {
    ASSERT_EQ(passim::kernels::sigmoid_q15(std::int32_t(x)), ref(std::int32_t(x))) << x;
  }
}

TEST(SigmoidQ15, ZeroIsOneHalf) { EXPECT_EQ(passim::kernels::sigmoid_q15(0), kSigOne / 2); }

// sigmoid(-x) = 1 - sigmoid(x) holds exactly: the kernel computes |x| once and flips.
TEST(SigmoidQ15, SymmetricAboutZero) {
  for (std::int32_t x = 0; x <= 40000; ++x) {
    ASSERT_EQ(passim::kernels::sigmoid_q15(x) + passim::kernels::sigmoid_q15(-x), kSigOne)
        << "x_q10 " << x;
  }
}

TEST(SigmoidQ15, MonotoneAndSaturatesToZeroAndOne) {
  std::int32_t prev = passim::kernels::sigmoid_q15(-40000);
  for (std::int32_t x = -39999; x <= 40000; ++x) {
    const std::int32_t s = passim::kernels::sigmoid_q15(x);
    ASSERT_GE(s, prev) << "x_q10 " << x;
    prev = s;
  }
  constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
  constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
  const std::vector<std::int32_t> x{kMax, kMin, kMin + 1, 1 << 30, -(1 << 30), 40000, -40000};
  std::vector<std::int32_t> found;
  for (const std::int32_t v : x) {
    found.push_back(passim::kernels::sigmoid_q15(v));
  }
  const std::vector<std::int32_t> expect{kSigOne, 0, 0, kSigOne, 0, kSigOne, 0};
  EXPECT_EQ(found, expect) << mismatch_report(expect, found);
}

struct SiluScales {
  double in_range;   ///< max |gate| (real): s_x = in_range / 32767
  double out_range;  ///< max |silu| (real): s_out = out_range / 32767
};

// Every int16 input, for a few scale pairs. The output error in LSB has three parts, each
// scaled by |x| s_x / s_out (the output LSBs per unit of sigmoid):
//   the sigmoid error (sigmoid_tol_lsb / 2^15), the Q.10 rounding of the sigmoid input
//   (0.5 / 1024, times the slope <= 1/4: 2^-13), and the final rounding (0.5 LSB).
TEST(SiluI16, MatchesDoubleReference) {
  MaxError all;
  for (const SiluScales sc : {SiluScales{8, 8}, SiluScales{16, 16}, SiluScales{2, 2},
                              SiluScales{4, 2}, SiluScales{12, 6}}) {
    const double s_x = sc.in_range / 32767.0;
    const double s_out = sc.out_range / 32767.0;
    // As the quantiser builds them (runtime/src/quant/quantize.cpp).
    const Requant to_q10 = passim::make_requant(s_x * 1024.0);
    const Requant out_rq = passim::make_requant(s_x / (double(kSigOne) * s_out));
    std::vector<std::int16_t> x;
    for (std::int32_t v = -32768; v <= 32767; ++v) {
      x.push_back(static_cast<std::int16_t>(v));
    }
    std::vector<std::int16_t> out(x.size());
    passim::kernels::silu_i16(x, to_q10, out_rq, out);
    MaxError err;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double xr = double(x[i]) * s_x;
      const double ref = std::clamp(silu_ref(xr) / s_out, -32768.0, 32767.0);
      const double ratio = std::fabs(double(x[i])) * s_x / s_out;
      const double tol =
          ratio * (sigmoid_tol_lsb(xr) / kSigOne + std::ldexp(1.0, -13) * 1.001) + 0.501;
      const double e = std::fabs(double(out[i]) - ref);
      err.add(e, "x " + std::to_string(x[i]));
      all.add(e, "x " + std::to_string(x[i]) + ", ranges " + std::to_string(sc.in_range) + " -> " +
                     std::to_string(sc.out_range));
      ASSERT_LE(e, tol) << "ranges " << sc.in_range << " -> " << sc.out_range << ", x " << x[i]
                        << " (" << xr << "), ref " << ref << ", found " << out[i];
    }
    err.print("silu_i16 vs double, gate range +-" + std::to_string(int(sc.in_range)) +
                  ", output range " + std::to_string(int(sc.out_range)),
              "LSB", "exhaustive");
  }
  all.print("silu_i16 vs double, all scale pairs", "LSB", "exhaustive");
}

TEST(SiluI16, ZeroIsZero) {
  const Requant to_q10 = passim::make_requant(8.0 / 32767.0 * 1024.0);
  const Requant out_rq = passim::make_requant(1.0 / kSigOne);
  std::vector<std::int16_t> out(1, 99);
  passim::kernels::silu_i16(std::vector<std::int16_t>{0}, to_q10, out_rq, out);
  EXPECT_EQ(out, std::vector<std::int16_t>{0});
}

TEST(SiluI16, SaturatesAtBothEnds) {
  // Input LSB 2^-10 (to_q10 is the identity) and output multiplier 1: out = x * sigmoid in
  // Q0.15, far beyond int16 except at 0. silu(-1.0) = -0.269 -> -8808 * 1024 saturates low.
  const Requant to_q10{1, 0};
  const Requant out_rq{1, 0};
  const std::vector<std::int16_t> x{32767, -1024, 0, 1, -32768};
  std::vector<std::int16_t> out(x.size());
  passim::kernels::silu_i16(x, to_q10, out_rq, out);
  // x = 1 (2^-10): sigmoid(2^-10) = 0.500244 is 16392.0 in Q0.15; the kernel computes
  // floor(16391.77) = 16391 (i-exp is 0.003% high there). x = -32768 (-32.0): sigmoid = 0.
  const std::vector<std::int16_t> expect{32767, -32768, 0, 16391, 0};
  EXPECT_EQ(out, expect) << mismatch_report(expect, out);
}

TEST(SiluI16, InPlaceMatchesSeparateOutput) {
  const Requant to_q10 = passim::make_requant(8.0 / 32767.0 * 1024.0);
  const Requant out_rq = passim::make_requant(1.0 / kSigOne);
  std::vector<std::int16_t> x;
  for (std::int32_t v = -32768; v <= 32767; v += 7) {
    x.push_back(static_cast<std::int16_t>(v));
  }
  std::vector<std::int16_t> separate(x.size());
  passim::kernels::silu_i16(x, to_q10, out_rq, separate);
  passim::kernels::silu_i16(x, to_q10, out_rq, x);
  EXPECT_EQ(x, separate) << mismatch_report(separate, x);
}

}  // namespace
