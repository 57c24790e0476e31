// SPDX-License-Identifier: Apache-2.0
// Tests of the int8 matmul (int32 accumulators that wrap) and the per-column requantisation
// of accumulator tiles.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.hpp"
#include "passim/kernels/matmul.hpp"

namespace {

using passim::Requant;
using passim::test::MaxError;
using passim::test::mismatch_report;
using passim::test::seeded_rng;
using passim::test::uniform_int;

/// out = a * w^T in double. Every partial sum is an integer below 2^53, so this is exact.
///   a: (m, k)   w: (n, k)   returns (m, n), all row-major
std::vector<double> matmul_ref(const std::vector<std::int8_t>& a, const std::vector<std::int8_t>& w,
                               std::size_t m, std::size_t k, std::size_t n) {
  std::vector<double> out(m * n, 0.0);
  for (std::size_t r = 0; r < m; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      double s = 0.0;
      for (std::size_t i = 0; i < k; ++i) {
        s += double(a[r * k + i]) * double(w[c * k + i]);
      }
      out[r * n + c] = s;
    }
  }
  return out;
}

std::vector<std::int8_t> random_i8(std::mt19937& rng, std::size_t n) {
  std::vector<std::int8_t> v(n);
  for (auto& x : v) {
    x = uniform_int<std::int8_t>(rng, -128, 127);
  }
  return v;
}

TEST(MatmulI8, WeightsAreOutByInRowMajor) {
  // a (2, 3), w (2, 3): out[r][c] = sum_i a[r][i] * w[c][i].
  const std::vector<std::int8_t> a{1, 2, 3, -4, 5, -6};
  const std::vector<std::int8_t> w{7, 8, 9, 10, -11, 12};
  std::vector<std::int32_t> out(4);
  passim::kernels::matmul_i8(a, w, out, 2, 3, 2);
  const std::vector<std::int32_t> expect{1 * 7 + 2 * 8 + 3 * 9, 1 * 10 - 2 * 11 + 3 * 12,
                                         -4 * 7 + 5 * 8 - 6 * 9, -4 * 10 - 5 * 11 - 6 * 12};
  EXPECT_EQ(out, expect) << mismatch_report(expect, out);
}

// Integer products and sums are exact, and so is the double reference while |sum| < 2^53:
// the tolerance is 0 LSB.
TEST(MatmulI8, MatchesDoubleReferenceOnOddSizes) {
  const std::uint32_t seed = 201;
  auto rng = seeded_rng(seed);
  struct Shape {
    std::size_t m, k, n;
  };
  MaxError err;
  for (const Shape s : {Shape{1, 17, 1}, Shape{7, 13, 5}, Shape{3, 1, 2}, Shape{1, 1, 1},
                        Shape{5, 64, 3}, Shape{64, 64, 64}, Shape{2, 4096, 3}}) {
    auto a = random_i8(rng, s.m * s.k);
    auto w = random_i8(rng, s.n * s.k);
    // Corner rows: all -128 activations against an all -128 and an all 127 weight row.
    std::fill_n(a.begin(), s.k, std::int8_t{-128});
    std::fill_n(w.begin(), s.k, std::int8_t{-128});
    if (s.n > 1) {
      std::fill_n(w.begin() + std::ptrdiff_t(s.k), s.k, std::int8_t{127});
    }
    std::vector<std::int32_t> out(s.m * s.n);
    passim::kernels::matmul_i8(a, w, out, s.m, s.k, s.n);
    const auto ref = matmul_ref(a, w, s.m, s.k, s.n);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double e = std::fabs(double(out[i]) - ref[i]);
      err.add(e, std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n));
      ASSERT_EQ(e, 0.0) << "seed " << seed << ", shape " << s.m << "x" << s.k << "x" << s.n
                        << ", first bad index " << i << " (row " << i / s.n << ", col " << i % s.n
                        << "): expected " << ref[i] << ", found " << out[i];
    }
  }
  err.print("matmul_i8 vs double", "LSB", seed);
}

