// SPDX-License-Identifier: Apache-2.0
// Tests of the integer Softmax (Q.10 logits in, Q0.15 probabilities out): the three-pass
// `softmax_i16` and the online two-pass `softmax_online_i16`, against each other and double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.hpp"
#include "passim/kernels/softmax.hpp"

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

// ---- softmax_online_i16 -----------------------------------------------------------------------

std::vector<std::int16_t> run_online(const std::vector<std::int32_t>& x, std::size_t lanes) {
  std::vector<std::int16_t> out(x.size(), std::int16_t{-1});  // poison
  passim::kernels::softmax_online_i16(x, lanes, out);
  return out;
}

/// max_i |online_i - three_pass_i| in LSB of Q0.15.
int online_diff(const std::vector<std::int32_t>& x, std::size_t lanes) {
  const auto a = run_softmax(x);
  const auto b = run_online(x, lanes);
  int d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    d = std::max(d, std::abs(int{a[i]} - int{b[i]}));
  }
  return d;
}

/// Lane counts the golden kernel is checked with (the hardware's L and the sequential Alg. 3).
const std::vector<std::size_t> kLaneCounts = {1, 2, 3, 4, 8, 16, 64};

// Bounds on |online - three-pass| in LSB, per row family (docs/numerics.md 4.4). Both versions
// share pass 1's maximum and the normalising pass, so they differ only through the sum. The
// online sum is rescaled at every new running maximum by i-exp(d) / kExpOne, whose slope at
// d = 0 is 2 kExpB / kExpOne = 0.970 per unit of d instead of 1: a sum carried through many
// small rises decays 3% too slowly per unit. Random rows rise rarely; increasing rows rise at
// every element, but then every element is close to the maximum and has little mass; the worst
// rows put a large cluster far below the maximum and reach it by many small rises.
constexpr int kRandomRowBound = 48;         // random rows, n <= 1000 (measured 31)
constexpr int kIncreasingRowBound = 128;    // linear ramps and sorted random rows (measured 89)
constexpr int kClusterRowBound512 = 512;    // slowly rescaled cluster, n <= 512 (measured 426)
constexpr int kClusterRowBound4096 = 1024;  // same, n <= 4096 (measured 710)

TEST(SoftmaxOnlineI16, LengthOneIsExactlyOne) {
  for (const std::size_t lanes : kLaneCounts) {
    for (const std::int32_t v : {0, 5, -7, 1 << 20, kI32Min, kI32Max}) {
      EXPECT_EQ(run_online({v}, lanes), std::vector<std::int16_t>{kProbOne})
          << "x " << v << ", lanes " << lanes;
    }
  }
}

// Every element equals the running maximum of its lane, so nothing is ever rescaled by less
// than 1.0: the sum is n * kExpOne, as in the three-pass version, for any lane count.
TEST(SoftmaxOnlineI16, AllEqualRowsMatchThreePassExactly) {
  for (std::size_t n = 1; n <= 600; ++n) {
    for (const std::int32_t v : {0, -12345, kI32Min, kI32Max}) {
      const std::vector<std::int32_t> x(n, v);
      const auto expect = run_softmax(x);
      for (const std::size_t lanes : kLaneCounts) {
        const auto out = run_online(x, lanes);
        ASSERT_EQ(out, expect) << "n " << n << ", x " << v << ", lanes " << lanes << ", "
                               << mismatch_report(expect, out);
      }
    }
  }
}

// With one lane and the maximum first, no rescale happens: the running sum adds the very
// exponentials of the three-pass version.
TEST(SoftmaxOnlineI16, OneLaneWithMaximumFirstMatchesThreePassExactly) {
  const std::uint32_t seed = 410;
  auto rng = seeded_rng(seed);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t n = uniform_int<std::size_t>(rng, 1, 600);
    std::vector<std::int32_t> x(n);
    for (auto& v : x) {
      v = uniform_int<std::int32_t>(rng, -40 * 1024, 40 * 1024);
    }
    if (trial % 2 == 0) {
      std::sort(x.begin(), x.end(), std::greater<>());  // decreasing rows
    } else {
      std::swap(x[0], *std::max_element(x.begin(), x.end()));
    }
    const auto expect = run_softmax(x);
    const auto out = run_online(x, 1);
    ASSERT_EQ(out, expect) << "seed " << seed << ", trial " << trial << ", "
                           << mismatch_report(expect, out);
  }
}

