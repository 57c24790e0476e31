// SPDX-License-Identifier: Apache-2.0
// Tests of the elementwise vector ops: residual add, product with per-channel requantisation,
// embedding into the int16 residual stream.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.hpp"
#include "passim/kernels/eltwise.hpp"

namespace {

using passim::Requant;
using passim::test::MaxError;
using passim::test::mismatch_report;
using passim::test::seeded_rng;
using passim::test::uniform_int;

// ---- add_i16 -------------------------------------------------------------------------------

TEST(AddI16, SaturatesAtBothEnds) {
  const std::vector<std::int16_t> a{32767, -32768, 32000, -32000, 1, -1, 32767, -32768};
  const std::vector<std::int16_t> b{1, -1, 32000, -32000, -1, 1, -32768, 32767};
  std::vector<std::int16_t> out(a.size());
  passim::kernels::add_i16(a, b, out);
  const std::vector<std::int16_t> expect{32767, -32768, 32767, -32768, 0, 0, -1, -1};
  EXPECT_EQ(out, expect) << mismatch_report(expect, out);
}

// Exact: the sum of two int16 is an integer, clamped to int16 (tolerance 0 LSB). Also in place
// (out aliases a), as the forward pass uses it.
TEST(AddI16, MatchesDoubleReferenceInPlace) {
  const std::uint32_t seed = 601;
  auto rng = seeded_rng(seed);
  std::vector<std::int16_t> a(100000), b(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = uniform_int<std::int16_t>(rng, -32768, 32767);
    b[i] = uniform_int<std::int16_t>(rng, -32768, 32767);
  }
  std::vector<std::int16_t> expect(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    expect[i] =
        static_cast<std::int16_t>(std::clamp(double(a[i]) + double(b[i]), -32768.0, 32767.0));
  }
  passim::kernels::add_i16(a, b, a);
  EXPECT_EQ(a, expect) << "seed " << seed << ", " << mismatch_report(expect, a);
}

// ---- mul_i8 ----------------------------------------------------------------------------------

TEST(MulI8, PerChannelRequantisation) {
  // Each channel has its own step; the same product 100 * 100 = 10000 maps differently.
  const std::vector<std::int16_t> a{100, 100, 5, -5, 100, 100, -100};
  const std::vector<std::int16_t> b{100, 100, 1, 1, 100, 100, 100};
  const std::vector<Requant> rq{passim::make_requant(1.0 / 1000.0),  // 10
                                passim::make_requant(1.0 / 100.0),   // 100
                                Requant{1 << 30, 31},                // 0.5: 2.5 -> 3
                                Requant{1 << 30, 31},                // 0.5: -2.5 -> -2
                                passim::make_requant(1.0 / 10.0),    // 1000 -> 127
                                passim::make_requant(0.0),           // 0
                                passim::make_requant(1.0 / 10.0)};   // -1000 -> -128
  std::vector<std::int8_t> out(a.size());
  passim::kernels::mul_i8(a, b, rq, out);
  const std::vector<std::int8_t> expect{10, 100, 3, -2, 127, 0, -128};
  EXPECT_EQ(out, expect) << mismatch_report(expect, out);
}

TEST(MulI8, TiesRoundTowardPlusInfinity) {
  const std::vector<std::int16_t> a{5, -5, 3, -3}, b{1, 1, 1, 1};
  const std::vector<Requant> rq(4, Requant{1 << 30, 31});  // 0.5
  std::vector<std::int8_t> out(a.size());
  passim::kernels::mul_i8(a, b, rq, out);
  const std::vector<std::int8_t> expect{3, -2, 2, -1};  // 2.5, -2.5, 1.5, -1.5
  EXPECT_EQ(out, expect) << mismatch_report(expect, out);
}

TEST(MulI8, SaturatesAtBothEnds) {
  // |a * b| up to 2^30 fits int32 before the requantisation.
  const std::vector<std::int16_t> a{32767, -32768, -32768, 32767, 1};
  const std::vector<std::int16_t> b{32767, 32767, -32768, -32768, -1};
  const std::vector<Requant> rq(5, passim::make_requant(1.0 / 65536.0));
  std::vector<std::int8_t> out(a.size());
  passim::kernels::mul_i8(a, b, rq, out);
  const std::vector<std::int8_t> expect{127, -128, 127, -128, 0};  // last: -2^-16 -> 0
  EXPECT_EQ(out, expect) << mismatch_report(expect, out);
}

// One rounding (0.5 LSB) plus the 31-bit representation of each multiplier (relative 2^-31 of
// at most 128, < 2^-23 LSB). The reference is clamped to int8 (saturation).
TEST(MulI8, MatchesDoubleReferenceWithinHalfLsb) {
  const std::uint32_t seed = 602;
  auto rng = seeded_rng(seed);
  const std::size_t n = 172;  // stories260K's hidden_dim: an odd-ish length
  MaxError err;
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<std::int16_t> a(n), b(n);
    std::vector<double> m(n);
    std::vector<Requant> rq(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = uniform_int<std::int16_t>(rng, -32768, 32767);
      b[i] = uniform_int<std::int16_t>(rng, -32768, 32767);
      m[i] = std::exp2(passim::test::uniform_real(rng, -30.0, -20.0));
      rq[i] = passim::make_requant(m[i]);
    }
    std::vector<std::int8_t> out(n);
    passim::kernels::mul_i8(a, b, rq, out);
    for (std::size_t i = 0; i < n; ++i) {
      const double ref = std::clamp(double(a[i]) * double(b[i]) * m[i], -128.0, 127.0);
      const double e = std::fabs(double(out[i]) - ref);
      err.add(e, "trial " + std::to_string(trial) + ", channel " + std::to_string(i));
      ASSERT_LE(e, 0.5 + std::ldexp(1.0, -23))
          << "seed " << seed << ", trial " << trial << ", channel " << i << ": a " << a[i] << ", b "
          << b[i] << ", M " << m[i] << ", found " << int(out[i]);
    }
  }
  err.print("mul_i8 vs double", "LSB", seed);
}

