// SPDX-License-Identifier: Apache-2.0
// Tests of the two-pass integer RMSNorm (int16 in, int8 out).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.hpp"
#include "passim/kernels/rmsnorm.hpp"

namespace {

using passim::test::MaxError;
using passim::test::mismatch_report;
using passim::test::seeded_rng;
using passim::test::uniform_int;

/// RMSNorm in double with the kernel's integer gains: x[i] * (gain[i] / 2^frac) /
/// sqrt(sum(x^2) + eps), 0 for an all-zero row with eps = 0.
std::vector<double> rmsnorm_ref(const std::vector<std::int16_t>& x,
                                const std::vector<std::int16_t>& gain, int frac,
                                std::uint64_t eps) {
  double ss = double(eps);
  for (const std::int16_t v : x) {
    ss += double(v) * double(v);  // exact: < 2^53
  }
  std::vector<double> out(x.size(), 0.0);
  if (ss == 0.0) {
    return out;
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    out[i] = double(x[i]) * std::ldexp(double(gain[i]), -frac) / std::sqrt(ss);
  }
  return out;
}

std::vector<std::int8_t> run_rmsnorm(const std::vector<std::int16_t>& x,
                                     const std::vector<std::int16_t>& gain, int frac,
                                     std::uint64_t eps) {
  std::vector<std::int8_t> out(x.size(), std::int8_t{99});  // poison
  passim::kernels::rmsnorm_i8(x, passim::kernels::RmsNormParams{gain, frac, eps}, out);
  return out;
}

// One rounding (0.5 LSB) and the reciprocal square root, whose relative error is below 2^-28
// (RsqrtRequant test), i.e. at most 128 * 2^-28 LSB here; the tolerance allows
// 0.5 + |ref| * 2^-27. The reference is clamped to [-128, 127] first (saturation).
TEST(RmsnormI8, MatchesDoubleReferenceWithinHalfLsb) {
  const std::uint32_t seed = 301;
  auto rng = seeded_rng(seed);
  MaxError err;
  for (const std::size_t n : {1, 2, 3, 7, 17, 64, 172, 255, 512, 4096}) {
    const int trials = n >= 4096 ? 10 : 100;
    for (int trial = 0; trial < trials; ++trial) {
      // Row: random amplitude 2^[0, 15], sometimes an outlier at the int16 limits.
      const double amp = std::exp2(passim::test::uniform_real(rng, 0.0, 15.0));
      std::vector<std::int16_t> x(n);
      for (auto& v : x) {
        v = static_cast<std::int16_t>(std::clamp(
            std::nearbyint(passim::test::uniform_real(rng, -amp, amp)), -32768.0, 32767.0));
      }
      if (trial % 5 == 0) {
        x[uniform_int<std::size_t>(rng, 0, std::int64_t(n) - 1)] = trial % 10 == 0 ? -32768 : 32767;
      }
      // Gains like the quantiser's: real gains up to 100 sqrt(n) (outputs up to ~170, some
      // saturate), in Q.frac with frac as large as fits int16 (<= 13).
      const double g_max = 100.0 * std::sqrt(double(n));
      int frac = 13;
      while (frac > 0 && g_max * std::ldexp(1.0, frac) > 32767.0) {
        --frac;
      }
      std::vector<std::int16_t> gain(n);
      for (auto& g : gain) {
        g = static_cast<std::int16_t>(std::clamp(
            std::nearbyint(passim::test::uniform_real(rng, -g_max, g_max) * std::ldexp(1.0, frac)),
            -32768.0, 32767.0));
      }
      const std::uint64_t eps =
          trial % 3 == 0 ? 0 : std::uint64_t(std::exp2(passim::test::uniform_real(rng, 0.0, 40.0)));
      const auto out = run_rmsnorm(x, gain, frac, eps);
      const auto ref = rmsnorm_ref(x, gain, frac, eps);
      for (std::size_t i = 0; i < n; ++i) {
        const double r = std::clamp(ref[i], -128.0, 127.0);
        const double e = std::fabs(double(out[i]) - r);
        err.add(e, "n " + std::to_string(n) + ", trial " + std::to_string(trial));
        ASSERT_LE(e, 0.5 + std::fabs(r) * std::ldexp(1.0, -27))
            << "seed " << seed << ", n " << n << ", trial " << trial << ", index " << i << ": x "
            << x[i] << ", gain " << gain[i] << ", frac " << frac << ", eps " << eps << ", ref "
            << ref[i] << ", found " << int(out[i]);
      }
    }
  }
  err.print("rmsnorm_i8 vs double", "LSB", seed);
}

TEST(RmsnormI8, AllZeroRowWithZeroEpsGivesZero) {
  for (const std::size_t n : {1, 2, 5, 64, 4096}) {
    const std::vector<std::int16_t> x(n, 0);
    const std::vector<std::int16_t> gain(n, 32767);
    const auto out = run_rmsnorm(x, gain, 13, 0);
    const std::vector<std::int8_t> expect(n, 0);
    EXPECT_EQ(out, expect) << "n " << n << ", " << mismatch_report(expect, out);
  }
}

// A constant row c has rms |c|, so out[i] = sign(c) * gain[i] / (2^frac sqrt(n)). With n = 16
// and gain[i] = 4 * 2^7 * t[i] (frac 7) that is exactly sign(c) * t[i]: the square root is
// exact and the floored reciprocal only shrinks the magnitude by < 2^-28.
TEST(RmsnormI8, ConstantRowGivesSignTimesGain) {
  const std::size_t n = 16;
  std::vector<std::int16_t> gain(n);
  std::vector<std::int8_t> t(n);
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = static_cast<std::int8_t>(std::int32_t(i) * 4 - 32);  // -32 .. 28
    gain[i] = static_cast<std::int16_t>(4 * 128 * t[i]);
  }
  for (const std::int16_t c : std::vector<std::int16_t>{1, -1, 7, -300, 32767, -32768}) {
    const std::vector<std::int16_t> x(n, c);
    std::vector<std::int8_t> expect(n);
    for (std::size_t i = 0; i < n; ++i) {
      expect[i] = static_cast<std::int8_t>(c > 0 ? t[i] : -t[i]);
    }
    const auto out = run_rmsnorm(x, gain, 7, 0);
    EXPECT_EQ(out, expect) << "c " << c << ", " << mismatch_report(expect, out);
  }
}