TEST(MatmulI8, ExtremeValuesWithoutOverflow) {
  const std::size_t k = 4096;  // 4096 * 2^14 = 2^26, far from 2^31
  const std::vector<std::int8_t> a(k, -128);
  std::vector<std::int8_t> w(2 * k, -128);
  std::fill(w.begin() + std::ptrdiff_t(k), w.end(), std::int8_t{127});
  std::vector<std::int32_t> out(2);
  passim::kernels::matmul_i8(a, w, out, 1, k, 2);
  const std::vector<std::int32_t> expect{4096 * 16384, 4096 * -16256};
  EXPECT_EQ(out, expect) << mismatch_report(expect, out);
}

// The accumulator is int32 and wraps (two's complement) like the PE accumulators. 140000
// products of (-128)(-128) = 16384 sum to 2293760000 > 2^31 - 1; 127 * -128 to -2275840000.
TEST(MatmulI8, AccumulatorWrapsLikeInt32) {
  const std::size_t k = 140000;
  const std::vector<std::int8_t> a(k, -128);
  std::vector<std::int8_t> w(2 * k, -128);
  std::fill(w.begin() + std::ptrdiff_t(k), w.end(), std::int8_t{127});
  std::vector<std::int32_t> out(2);
  passim::kernels::matmul_i8(a, w, out, 1, k, 2);
  // The expected values, computed modulo 2^32 in uint32 and read back as two's complement.
  const auto wrap = [&](std::int32_t prod) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(prod) *
                                     static_cast<std::uint32_t>(k));
  };
  const std::vector<std::int32_t> expect{wrap(16384), wrap(-16256)};
  EXPECT_EQ(expect[0], -2001207296);  // 2293760000 - 2^32
  EXPECT_EQ(expect[1], 2019127296);   // -2275840000 + 2^32
  EXPECT_EQ(out, expect) << mismatch_report(expect, out);
}

// ---- digit groups (MATMUL_ACT) --------------------------------------------------------------

// One digit group is matmul_i8; two and three are Horner sums of the groups' products:
// out = 256 * (256 * p0 + p1) + p2 modulo 2^32 (the accumulator wraps), from the double
// reference of each group.
TEST(MatmulDigitsI8, GroupsAreHornerSumsOfTheirProducts) {
  auto rng = seeded_rng(31);
  const std::size_t m = 3, k = 5, n = 4;
  for (const std::size_t g_n : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
    std::vector<std::int8_t> a(m * g_n * k), w(n * g_n * k);
    for (auto& x : a) x = uniform_int<std::int8_t>(rng, -128, 127);
    for (auto& x : w) x = uniform_int<std::int8_t>(rng, -128, 127);
    std::vector<std::int64_t> expect(m * n, 0);
    for (std::size_t g = 0; g < g_n; ++g) {
      std::vector<std::int8_t> ag(m * k), wg(n * k);
      for (std::size_t r = 0; r < m; ++r) {
        std::copy_n(a.begin() + std::ptrdiff_t((r * g_n + g) * k), k,
                    ag.begin() + std::ptrdiff_t(r * k));
      }
      for (std::size_t c = 0; c < n; ++c) {
        std::copy_n(w.begin() + std::ptrdiff_t((c * g_n + g) * k), k,
                    wg.begin() + std::ptrdiff_t(c * k));
      }
      const std::vector<double> pg = matmul_ref(ag, wg, m, k, n);
      for (std::size_t i = 0; i < m * n; ++i) {
        expect[i] = 256 * expect[i] + std::int64_t(pg[i]);
      }
    }
    std::vector<std::int32_t> out(m * n);
    passim::kernels::matmul_digits_i8(a, w, out, m, k, n, g_n);
    for (std::size_t i = 0; i < m * n; ++i) {
      const auto wrapped = static_cast<std::int32_t>(static_cast<std::uint32_t>(expect[i]));
      ASSERT_EQ(out[i], wrapped) << "digits " << g_n << ", element " << i;
    }
  }
}

