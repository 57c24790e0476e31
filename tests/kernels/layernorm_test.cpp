// SPDX-License-Identifier: Apache-2.0
// Tests of the three-pass integer LayerNorm (int16 in, int8 out).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_test_util.hpp"
#include "passim/kernels/layernorm.hpp"

namespace {

using passim::test::MaxError;
using passim::test::mismatch_report;
using passim::test::seeded_rng;
using passim::test::uniform_int;
using passim::test::uniform_real;

struct Row {
  std::vector<std::int16_t> x, gain, bias;
  int frac = 0;
  std::uint64_t eps = 0;
};

std::vector<std::int8_t> run_layernorm(const Row& r) {
  std::vector<std::int8_t> out(r.x.size(), std::int8_t{99});  // poison
  passim::kernels::layernorm_i8(
      r.x, passim::kernels::LayerNormParams{r.gain, r.bias, r.frac, r.eps}, out);
  return out;
}

/// The standard LayerNorm (Ba et al. 2016) in double with the kernel's integer
/// gains and biases: (x[i] - mean) * (gain[i] / 2^frac) / sqrt(sum((x -
/// mean)^2) + eps) + bias[i], with the exact (unrounded) mean; the deviation
/// term is 0 when the sum and eps are both 0.
std::vector<double> layernorm_ref(const Row& r) {
  const double n = double(r.x.size());
  double sum = 0.0;
  for (const std::int16_t v : r.x) {
    sum += v;  // exact
  }
  const double mean = sum / n;
  double ssd = double(r.eps);
  for (const std::int16_t v : r.x) {
    ssd += (v - mean) * (v - mean);
  }
  std::vector<double> out(r.x.size());
  for (std::size_t i = 0; i < r.x.size(); ++i) {
    const double dev = ssd == 0.0 ? 0.0 : (r.x[i] - mean) / std::sqrt(ssd);
    out[i] = dev * std::ldexp(double(r.gain[i]), -r.frac) + r.bias[i];
  }
  return out;
}

/// Tolerance in output LSB for channel i. The kernel subtracts m = round(mean)
/// = mean - delta
/// (|delta| <= 1/2), so its sum of squares is B = S + n delta^2 + eps instead
/// of A = S + eps. With c = gain / 2^frac the normalised value moves by at most
///   |c| (|delta| / sqrt(B) + n delta^2 / B)
/// (the numerator gains delta; 1 - sqrt(A/B) <= n delta^2 / B and |x - mean| <=
/// sqrt(A)). Add 0.5 for the one rounding and |c| 2^-27 for the reciprocal
/// square root (< 2^-28 relative).
double layernorm_tol(const Row& r, std::size_t i) {
  const double n = double(r.x.size());
  double sum = 0.0;
  for (const std::int16_t v : r.x) {
    sum += v;
  }
  const double mean = sum / n;
  const double delta = std::fabs(mean - std::floor(mean + 0.5));
  double b = double(r.eps);
  for (const std::int16_t v : r.x) {
    const double d = v - std::floor(mean + 0.5);
    b += d * d;
  }
  const double c = std::fabs(std::ldexp(double(r.gain[i]), -r.frac));
  const double shift = b == 0.0 ? 0.0 : c * (delta / std::sqrt(b) + n * delta * delta / b);
  return 0.5 + shift + c * std::ldexp(1.0, -27);
}

/// Gains like a quantiser's: real gains up to g_real sqrt(n), frac as large as
/// fits int16 (<= 13).
void random_gains(std::mt19937& rng, Row& r, double g_real) {
  const std::size_t n = r.x.size();
  const double g_max = g_real * std::sqrt(double(n));
  r.frac = 13;
  while (r.frac > 0 && g_max * std::ldexp(1.0, r.frac) > 32767.0) {
    --r.frac;
  }
  r.gain.resize(n);
  r.bias.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    r.gain[i] = static_cast<std::int16_t>(
        std::clamp(std::nearbyint(uniform_real(rng, -g_max, g_max) * std::ldexp(1.0, r.frac)),
                   -32768.0, 32767.0));
    r.bias[i] = uniform_int<std::int16_t>(rng, -40, 40);
  }
}

/// Runs the kernel, checks every channel against the reference (clamped to
/// int8: saturation) within `layernorm_tol`, and records the error.
void check_row(const Row& r, MaxError& err, const std::string& where, MaxError* wide = nullptr) {
  const auto out = run_layernorm(r);
  const auto ref = layernorm_ref(r);
  for (std::size_t i = 0; i < r.x.size(); ++i) {
    const double want = std::clamp(ref[i], -128.0, 127.0);
    const double e = std::fabs(double(out[i]) - want);
    err.add(e, where + ", index " + std::to_string(i));
    if (wide != nullptr) {
      wide->add(e, where + ", index " + std::to_string(i));
    }
    ASSERT_LE(e, layernorm_tol(r, i))
        << where << ", index " << i << ": x " << r.x[i] << ", gain " << r.gain[i] << ", frac "
        << r.frac << ", bias " << r.bias[i] << ", eps " << r.eps << ", ref " << ref[i] << ", found "
        << int(out[i]);
  }
}