TEST(SoftmaxOnlineI16, Int32ExtremesMatchThreePass) {
  const std::vector<std::vector<std::int32_t>> rows = {
      {kI32Min, kI32Max},
      {kI32Max, kI32Min},
      {kI32Max, kI32Min, kI32Max},
      {kI32Min, kI32Min, kI32Min},
      {kI32Min, kI32Max, 0, -1},
      {0, 20 * 1024},
      {kI32Min, kI32Min + 1, kI32Min, kI32Max - 1, kI32Max}};
  for (const auto& x : rows) {
    const auto expect = run_softmax(x);
    for (const std::size_t lanes : kLaneCounts) {
      const auto out = run_online(x, lanes);
      EXPECT_EQ(out, expect) << "lanes " << lanes << ", " << mismatch_report(expect, out);
    }
  }
}

// Lanes beyond the row length stay empty, (INT32_MIN, 0), and add nothing.
TEST(SoftmaxOnlineI16, EmptyLanesAddNothing) {
  const std::uint32_t seed = 411;
  auto rng = seeded_rng(seed);
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t n = uniform_int<std::size_t>(rng, 1, 16);
    std::vector<std::int32_t> x(n);
    for (auto& v : x) {
      v = uniform_int<std::int32_t>(rng, -16 * 1024, 16 * 1024);
    }
    const auto expect = run_online(x, n);
    for (const std::size_t lanes : {n + 1, std::size_t{16}, std::size_t{64}}) {
      ASSERT_EQ(run_online(x, lanes), expect)
          << "seed " << seed << ", trial " << trial << ", lanes " << lanes;
    }
  }
}

TEST(SoftmaxOnlineI16, RandomRowsWithinBoundOfThreePass) {
  const std::uint32_t seed = 412;
  auto rng = seeded_rng(seed);
  MaxError err;
  for (int trial = 0; trial < 4000; ++trial) {
    const std::size_t n = trial % 8 == 0 ? 512 : uniform_int<std::size_t>(rng, 1, 1000);
    const std::int32_t span = std::vector<std::int32_t>{
        64, 1024, 5 * 1024, 8 * 1024, 16 * 1024, 40 * 1024, kI32Max}[std::size_t(trial % 7)];
    std::vector<std::int32_t> x(n);
    for (auto& v : x) {
      v = span == kI32Max ? uniform_int<std::int32_t>(rng, kI32Min, kI32Max)
                          : uniform_int<std::int32_t>(rng, -span, span);
    }
    for (const std::size_t lanes : kLaneCounts) {
      const int d = online_diff(x, lanes);
      err.add(d, "n " + std::to_string(n) + ", span " + std::to_string(span) + ", lanes " +
                     std::to_string(lanes));
      ASSERT_LE(d, kRandomRowBound)
          << "seed " << seed << ", trial " << trial << ", lanes " << lanes;
    }
  }
  err.print("softmax_online_i16 vs softmax_i16, random rows", "LSB", seed);
}

// Increasing rows rescale at every element (of each lane): linear ramps of every slope from
// 1 to 3000 LSB (0.001 to 2.9 in logits) and sorted random rows, up to 4096 elements.
TEST(SoftmaxOnlineI16, IncreasingRowsWithinBoundOfThreePass) {
  MaxError err;
  for (const std::size_t n : {2u, 3u, 17u, 128u, 512u, 4096u}) {
    for (std::int32_t slope = 1; slope <= 3000; slope += (slope < 400 ? 1 : 13)) {
      std::vector<std::int32_t> x(n);
      for (std::size_t i = 0; i < n; ++i) {
        x[i] = std::int32_t(i) * slope - (1 << 20);
      }
      for (const std::size_t lanes : {1u, 2u, 4u, 8u}) {
        const int d = online_diff(x, lanes);
        const std::string where = "ramp n " + std::to_string(n) + ", slope " +
                                  std::to_string(slope) + ", lanes " + std::to_string(lanes);
        err.add(d, where);
        ASSERT_LE(d, kIncreasingRowBound) << where;
      }
    }
  }
  const std::uint32_t seed = 413;
  auto rng = seeded_rng(seed);
  for (int trial = 0; trial < 20000; ++trial) {
    const std::size_t n = uniform_int<std::size_t>(rng, 2, 200);
    const auto span = uniform_int<std::int32_t>(rng, 256, 40000);
    std::vector<std::int32_t> x(n);
    for (auto& v : x) {
      v = uniform_int<std::int32_t>(rng, -span, span);
    }
    std::sort(x.begin(), x.end());
    const std::size_t lanes = kLaneCounts[std::size_t(trial) % 4];
    const int d = online_diff(x, lanes);
    const std::string where =
        "sorted trial " + std::to_string(trial) + ", lanes " + std::to_string(lanes);
    err.add(d, where);
    ASSERT_LE(d, kIncreasingRowBound) << "seed " << seed << ", " << where;
  }
  err.print("softmax_online_i16 vs softmax_i16, increasing rows", "LSB", seed);
}