// 12-bit operands split as x = 256 * hi + lo (lo the signed low byte, hi in [-8, 8]) and laid
// out as three groups (hi.hi | hi.lo + lo.hi | lo.lo) multiply exactly: the recombined
// product, for every extreme pair too.
TEST(MatmulDigitsI8, TwelveBitSplitIsExact) {
  auto rng = seeded_rng(12);
  const std::size_t hs = 9, k = 2 * hs;
  const auto lo = [](int x) { return static_cast<std::int8_t>(x & 0xff); };
  const auto hi = [&](int x) { return static_cast<std::int8_t>((x - lo(x)) / 256); };
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int> q(hs), key(hs);
    for (std::size_t i = 0; i < hs; ++i) {
      q[i] = trial < 4 ? ((trial & 1) ? 2047 : -2048) : uniform_int<int>(rng, -2048, 2047);
      key[i] = trial < 4 ? ((trial & 2) ? 2047 : -2048) : uniform_int<int>(rng, -2048, 2047);
    }
    std::vector<std::int8_t> a(3 * k), w(3 * k, 0);
    std::int64_t dot = 0;
    for (std::size_t i = 0; i < hs; ++i) {
      for (std::size_t g = 0; g < 3; ++g) {
        a[g * k + i] = hi(q[i]);
        a[g * k + hs + i] = lo(q[i]);
      }
      w[i] = hi(key[i]);               // group 0: hi.hi
      w[k + i] = lo(key[i]);           // group 1: hi.lo + lo.hi
      w[k + hs + i] = hi(key[i]);
      w[2 * k + hs + i] = lo(key[i]);  // group 2: lo.lo
      dot += std::int64_t{q[i]} * key[i];
    }
    std::vector<std::int32_t> out(1);
    passim::kernels::matmul_digits_i8(a, w, out, 1, k, 1, 3);
    ASSERT_EQ(out[0], dot) << "trial " << trial;
  }
}

TEST(MatmulDigitsI8, RejectsDigitCountsOutsideOneToThree) {
  std::vector<std::int8_t> a(8), w(8);
  std::vector<std::int32_t> out(1);
  EXPECT_THROW(passim::kernels::matmul_digits_i8(a, w, out, 1, 2, 1, 0), std::invalid_argument);
  EXPECT_THROW(passim::kernels::matmul_digits_i8(a, w, out, 1, 2, 1, 4), std::invalid_argument);
  EXPECT_THROW(passim::kernels::matmul_digits_i8(a, w, out, 1, 4, 1, 3), std::invalid_argument);
}

// ---- requantisation of accumulator tiles ---------------------------------------------------

/// A tile with per-column steps, checked element by element against the scalar requantize().
template <typename T, typename Fn>
void check_tile_matches_scalar(Fn kernel, int bits, std::uint32_t seed) {
  auto rng = seeded_rng(seed);
  const std::size_t m = 7, n = 5;
  std::vector<std::int32_t> acc(m * n);
  for (auto& x : acc) {
    x = uniform_int<std::int32_t>(rng, std::numeric_limits<std::int32_t>::min(),
                                  std::numeric_limits<std::int32_t>::max()) >>
        uniform_int<int>(rng, 0, 31);
  }
  acc[0] = std::numeric_limits<std::int32_t>::max();
  acc[1] = std::numeric_limits<std::int32_t>::min();
  std::vector<Requant> rq(n);
  for (auto& r : rq) {
    r = passim::make_requant(std::exp2(passim::test::uniform_real(rng, -24.0, 0.0)));
  }
  std::vector<T> out(m * n);
  kernel(acc, rq, out, bits);
  std::vector<T> expect(m * n);
  for (std::size_t i = 0; i < acc.size(); ++i) {
    expect[i] = static_cast<T>(passim::requantize(acc[i], rq[i % n], bits));
  }
  EXPECT_EQ(out, expect) << "seed " << seed << ", " << mismatch_report(expect, out);
}

