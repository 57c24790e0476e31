// SPDX-License-Identifier: Apache-2.0
// Tests of the three-pass integer Softmax (Q.10 logits in, Q0.15 probabilities out).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.hpp"
#include "passim/kernels.hpp"

namespace {

using passim::kProbOne;
using passim::test::MaxError;
using passim::test::mismatch_report;
using passim::test::seeded_rng;
using passim::test::uniform_int;

constexpr std::int32_t kI32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kI32Max = std::numeric_limits<std::int32_t>::max();

std::vector<std::int16_t> run_softmax(const std::vector<std::int32_t>& x) {
  std::vector<std::uint32_t> e(x.size());
  std::vector<std::int16_t> out(x.size(), std::int16_t{-1});  // poison
  passim::kernels::softmax_i16(x, e, out);
  return out;
}

/// Softmax of Q.10 logits in double, scaled to kProbOne.
std::vector<double> softmax_ref(const std::vector<std::int32_t>& x) {
  const double m = double(*std::max_element(x.begin(), x.end()));
  std::vector<double> p(x.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    p[i] = std::exp((double(x[i]) - m) / 1024.0);
    sum += p[i];
  }
  for (auto& v : p) {
    v *= double(kProbOne) / sum;
  }
  return p;
}

std::int64_t row_sum(const std::vector<std::int16_t>& p) {
  return std::accumulate(p.begin(), p.end(), std::int64_t{0});
}

/// The documented row-sum bound: |sum - kProbOne| <= ceil(n/2) + 1 (n/2 from rounding each
/// output, < n/1024 from the floored reciprocal).
std::int64_t sum_bound(std::size_t n) { return std::int64_t((n + 1) / 2) + 1; }

TEST(SoftmaxI16, LengthOneIsExactlyOne) {
  for (const std::int32_t v : {0, 5, -7, 1 << 20, kI32Min, kI32Max}) {
    EXPECT_EQ(run_softmax({v}), std::vector<std::int16_t>{kProbOne}) << "x " << v;
  }
}

// An all-equal row gives e = kExpOne everywhere and every output is kProbOne / n rounded to
// nearest; the floored reciprocal sits just below, so exact halves (n = 2, 14, ...) round
// down: expect floor((2 kProbOne + n - 1) / 2n). (Holds while n < 714.)
TEST(SoftmaxI16, AllEqualRowIsUniform) {
  std::int64_t worst = 0;
  for (std::size_t n = 1; n <= 600; ++n) {
    for (const std::int32_t v : {0, -12345, kI32Min, kI32Max}) {
      const std::vector<std::int32_t> x(n, v);
      const auto out = run_softmax(x);
      const auto q =
          static_cast<std::int16_t>((2 * kProbOne + std::int32_t(n) - 1) / (2 * std::int32_t(n)));
      const std::vector<std::int16_t> expect(n, q);
      ASSERT_EQ(out, expect) << "n " << n << ", x " << v << ", " << mismatch_report(expect, out);
      const std::int64_t dev = std::llabs(row_sum(out) - kProbOne);
      worst = std::max(worst, dev);
      ASSERT_LE(dev, sum_bound(n)) << "n " << n;
    }
  }
  std::printf("[ MEASURED ] all-equal rows n = 1..600: max |sum - 32767| = %lld LSB\n",
              static_cast<long long>(worst));
}

TEST(SoftmaxI16, Int32ExtremesAreHandled) {
  // Differences are taken in int64 and clamped at -2^20 LSB, whose exp is 0.
  EXPECT_EQ(run_softmax({kI32Min, kI32Max}), (std::vector<std::int16_t>{0, kProbOne}));
  EXPECT_EQ(run_softmax({kI32Max, kI32Min}), (std::vector<std::int16_t>{kProbOne, 0}));
  EXPECT_EQ(run_softmax({kI32Max, kI32Min, kI32Max}), (std::vector<std::int16_t>{16383, 0, 16383}));
  EXPECT_EQ(run_softmax({kI32Min, kI32Min, kI32Min}),
            (std::vector<std::int16_t>{10922, 10922, 10922}));
  EXPECT_EQ(run_softmax({kI32Min, kI32Max, 0, -1}), (std::vector<std::int16_t>{0, kProbOne, 0, 0}));
  // A logit 20 below the maximum is below i-exp's range: exactly 0.
  EXPECT_EQ(run_softmax({0, 20 * 1024}), (std::vector<std::int16_t>{0, kProbOne}));
}

// Softmax only sees x - max(x), so adding a constant changes nothing, bit for bit.
TEST(SoftmaxI16, ShiftInvariant) {
  const std::uint32_t seed = 401;
  auto rng = seeded_rng(seed);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t n = uniform_int<std::size_t>(rng, 1, 64);
    std::vector<std::int32_t> x(n);
    for (auto& v : x) {
      v = uniform_int<std::int32_t>(rng, -20000, 20000);
    }
    const auto c = uniform_int<std::int32_t>(rng, -(1 << 30), 1 << 30);
    std::vector<std::int32_t> y(x);
    for (auto& v : y) {
      v += c;
    }
    const auto px = run_softmax(x);
    const auto py = run_softmax(y);
    ASSERT_EQ(py, px) << "seed " << seed << ", trial " << trial << ", shift " << c << ", "
                      << mismatch_report(px, py);
  }
}