// ---- embed_i16 -----------------------------------------------------------------------------

TEST(EmbedI16, SaturatesAtBothEnds) {
  const std::vector<std::int8_t> row{127, -128, 0, 1, -1, 32};
  std::vector<std::int16_t> out(row.size());
  passim::kernels::embed_i16(row, passim::make_requant(1000.0), out);
  const std::vector<std::int16_t> expect{32767, -32768, 0, 1000, -1000, 32000};
  EXPECT_EQ(out, expect) << mismatch_report(expect, out);
}

// One rounding (0.5 LSB) plus the multiplier's 31-bit representation (relative 2^-31 of at
// most 32768, < 2^-15 LSB).
TEST(EmbedI16, MatchesDoubleReferenceWithinHalfLsb) {
  const std::uint32_t seed = 603;
  auto rng = seeded_rng(seed);
  const std::size_t dim = 64;
  MaxError err;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<std::int8_t> row(dim);
    for (auto& v : row) {
      v = uniform_int<std::int8_t>(rng, -128, 127);
    }
    const double m = std::exp2(passim::test::uniform_real(rng, -4.0, 9.0));
    std::vector<std::int16_t> out(dim);
    passim::kernels::embed_i16(row, passim::make_requant(m), out);
    for (std::size_t i = 0; i < dim; ++i) {
      const double ref = std::clamp(double(row[i]) * m, -32768.0, 32767.0);
      const double e = std::fabs(double(out[i]) - ref);
      err.add(e, "trial " + std::to_string(trial));
      ASSERT_LE(e, 0.5 + std::ldexp(1.0, -15))
          << "seed " << seed << ", trial " << trial << ", index " << i << ": x " << int(row[i])
          << ", M " << m << ", found " << out[i];
    }
  }
  err.print("embed_i16 vs double", "LSB", seed);
}

}  // namespace
