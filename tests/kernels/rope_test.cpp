// SPDX-License-Identifier: Apache-2.0
// Tests of the rotary position embedding on 12-bit queries and keys with Q1.14 tables.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.hpp"
#include "passim/kernels/rope.hpp"

namespace {

using passim::test::MaxError;
using passim::test::mismatch_report;
using passim::test::seeded_rng;
using passim::test::uniform_int;

constexpr std::int32_t kQkMax = (1 << (passim::kQkBits - 1)) - 1;  // 2047
constexpr std::int32_t kQkMin = -kQkMax - 1;                       // -2048
constexpr std::int16_t kOne = 1 << passim::kRopeFracBits;          // 1.0 in Q1.14

/// The angle of pair j at position pos, as the float forward and the quantiser compute it.
double rope_angle(std::size_t pos, std::size_t j, std::size_t head_size) {
  const float freq =
      1.0f / std::pow(10000.0f, static_cast<float>(2 * j) / static_cast<float>(head_size));
  return double(static_cast<float>(pos) * freq);
}

/// One position's Q1.14 tables, rounded to nearest like runtime/src/quant/quantize.cpp.
void rope_tables(std::size_t pos, std::size_t head_size, std::vector<std::int16_t>& cos,
                 std::vector<std::int16_t>& sin) {
  cos.resize(head_size / 2);
  sin.resize(head_size / 2);
  for (std::size_t j = 0; j < head_size / 2; ++j) {
    const double a = rope_angle(pos, j, head_size);
    cos[j] = static_cast<std::int16_t>(std::nearbyint(std::cos(a) * kOne));
    sin[j] = static_cast<std::int16_t>(std::nearbyint(std::sin(a) * kOne));
  }
}

/// RoPE in double with the exact angles (not the rounded tables).
std::vector<double> rope_ref(const std::vector<std::int16_t>& v, std::size_t pos,
                             std::size_t head_size) {
  std::vector<double> out(v.size());
  for (std::size_t base = 0; base < v.size(); base += head_size) {
    for (std::size_t j = 0; j < head_size / 2; ++j) {
      const double a = rope_angle(pos, j, head_size);
      const double v0 = v[base + 2 * j], v1 = v[base + 2 * j + 1];
      out[base + 2 * j] = v0 * std::cos(a) - v1 * std::sin(a);
      out[base + 2 * j + 1] = v0 * std::sin(a) + v1 * std::cos(a);
    }
  }
  return out;
}

std::vector<std::int16_t> random_qk(std::mt19937& rng, std::size_t n) {
  std::vector<std::int16_t> v(n);
  for (auto& x : v) {
    x = uniform_int<std::int16_t>(rng, kQkMin, kQkMax);
  }
  return v;
}

TEST(RopeI16, ZeroAngleIsIdentity) {
  const std::uint32_t seed = 501;
  auto rng = seeded_rng(seed);
  std::vector<std::int16_t> cos, sin;
  rope_tables(0, 16, cos, sin);  // position 0: cos = 1.0, sin = 0 for every pair
  ASSERT_EQ(cos, std::vector<std::int16_t>(8, kOne));
  ASSERT_EQ(sin, std::vector<std::int16_t>(8, 0));
  auto v = random_qk(rng, 4 * 16);
  v[0] = static_cast<std::int16_t>(kQkMin);
  v[1] = static_cast<std::int16_t>(kQkMax);
  const auto expect = v;
  passim::kernels::rope_i16(v, 16, cos, sin);
  EXPECT_EQ(v, expect) << "seed " << seed << ", " << mismatch_report(expect, v);
}

// cos = 0, sin = 1.0: (v0, v1) -> (-v1, v0), exact; -(-2048) = 2048 saturates to 2047.
TEST(RopeI16, NinetyDegreeRotationIsExact) {
  const std::uint32_t seed = 502;
  auto rng = seeded_rng(seed);
  const std::vector<std::int16_t> cos(4, 0), sin(4, kOne);
  auto v = random_qk(rng, 3 * 8);
  for (auto& x : v) {
    x = std::max<std::int16_t>(x, -kQkMax);  // keep -v1 in range here
  }
  std::vector<std::int16_t> expect(v.size());
  for (std::size_t i = 0; i < v.size(); i += 2) {
    expect[i] = static_cast<std::int16_t>(-v[i + 1]);
    expect[i + 1] = v[i];
  }
  passim::kernels::rope_i16(v, 8, cos, sin);
  EXPECT_EQ(v, expect) << "seed " << seed << ", " << mismatch_report(expect, v);

  std::vector<std::int16_t> edge{5, static_cast<std::int16_t>(kQkMin)};
  passim::kernels::rope_i16(edge, 2, std::vector<std::int16_t>{0}, std::vector<std::int16_t>{kOne});
  EXPECT_EQ(edge, (std::vector<std::int16_t>{static_cast<std::int16_t>(kQkMax), 5}));
}

// 45 degrees (c = s = round(2^14 / sqrt 2) = 11585): a vector on the diagonal grows to
// 2047 sqrt 2 = 2895 on one axis and saturates at 12 bits.
TEST(RopeI16, SaturatesAtTwelveBits) {
  const std::int16_t c = static_cast<std::int16_t>(std::nearbyint(kOne / std::sqrt(2.0)));
  ASSERT_EQ(c, 11585);
  std::vector<std::int16_t> v{2047, 2047, -2048, -2048, 2047, -2047, -2048, 2047};
  passim::kernels::rope_i16(v, 2, std::vector<std::int16_t>{c}, std::vector<std::int16_t>{c});
  // (a, b) -> ((a - b) c, (a + b) c) / 2^14, rounded half up, then clamped to [-2048, 2047]:
  // (-2048 - 2047) * 11585 / 16384 = -2895.6 -> -2048, (-2048 + 2047) * 11585 / 16384
  // = -0.707 -> -1.
  const std::vector<std::int16_t> expect{0, 2047, 0, -2048, 2047, 0, -2048, -1};
  EXPECT_EQ(v, expect) << mismatch_report(expect, v);
}

// Against exact angles. Each Q1.14 table entry is within 2^-15 of cos or sin, which moves an
// output by at most (|v0| + |v1|) 2^-15 <= 0.125 LSB; the one rounding adds 0.5 LSB. The
// reference is clamped to 12 bits first (saturation).
TEST(RopeI16, MatchesDoubleReferenceWithinTableBound) {
  const std::uint32_t seed = 503;
  auto rng = seeded_rng(seed);
  MaxError err;
  for (const std::size_t head_size : {2, 8, 64}) {
    const std::size_t n_heads = 3;
    for (std::size_t pos = 0; pos < 512; ++pos) {  // stories260K's context
      std::vector<std::int16_t> cos, sin;
      rope_tables(pos, head_size, cos, sin);
      auto v = random_qk(rng, n_heads * head_size);
      const auto ref = rope_ref(v, pos, head_size);
      const auto in = v;
      passim::kernels::rope_i16(v, head_size, cos, sin);
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::size_t p0 = i & ~std::size_t{1};
        const double r = std::clamp(ref[i], double(kQkMin), double(kQkMax));
        const double tol = 0.5 + (std::abs(in[p0]) + std::abs(in[p0 + 1])) * std::ldexp(1.0, -15);
        const double e = std::fabs(double(v[i]) - r);
        err.add(e, "head_size " + std::to_string(head_size) + ", pos " + std::to_string(pos));
        ASSERT_LE(e, tol) << "seed " << seed << ", head_size " << head_size << ", pos " << pos
                          << ", index " << i << ": pair (" << in[p0] << ", " << in[p0 + 1]
                          << "), ref " << ref[i] << ", found " << v[i];
      }
    }
  }
  err.print("rope_i16 vs double (exact angles)", "LSB", seed);
}

TEST(RopeI16, EveryHeadUsesTheSameTable) {
  const std::uint32_t seed = 504;
  auto rng = seeded_rng(seed);
  std::vector<std::int16_t> cos, sin;
  rope_tables(37, 8, cos, sin);
  const auto head = random_qk(rng, 8);
  std::vector<std::int16_t> one = head;
  passim::kernels::rope_i16(one, 8, cos, sin);
  std::vector<std::int16_t> four;
  for (int h = 0; h < 4; ++h) {
    four.insert(four.end(), head.begin(), head.end());
  }
  passim::kernels::rope_i16(four, 8, cos, sin);
  std::vector<std::int16_t> expect;
  for (int h = 0; h < 4; ++h) {
    expect.insert(expect.end(), one.begin(), one.end());
  }
  EXPECT_EQ(four, expect) << "seed " << seed << ", " << mismatch_report(expect, four);
}

}  // namespace