TEST(LayernormI8, MatchesDoubleReferenceOnRandomRows) {
  const std::uint32_t seed = 311;
  auto rng = seeded_rng(seed);
  MaxError err;
  MaxError wide;  // n >= 64, amplitude >= 64 LSB: the mean-rounding term is
                  // small there
  for (const std::size_t n : {1, 2, 3, 7, 17, 64, 171, 172, 255, 512, 4095, 4096}) {
    const int trials = n >= 4095 ? 10 : 100;
    for (int trial = 0; trial < trials; ++trial) {
      // Random centre and amplitude 2^[0, 14], sometimes an outlier at the
      // int16 limits.
      Row r;
      const double amp = std::exp2(uniform_real(rng, 0.0, 14.0));
      const double centre = uniform_real(rng, -32767.0 + amp, 32767.0 - amp);
      r.x.resize(n);
      for (auto& v : r.x) {
        v = static_cast<std::int16_t>(
            std::clamp(std::nearbyint(centre + uniform_real(rng, -amp, amp)), -32768.0, 32767.0));
      }
      if (trial % 5 == 0) {
        r.x[uniform_int<std::size_t>(rng, 0, std::int64_t(n) - 1)] =
            trial % 10 == 0 ? -32768 : 32767;
      }
      random_gains(rng, r, 100.0);  // outputs up to ~140: some saturate
      r.eps = trial % 3 == 0 ? 0 : std::uint64_t(std::exp2(uniform_real(rng, 0.0, 40.0)));
      check_row(r, err,
                "seed " + std::to_string(seed) + ", n " + std::to_string(n) + ", trial " +
                    std::to_string(trial),
                n >= 64 && amp >= 64.0 ? &wide : nullptr);
    }
  }
  err.print("layernorm_i8 vs double", "LSB", seed);
  wide.print("layernorm_i8 vs double, n >= 64, amplitude >= 64 LSB", "LSB", seed);
}

// A constant row has zero variance: every deviation is 0 (the rounded mean of n
// equal values is exact), so the output is the bias saturated to int8, for eps
// = 0 (no division by zero) and eps > 0 alike.
TEST(LayernormI8, ConstantRowGivesBias) {
  for (const std::size_t n : {1, 2, 5, 64, 4096}) {
    for (const std::int16_t c : std::vector<std::int16_t>{0, 1, -1, 20000, 32767, -32768}) {
      for (const std::uint64_t eps : {std::uint64_t{0}, std::uint64_t{1} << 20}) {
        Row r;
        r.x.assign(n, c);
        r.gain.assign(n, 32767);
        r.frac = 13;
        r.eps = eps;
        std::vector<std::int8_t> expect(n);
        for (std::size_t i = 0; i < n; ++i) {
          r.bias.push_back(static_cast<std::int16_t>(std::int32_t(i % 300) - 150));
          expect[i] = static_cast<std::int8_t>(std::clamp<std::int32_t>(r.bias[i], -128, 127));
        }
        const auto out = run_layernorm(r);
        EXPECT_EQ(out, expect) << "n " << n << ", c " << c << ", eps " << eps << ", "
                               << mismatch_report(expect, out);
      }
    }
  }
}

// 20000 +- 1 alternating: the large mean cancels exactly. For even n the mean
// is 20000, every deviation is +-1 and the sum of squares is n, so with gain =
// t * sqrt(n) * 2^frac the output is exactly +-t + bias. For odd n the mean is
// 20000 + 1/n, rounded to 20000; the reference check covers it with the
// mean-rounding term.
TEST(LayernormI8, AlternatingAroundLargeMean) {
  for (const std::size_t n : {4, 16, 64, 256, 1024, 4096}) {
    // n is a power of 4, so sqrt(n) and the reciprocal square root are exact
    // powers of two.
    const std::int32_t root = std::int32_t{1} << (std::bit_width(n) - 1) / 2;
    Row r;
    r.frac = 13;
    while (20 * root * (1 << r.frac) > 32767) {  // |gain| = |t| sqrt(n) 2^frac, |t| <= 20
      --r.frac;
    }
    std::vector<std::int8_t> expect(n);
    for (std::size_t i = 0; i < n; ++i) {
      r.x.push_back(static_cast<std::int16_t>(i % 2 == 0 ? 20001 : 19999));
      const std::int32_t t = std::int32_t(i % 41) - 20;
      r.gain.push_back(static_cast<std::int16_t>(t * root * (1 << r.frac)));
      r.bias.push_back(static_cast<std::int16_t>(std::int32_t(i % 7) - 3));
      expect[i] = static_cast<std::int8_t>((i % 2 == 0 ? t : -t) + r.bias[i]);
    }
    const auto out = run_layernorm(r);
    EXPECT_EQ(out, expect) << "n " << n << ", " << mismatch_report(expect, out);
  }
  MaxError err;
  auto rng = seeded_rng(312);
  for (const std::size_t n : {3, 5, 7, 9, 33, 101, 4095}) {
    for (const std::int16_t centre : std::vector<std::int16_t>{20000, -20000, 32766}) {
      Row r;
      for (std::size_t i = 0; i < n; ++i) {
        r.x.push_back(static_cast<std::int16_t>(i % 2 == 0 ? centre + 1 : centre - 1));
      }
      random_gains(rng, r, 20.0);
      check_row(r, err, "n " + std::to_string(n) + ", centre " + std::to_string(centre));
    }
  }
  err.print("layernorm_i8 vs double, odd alternating rows", "LSB", 312);
}