// A larger logit never gets a smaller probability (i-exp is monotone, one reciprocal per row).
TEST(SoftmaxI16, MonotoneInLogits) {
  const std::uint32_t seed = 402;
  auto rng = seeded_rng(seed);
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t n = uniform_int<std::size_t>(rng, 2, 512);
    std::vector<std::int32_t> x(n);
    for (auto& v : x) {
      v = uniform_int<std::int32_t>(rng, -16 * 1024, 0);
    }
    const auto p = run_softmax(x);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
    for (std::size_t j = 1; j < n; ++j) {
      ASSERT_LE(p[order[j - 1]], p[order[j]])
          << "seed " << seed << ", trial " << trial << ": x " << x[order[j - 1]] << " -> "
          << p[order[j - 1]] << " but x " << x[order[j]] << " -> " << p[order[j]];
    }
  }
}

// Logits uniform in [-5, 5] (Q.10), so every x - max is in [-10, 0] where i-exp's relative
// error is at most d = kIexpRelErr (2.2%). p_i = e_i / sum: with each e off by a factor in
// [1 - d, 1 + d], p_i is off by at most p_i * 2d / (1 - d). Add 0.5 LSB for rounding the
// output and < 0.001 LSB for the floored reciprocal: tol_i = 32767 p_i 2d / (1 - d) + 0.501.
TEST(SoftmaxI16, MatchesDoubleReferenceOnOddLengths) {
  const std::uint32_t seed = 403;
  auto rng = seeded_rng(seed);
  const double d = passim::test::kIexpRelErr;
  MaxError err, rel;
  for (const std::size_t n : {2, 3, 5, 7, 31, 33, 127, 255, 511, 512}) {
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<std::int32_t> x(n);
      for (auto& v : x) {
        v = uniform_int<std::int32_t>(rng, -5 * 1024, 5 * 1024);
      }
      if (trial % 4 == 0) {  // a peaked row: one logit 8 above all the others
        for (auto& v : x) {
          v = std::min(v, -3 * 1024);
        }
        x[uniform_int<std::size_t>(rng, 0, std::int64_t(n) - 1)] = 5 * 1024;
      }
      const auto out = run_softmax(x);
      const auto ref = softmax_ref(x);
      for (std::size_t i = 0; i < n; ++i) {
        const double e = std::fabs(double(out[i]) - ref[i]);
        const double tol = ref[i] * 2.0 * d / (1.0 - d) + 0.501;
        err.add(e, "n " + std::to_string(n) + ", trial " + std::to_string(trial));
        rel.add(e / tol, "n " + std::to_string(n) + ", trial " + std::to_string(trial));
        ASSERT_LE(e, tol) << "seed " << seed << ", n " << n << ", trial " << trial << ", index "
                          << i << ": x " << x[i] << ", ref " << ref[i] << ", found " << out[i];
      }
      ASSERT_LE(std::llabs(row_sum(out) - kProbOne), sum_bound(n))
          << "seed " << seed << ", n " << n << ", trial " << trial;
    }
  }
  err.print("softmax_i16 vs double, logits in [-5, 5]", "LSB", seed);
  rel.print("softmax_i16 error / tolerance", "fraction", seed);
}

// The model's context length: one row of 512 realistic attention logits.
TEST(SoftmaxI16, ContextLength512) {
  const std::uint32_t seed = 404;
  auto rng = seeded_rng(seed);
  const double d = passim::test::kIexpRelErr;
  std::vector<std::int32_t> x(512);
  for (auto& v : x) {
    v = uniform_int<std::int32_t>(rng, -4 * 1024, 4 * 1024);
  }
  x[511] = 6 * 1024;  // the newest position dominates a little
  const auto out = run_softmax(x);
  const auto ref = softmax_ref(x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_LE(std::fabs(double(out[i]) - ref[i]), ref[i] * 2.0 * d / (1.0 - d) + 0.501)
        << "seed " << seed << ", index " << i << ": x " << x[i];
  }
  const std::int64_t sum = row_sum(out);
  std::printf("[ MEASURED ] n = 512 row (seed %u): sum %lld, bound 32767 +- %lld\n", seed,
              static_cast<long long>(sum), static_cast<long long>(sum_bound(512)));
  EXPECT_LE(std::llabs(sum - kProbOne), sum_bound(512));
}

// |sum - kProbOne| <= ceil(n/2) + 1 for any row: narrow, wide, peaked and extreme logits.
TEST(SoftmaxI16, RowSumWithinBound) {
  const std::uint32_t seed = 405;
  auto rng = seeded_rng(seed);
  std::int64_t worst = 0;
  double worst_frac = 0.0;
  for (int trial = 0; trial < 20000; ++trial) {
    const std::size_t n = trial % 10 == 0 ? 512 : uniform_int<std::size_t>(rng, 1, 600);
    const std::int32_t span = std::vector<std::int32_t>{
        1, 64, 1024, 8 * 1024, 40 * 1024, kI32Max}[std::size_t(trial % 6)];
    std::vector<std::int32_t> x(n);
    for (auto& v : x) {
      v = span == kI32Max ? uniform_int<std::int32_t>(rng, kI32Min, kI32Max)
                          : uniform_int<std::int32_t>(rng, -span, span);
    }
    const std::int64_t dev = std::llabs(row_sum(run_softmax(x)) - kProbOne);
    worst = std::max(worst, dev);
    worst_frac = std::max(worst_frac, double(dev) / double(sum_bound(n)));
    ASSERT_LE(dev, sum_bound(n)) << "seed " << seed << ", trial " << trial << ", n " << n;
  }
  std::printf(
      "[ MEASURED ] row sums (seed %u, 20000 rows, n <= 600): max |sum - 32767| = "
      "%lld LSB, max fraction of the bound %.3f\n",
      seed, static_cast<long long>(worst), worst_frac);
}

}  // namespace