TEST(RmsnormI8, SaturatesAtBothEnds) {
  // x / rms(x) = +-1 and gain 32767 / sqrt(4): +-16383.5 saturates to 127 / -128.
  const std::vector<std::int16_t> x{100, -100, 100, -100};
  const std::vector<std::int16_t> gain(4, 32767);
  const auto out = run_rmsnorm(x, gain, 0, 0);
  const std::vector<std::int8_t> expect{127, -128, 127, -128};
  EXPECT_EQ(out, expect) << mismatch_report(expect, out);
  // Negative gains flip the signs.
  const std::vector<std::int16_t> neg(4, -32768);
  const auto out_neg = run_rmsnorm(x, neg, 0, 0);
  const std::vector<std::int8_t> expect_neg{-128, 127, -128, 127};
  EXPECT_EQ(out_neg, expect_neg) << mismatch_report(expect_neg, out_neg);
}

TEST(RmsnormI8, LengthOneGivesSignTimesGain) {
  const std::vector<std::int16_t> gain{100 * 16};  // 100.0 in Q.4
  for (const std::int16_t v : std::vector<std::int16_t>{1, -1, 5, -5, 32767, -32768}) {
    const auto out = run_rmsnorm({v}, gain, 4, 0);
    const std::vector<std::int8_t> expect{static_cast<std::int8_t>(v > 0 ? 100 : -100)};
    EXPECT_EQ(out, expect) << "x " << v;
  }
  const auto zero = run_rmsnorm({0}, gain, 4, 0);
  EXPECT_EQ(zero, std::vector<std::int8_t>{0});
}

// eps is added to the sum of squares: x = (3, 4) has sum 25; eps = 75 makes it 100.
TEST(RmsnormI8, EpsIsAddedToSumOfSquares) {
  const std::vector<std::int16_t> x{3, 4};
  const std::vector<std::int16_t> gain(2, 10 * 1024);  // 10.0 in Q.10
  const auto no_eps = run_rmsnorm(x, gain, 10, 0);
  const std::vector<std::int8_t> expect_no_eps{6, 8};  // 10 * x / 5
  EXPECT_EQ(no_eps, expect_no_eps) << mismatch_report(expect_no_eps, no_eps);
  const auto with_eps = run_rmsnorm(x, gain, 10, 75);
  const std::vector<std::int8_t> expect_eps{3, 4};  // 10 * x / 10
  EXPECT_EQ(with_eps, expect_eps) << mismatch_report(expect_eps, with_eps);
  // An all-zero row with eps > 0 is also 0.
  const auto zero = run_rmsnorm({0, 0}, gain, 10, 75);
  EXPECT_EQ(zero, (std::vector<std::int8_t>{0, 0}));
}

// The longest row the quantiser allows (4096) at full scale, with the largest eps (< 2^40) and
// the largest gain exponent (13): the sum of squares stays below 2^44, which keeps the
// requantisation shift <= 63. Odd length too.
TEST(RmsnormI8, LongestRowsAtFullScale) {
  for (const std::size_t n : {4095, 4096}) {
    for (const std::int16_t c : std::vector<std::int16_t>{-32768, 32767}) {
      std::vector<std::int16_t> x(n, c);
      x[1] = 0;
      for (const int frac : {0, 13}) {
        const std::vector<std::int16_t> gain(n, 32767);
        const std::uint64_t eps = (std::uint64_t{1} << 40) - 1;
        const auto out = run_rmsnorm(x, gain, frac, eps);
        const auto ref = rmsnorm_ref(x, gain, frac, eps);
        for (std::size_t i = 0; i < n; ++i) {
          const double r = std::clamp(ref[i], -128.0, 127.0);
          ASSERT_LE(std::fabs(double(out[i]) - r), 0.5 + std::fabs(r) * std::ldexp(1.0, -27))
              << "n " << n << ", c " << c << ", frac " << frac << ", index " << i << ", ref "
              << ref[i] << ", found " << int(out[i]);
        }
      }
    }
  }
}

}  // namespace
