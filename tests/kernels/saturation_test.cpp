// SPDX-License-Identifier: Apache-2.0
// SaturationTally: the golden count of results clamped by a kernel's final requantise or
// saturate step (the accelerator's `saturated` counter), checked against counts derived here
// from the unclamped values.
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "passim/fixed_point.hpp"
#include "passim/kernels/eltwise.hpp"
#include "passim/kernels/gelu.hpp"
#include "passim/kernels/matmul.hpp"

namespace {

using passim::Requant;
using passim::SaturationTally;

TEST(SaturationTally, AddCountsOnlyTheClampedSums) {
  const std::vector<std::int16_t> a{32767, -32768, 100, 0, -20000};
  const std::vector<std::int16_t> b{1, -1, 100, 5, -20000};
  std::vector<std::int16_t> out(a.size());
  const SaturationTally tally;
  passim::kernels::add_i16(a, b, out);
  EXPECT_EQ(tally.count(), 3u);  // 32768, -32769 and -40000 leave int16
  EXPECT_EQ(out[0], 32767);
  EXPECT_EQ(out[4], -32768);
}

TEST(SaturationTally, RequantizeResultCountsExactlyTheOutOfRangeValues) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::int32_t> x(-(1 << 24), 1 << 24);
  std::uniform_int_distribution<std::int32_t> shift(10, 24);
  const SaturationTally tally;
  std::uint64_t expected = 0;
  for (int i = 0; i < 20000; ++i) {
    const Requant rq{0x4000'0000, shift(rng)};
    const std::int32_t v = x(rng);
    const std::int64_t exact = passim::round_shift(std::int64_t{v} * rq.mult, rq.shift);
    expected += (exact > 127 || exact < -128) ? 1 : 0;
    ASSERT_EQ(passim::requantize_result(v, rq, 8), passim::requantize(v, rq, 8)) << v;
  }
  EXPECT_GT(expected, 0u);
  EXPECT_EQ(tally.count(), expected);
}

TEST(SaturationTally, IntermediateStepsAreNotCounted) {
  // GELU's int32 Q.10 step clamps every x != 0 here (mult ~ 2^31, shift 0); its int8 result
  // (x * Phi(t) >> 30) never does.
  const std::vector<std::int8_t> x{127, -128, 5, 0};
  std::vector<std::int8_t> out(x.size());
  const SaturationTally tally;
  passim::kernels::gelu_i8(x, Requant{0x7FFF'FFFF, 0}, Requant{1, 30}, out);
  EXPECT_EQ(tally.count(), 0u);
}

TEST(SaturationTally, MatmulRequantisationCountsPerColumn) {
  const std::vector<std::int32_t> acc{1000, -1000, 10, -10, 127, 128};  // (3, 2)
  const std::vector<Requant> rq{{1 << 30, 30}, {1 << 30, 30}};         // 1.0 per column
  std::vector<std::int8_t> out(acc.size());
  const SaturationTally tally;
  passim::kernels::requantize_i8(acc, rq, out);
  EXPECT_EQ(tally.count(), 3u);  // 1000, -1000 and 128
}

TEST(SaturationTally, AnInnerTallyCountsAloneAndHandsBack) {
  const std::vector<std::int16_t> a{32767}, b{1};
  std::vector<std::int16_t> out(1);
  const SaturationTally outer;
  passim::kernels::add_i16(a, b, out);
  {
    const SaturationTally inner;
    passim::kernels::add_i16(a, b, out);
    passim::kernels::add_i16(a, b, out);
    EXPECT_EQ(inner.count(), 2u);
  }
  passim::kernels::add_i16(a, b, out);
  EXPECT_EQ(outer.count(), 2u);
}

TEST(SaturationTally, WithoutATallyNothingIsCounted) {
  const std::vector<std::int16_t> a{32767}, b{1};
  std::vector<std::int16_t> out(1);
  passim::kernels::add_i16(a, b, out);  // no tally alive: the clamp goes nowhere
  const SaturationTally later;
  EXPECT_EQ(later.count(), 0u);
  EXPECT_EQ(out[0], 32767);
}

}  // namespace