// A row of length 1 is constant: its output is the bias whatever x, gain and
// eps.
TEST(LayernormI8, LengthOneGivesBias) {
  for (const std::int16_t v : std::vector<std::int16_t>{0, 1, -1, 32767, -32768}) {
    for (const std::int16_t b : std::vector<std::int16_t>{0, 5, -7, 300, -300}) {
      Row r{{v}, {32767}, {b}, 13, 0};
      const auto out = run_layernorm(r);
      EXPECT_EQ(out, std::vector<std::int8_t>{static_cast<std::int8_t>(
                         std::clamp<std::int32_t>(b, -128, 127))})
          << "x " << v << ", bias " << b;
    }
  }
}

// Small rows worked by hand. Odd lengths: (0, 0, 3) has mean 1,
// deviations (-1, -1, 2), sum of squares 6: gain 10 sqrt(6) gives (-10, -10,
// 20).
TEST(LayernormI8, SmallRowsExact) {
  Row two{{100, -100}, {100 * 64, 100 * 64}, {0, 1}, 6, 0};
  // (100, -100): mean 0, ssd 20000, d / sqrt(ssd) = +-1/sqrt(2); gain 6400 /
  // 2^6 = 100 gives
  // +-70.71 -> 71 and -71 (+ bias 1 = -70).
  EXPECT_EQ(run_layernorm(two), (std::vector<std::int8_t>{71, -70}));
  Row three{{0, 0, 3}, {}, {0, 0, 0}, 10, 0};
  const auto g = static_cast<std::int16_t>(std::lround(10.0 * std::sqrt(6.0) * 1024.0));
  three.gain = {g, g, g};
  EXPECT_EQ(run_layernorm(three), (std::vector<std::int8_t>{-10, -10, 20}));
  // eps is added to the sum of squared deviations: 6 + 94 = 100 with gain 10 *
  // 2^10 (deviations / 10 * 10).
  Row eps{{0, 0, 3}, {10240, 10240, 10240}, {0, 0, 0}, 10, 94};
  EXPECT_EQ(run_layernorm(eps), (std::vector<std::int8_t>{-1, -1, 2}));
}

TEST(LayernormI8, SaturatesAtBothEnds) {
  // Deviations +-100 over sqrt(40000) = 200: +-0.5, times 32767 (frac 0)
  // saturates.
  Row r{{100, -100, 100, -100}, std::vector<std::int16_t>(4, 32767), {0, 0, 0, 0}, 0, 0};
  EXPECT_EQ(run_layernorm(r), (std::vector<std::int8_t>{127, -128, 127, -128}));
  r.gain.assign(4, -32768);
  EXPECT_EQ(run_layernorm(r), (std::vector<std::int8_t>{-128, 127, -128, 127}));
  // The bias alone saturates too, and pushes a small value over the edge.
  Row b{{1, -1}, {2 * 1024, 2 * 1024}, {300, -300}, 10, 0};
  EXPECT_EQ(run_layernorm(b), (std::vector<std::int8_t>{127, -128}));
}

// The longest rows at the extremes of int16 (deviations of 65535 magnitude, d *
// gain near 2^31) with the largest gain exponent and eps: still within the
// tolerance.
TEST(LayernormI8, LongestRowsAtFullScale) {
  MaxError err;
  for (const std::size_t n : {2, 4095, 4096}) {
    Row r;
    r.x.assign(n, 32767);
    r.x[0] = -32768;
    r.gain.assign(n, -32768);
    r.gain[1] = 32767;
    r.bias.assign(n, 0);
    for (const int frac : {0, 13}) {
      for (const std::uint64_t eps : {std::uint64_t{0}, (std::uint64_t{1} << 40) - 1}) {
        r.frac = frac;
        r.eps = eps;
        check_row(r, err, "n " + std::to_string(n) + ", frac " + std::to_string(frac));
      }
    }
  }
}

}  // namespace