// The worst family found: k equal logits at 0, then j rises of s LSB, then one more of g:
// the cluster is carried through j rescales of s / 1024 each and ends about ln k below the
// maximum, where its mass matters most. A random search over (k, s, j, g) with one lane.
TEST(SoftmaxOnlineI16, SlowlyRescaledClusterWithinBound) {
  const std::uint32_t seed = 414;
  auto rng = seeded_rng(seed);
  for (const std::size_t n_max : {512u, 4096u}) {
    const int bound = n_max == 512 ? kClusterRowBound512 : kClusterRowBound4096;
    MaxError err;
    for (int trial = 0; trial < 3000; ++trial) {
      const auto k = uniform_int<std::size_t>(rng, n_max / 2, n_max - 2);
      const auto j = uniform_int<std::size_t>(rng, 1, n_max - 1 - k);
      const auto s = uniform_int<std::int32_t>(rng, 1, 300);
      const auto g = uniform_int<std::int32_t>(rng, 0, 8000);
      std::vector<std::int32_t> x(k, 0);
      for (std::size_t i = 1; i <= j; ++i) {
        x.push_back(std::int32_t(i) * s);
      }
      x.push_back(std::int32_t(j) * s + g);
      const int d = online_diff(x, 1);
      const std::string where = "k " + std::to_string(k) + ", j " + std::to_string(j) + ", s " +
                                std::to_string(s) + ", g " + std::to_string(g);
      err.add(d, where);
      ASSERT_LE(d, bound) << "seed " << seed << ", n <= " << n_max << ", " << where;
    }
    err.print("softmax_online_i16 vs softmax_i16, cluster rows n <= " + std::to_string(n_max),
              "LSB", seed);
  }
}

// Against double, with the three-pass tolerance (i-exp error d on every exponential, 0.5 LSB
// rounding): the rescaled sum stays inside it for logits in [-5, 5].
TEST(SoftmaxOnlineI16, MatchesDoubleReferenceOnOddLengths) {
  const std::uint32_t seed = 415;
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
      } else if (trial % 4 == 1) {  // increasing: a rescale at every element
        std::sort(x.begin(), x.end());
      }
      const auto ref = softmax_ref(x);
      for (const std::size_t lanes : {1u, 2u, 8u}) {
        const auto out = run_online(x, lanes);
        for (std::size_t i = 0; i < n; ++i) {
          const double e = std::fabs(double(out[i]) - ref[i]);
          const double tol = ref[i] * 2.0 * d / (1.0 - d) + 0.501;
          const std::string where = "n " + std::to_string(n) + ", trial " + std::to_string(trial) +
                                    ", lanes " + std::to_string(lanes);
          err.add(e, where);
          rel.add(e / tol, where);
          ASSERT_LE(e, tol) << "seed " << seed << ", " << where << ", index " << i << ": x " << x[i]
                            << ", ref " << ref[i] << ", found " << out[i];
        }
      }
    }
  }
  err.print("softmax_online_i16 vs double, logits in [-5, 5]", "LSB", seed);
  rel.print("softmax_online_i16 error / tolerance", "fraction", seed);
}

TEST(SoftmaxRowI16, SelectsTheVersion) {
  const std::vector<std::int32_t> x = {0, 700, 1400, 2100, 2800, -300, 4000};
  std::vector<std::uint32_t> e(x.size());
  std::vector<std::int16_t> three(x.size()), online(x.size());
  passim::kernels::softmax_row_i16(x, {}, e, three);
  passim::kernels::softmax_row_i16(x, {passim::kernels::SoftmaxMode::kOnline, 2}, e, online);
  EXPECT_EQ(three, run_softmax(x));
  EXPECT_EQ(online, run_online(x, 2));
}

}  // namespace