TEST(RequantizeI8, TileUsesOneStepPerColumn) {
  check_tile_matches_scalar<std::int8_t>([](auto acc, auto rq, std::vector<std::int8_t>& out,
                                            int) { passim::kernels::requantize_i8(acc, rq, out); },
                                         8, 202);
}

TEST(RequantizeI16, TileUsesOneStepPerColumn) {
  check_tile_matches_scalar<std::int16_t>(
      [](auto acc, auto rq, std::vector<std::int16_t>& out, int) {
        passim::kernels::requantize_i16(acc, rq, out);
      },
      16, 203);
}

TEST(RequantizeI32, TileUsesOneStepPerColumn) {
  check_tile_matches_scalar<std::int32_t>(
      [](auto acc, auto rq, std::vector<std::int32_t>& out, int) {
        passim::kernels::requantize_i32(acc, rq, out);
      },
      32, 204);
}

TEST(RequantizeBits, TileUsesOneStepPerColumn) {
  check_tile_matches_scalar<std::int16_t>(
      [](auto acc, auto rq, std::vector<std::int16_t>& out, int bits) {
        passim::kernels::requantize_bits(acc, rq, out, bits);
      },
      passim::kQkBits, 205);
}

TEST(RequantizeBits, SaturatesAtTwelveBits) {
  const std::vector<std::int32_t> acc{2047, 2048, -2048, -2049, 1 << 30, -(1 << 30), 3, -3};
  const std::vector<Requant> rq{Requant{1 << 30, 30}, Requant{1 << 30, 31}};  // 1.0 and 0.5
  std::vector<std::int16_t> out(acc.size());
  passim::kernels::requantize_bits(acc, rq, out, passim::kQkBits);
  // Columns alternate between 1.0 and 0.5: 2048 * 0.5 = 1024, -2049 * 0.5 = -1024.5 -> -1024,
  // -2^30 * 0.5 saturates, -3 * 0.5 = -1.5 -> -1.
  const std::vector<std::int16_t> expect{2047, 1024, -2048, -1024, 2047, -2048, 3, -1};
  EXPECT_EQ(out, expect) << mismatch_report(expect, out);
}

// matmul + requantise against real arithmetic: out = clamp(a.w * M_c). One rounding (0.5 LSB)
// plus the 31-bit representation of M_c (relative 2^-31 of |a.w * M_c| <= 2^15, < 2^-16 LSB).
TEST(RequantizeI16, MatmulOutputMatchesDoubleReferenceWithinHalfLsb) {
  const std::uint32_t seed = 206;
  auto rng = seeded_rng(seed);
  const std::size_t m = 9, k = 64, n = 11;
  MaxError err;
  for (int trial = 0; trial < 200; ++trial) {
    const auto a = random_i8(rng, m * k);
    const auto w = random_i8(rng, n * k);
    std::vector<double> mult(n);
    std::vector<Requant> rq(n);
    for (std::size_t c = 0; c < n; ++c) {
      mult[c] = std::exp2(passim::test::uniform_real(rng, -10.0, 1.0));
      rq[c] = passim::make_requant(mult[c]);
    }
    std::vector<std::int32_t> acc(m * n);
    passim::kernels::matmul_i8(a, w, acc, m, k, n);
    std::vector<std::int16_t> out(m * n);
    passim::kernels::requantize_i16(acc, rq, out);
    const auto ref = matmul_ref(a, w, m, k, n);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double r = std::clamp(ref[i] * mult[i % n], -32768.0, 32767.0);
      const double e = std::fabs(double(out[i]) - r);
      err.add(e, "trial " + std::to_string(trial) + ", index " + std::to_string(i));
      ASSERT_LE(e, 0.5 + std::ldexp(1.0, -16))
          << "seed " << seed << ", trial " << trial << ", index " << i << ", acc " << acc[i]
          << ", M " << mult[i % n];
    }
  }
  err.print("matmul_i8 + requantize_i16 vs double", "LSB", seed);
}

}  // namespace
