// SPDX-License-Identifier: Apache-2.0
// psm_matmul (RTL or Yosys netlist) against passim::kernels::matmul_i8 + passim::requantize,
// compared exactly, plus the closed-form busy-cycle count of docs/cycle-model.md.
//
// Built once per model by tests/sim/matmul.cmake and tests/sim/synth.cmake, which define:
//   PSM_MM_MODEL (class), PSM_MM_HEADER ("<class>.h"), PSM_MM_SUITE (test suite name) and the
//   instance parameters PSM_MM_ROWS, PSM_MM_COLS, PSM_MM_IN_DEPTH, PSM_MM_WGT_DEPTH,
//   PSM_MM_ACC_DEPTH, PSM_MM_OUT_DEPTH, PSM_MM_RQ_DEPTH.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>  // dup2, for the death test

#include <gtest/gtest.h>

#include "matmul_driver.hpp"
#include "passim/fixed_point.hpp"
#include "passim/kernels/matmul.hpp"
#include PSM_MM_HEADER
#ifdef PSM_MM_WITH_REQUANT_MODEL
#include "Vpsm_requant.h"
#endif

namespace {

using passim::Requant;
using passim::sim::ceil_div;
using passim::sim::fits;
using passim::sim::MatmulConfig;
using passim::sim::MatmulJob;
using passim::sim::MatmulShape;
using passim::sim::to_string;
using Driver = passim::sim::MatmulDriver<PSM_MM_MODEL>;

constexpr MatmulConfig kCfg{PSM_MM_ROWS,      PSM_MM_COLS,      PSM_MM_IN_DEPTH, PSM_MM_WGT_DEPTH,
                            PSM_MM_ACC_DEPTH, PSM_MM_OUT_DEPTH, PSM_MM_RQ_DEPTH};
constexpr std::size_t kR = PSM_MM_ROWS;
constexpr std::size_t kC = PSM_MM_COLS;

// The suite name differs per model so that ctest names stay unique; the extra macro level
// expands PSM_MM_SUITE before TEST pastes it.
#define PSM_MM_TEST_I(suite, name) TEST(suite, name)
#define PSM_MM_TEST(name) PSM_MM_TEST_I(PSM_MM_SUITE, name)

std::mt19937 seeded(std::uint32_t seed) {
  std::printf("[ seed     ] %u\n", seed);
  return std::mt19937(seed);
}

int rand_int(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

std::vector<std::int8_t> random_i8(std::mt19937& rng, std::size_t count) {
  std::vector<std::int8_t> v(count);
  for (auto& x : v) {
    // One in eight values is an extreme, so -128 * -128 appears in every reasonable GEMM.
    const int pick = rand_int(rng, 0, 7);
    x = static_cast<std::int8_t>(pick == 0 ? -128 : (pick == 1 ? 127 : rand_int(rng, -128, 127)));
  }
  return v;
}

/// A requant step that maps the accumulator range of a k-long dot product into roughly the
/// out_bits range (like a real layer), with some fully random and degenerate ones mixed in.
Requant random_rq(std::mt19937& rng, std::size_t k, int out_bits) {
  const int pick = rand_int(rng, 0, 9);
  if (pick == 0) {
    return Requant{rand_int(rng, 0, std::numeric_limits<std::int32_t>::max()),
                   rand_int(rng, 0, 63)};
  }
  if (pick == 1) {
    return Requant{0, rand_int(rng, 0, 63)};
  }
  if (pick == 2) {
    return Requant{rand_int(rng, 0, 7), 0};
  }
  int acc_bits = 15;  // |a * w| <= 2^14
  for (std::size_t kk = k; kk > 1; kk >>= 1) {
    ++acc_bits;
  }
  const int shift = std::clamp(31 + acc_bits - out_bits + rand_int(rng, -2, 2), 0, 63);
  return Requant{rand_int(rng, 1 << 30, std::numeric_limits<std::int32_t>::max()), shift};
}

MatmulJob random_job(std::mt19937& rng, MatmulShape s, int out_bits, bool requant_en) {
  MatmulJob job;
  job.shape = s;
  job.a = random_i8(rng, s.m * s.digits * s.k);
  job.w = random_i8(rng, s.n * s.digits * s.k);
  job.rq.resize(s.n);
  for (auto& rq : job.rq) {
    rq = random_rq(rng, s.k, out_bits);
  }
  job.out_bits = out_bits;
  job.requant_en = requant_en;
  return job;
}

/// Seed, first bad index and its inputs, for a failed comparison.
std::string mismatch_report(const MatmulJob& job, const std::vector<std::int32_t>& rtl,
                            const std::vector<std::int32_t>& golden, std::uint32_t seed) {
  std::ostringstream os;
  os << "seed " << seed << ", shape " << to_string(job.shape) << " on " << kR << "x" << kC
     << ", out_bits " << job.out_bits << ", requant_en " << job.requant_en << "\n";
  const auto [bad, unused] = std::mismatch(rtl.begin(), rtl.end(), golden.begin());
  if (bad == rtl.end()) {
    return os.str();
  }
  const auto i = static_cast<std::size_t>(bad - rtl.begin());
  const std::size_t r = i / job.shape.n;
  const std::size_t c = i % job.shape.n;
  std::vector<std::int32_t> acc(job.shape.m * job.shape.n);
  const std::size_t gk = job.shape.digits * job.shape.k;  // a row: every digit group
  passim::kernels::matmul_digits_i8(job.a, job.w, acc, job.shape.m, job.shape.k, job.shape.n,
                                    job.shape.digits);
  os << "first bad index " << i << " (row " << r << ", col " << c << "): rtl " << rtl[i]
     << ", golden " << golden[i] << ", accumulator " << acc[i] << ", mult " << job.rq[c].mult
     << ", shift " << job.rq[c].shift << ", bias " << job.rq[c].bias << "\n  a[" << r << "] =";
  for (std::size_t t = 0; t < gk; ++t) {
    os << " " << int{job.a[r * gk + t]};
  }
  os << "\n  w[" << c << "] =";
  for (std::size_t t = 0; t < gk; ++t) {
    os << " " << int{job.w[c * gk + t]};
  }
  return os.str();
}

/// Loads, runs and reads back one job, and compares it with the golden model exactly.
void check_job(Driver& drv, const MatmulJob& job, std::uint32_t seed) {
  ASSERT_TRUE(fits(kCfg, job.shape)) << to_string(job.shape) << " exceeds the buffers";
  const std::vector<std::int32_t> golden = passim::sim::matmul_golden(job);
  drv.load(job);
  drv.run(job);
  const std::vector<std::int32_t> rtl = drv.read_output(job.shape);
  ASSERT_EQ(rtl, golden) << mismatch_report(job, rtl, golden, seed);
}

/// Skips shapes that a small configuration (e.g. the netlist) cannot hold.
#define PSM_MM_REQUIRE_FITS(shape)                                                      \
  do {                                                                                  \
    if (!fits(kCfg, shape)) {                                                           \
      GTEST_SKIP() << to_string(shape) << " does not fit this configuration's buffers"; \
    }                                                                                   \
  } while (false)

// ---------------------------------------------------------------------------------------------
// Shapes
// ---------------------------------------------------------------------------------------------

PSM_MM_TEST(SizesNotMultipleOfArray) {
  const MatmulShape s{7, 13, 5};  // the case: on 4x4, 4 k tiles and 2 n tiles, all partial
  PSM_MM_REQUIRE_FITS(s);
  const std::uint32_t seed = 701;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  for (int bits : {2, 8, 12, 16, 32}) {
    ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, bits, true), seed));
  }
  ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 32, false), seed));
}

PSM_MM_TEST(LongReductionSingleOutput) {
  const MatmulShape s{1, 17, 1};
  PSM_MM_REQUIRE_FITS(s);
  const std::uint32_t seed = 117;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 8, true), seed));
  ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 32, false), seed));
}

PSM_MM_TEST(DimensionsOfOne) {
  const std::uint32_t seed = 11;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  const std::vector<MatmulShape> shapes{{1, 1, 1},           {1, 2 * kR + 1, kC + 3},
                                        {kC + 2, 1, kC + 3}, {5, 2 * kR + 1, 1},
                                        {1, 1, 2 * kC + 1},  {kR + kC, 1, 1}};
  for (const auto& s : shapes) {
    if (!fits(kCfg, s)) {
      continue;
    }
    SCOPED_TRACE(to_string(s));
    ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 8, true), seed));
    ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 32, false), seed));
  }
}

PSM_MM_TEST(BackToBackTilesForEveryRowCount) {
  // Tiles stream back to back in slots of T = max(m, R, C) cycles, so the weight swap of one
  // tile follows the previous one as closely as the array allows when m <= max(R, C). Every m
  // up to past both array dimensions, with several k and n tiles (m = 1 is the decode case).
  const std::uint32_t seed = 3003;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  for (std::size_t m = 1; m <= std::max(kR, kC) + 2; ++m) {
    const MatmulShape s{m, 3 * kR - 1, 2 * kC + 1};
    if (!fits(kCfg, s)) {
      continue;
    }
    SCOPED_TRACE(to_string(s));
    ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 8, true), seed));
    ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 32, false), seed));
  }
}

PSM_MM_TEST(LargerThanOneTileInEveryDimension) {
  const std::uint32_t seed = 2024;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  // Partial last tiles, then exact multiples of the array.
  for (const MatmulShape s :
       {MatmulShape{kR + kC + 1, 2 * kR + 1, 2 * kC + 1}, MatmulShape{2 * kC, 2 * kR, 2 * kC}}) {
    PSM_MM_REQUIRE_FITS(s);
    SCOPED_TRACE(to_string(s));
    ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 16, true), seed));
    ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 32, false), seed));
  }
}

PSM_MM_TEST(LongestReductionFillsScratchpad) {
  // k as long as the memories allow: one row (KT input words), one column (k weight words).
  const MatmulShape s{1, std::min(kCfg.in_depth * kR, kCfg.wgt_depth), 1};
  const std::uint32_t seed = 4242;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 16, true), seed));
  ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 32, false), seed));
}

PSM_MM_TEST(MostRowsFillsAccumulator) {
  // m = AccDepth, with as many n tiles as the output buffer holds and two k tiles if possible.
  const std::size_t m = kCfg.acc_depth;
  const std::size_t nt = std::max<std::size_t>(1, kCfg.out_depth / m);
  MatmulShape s{m, 2 * kR - 1, std::min(nt * kC - 1, kCfg.rq_depth)};
  if (!fits(kCfg, s)) {
    s.k = kR;
  }
  PSM_MM_REQUIRE_FITS(s);
  const std::uint32_t seed = 64;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 8, true), seed));
  ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 32, false), seed));
}

PSM_MM_TEST(WidestOutputUsesEveryRequantEntry) {
  // n = RqDepth: every requantisation entry is used, including the last, partly used word of
  // each lane's parameter RAM when RqDepth is not a multiple of C (64 on 3x5: word 12).
  MatmulShape s{2, kR + 1, kCfg.rq_depth};
  PSM_MM_REQUIRE_FITS(s);
  const std::uint32_t seed = 6464;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  for (int bits : {8, 16}) {
    ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, bits, true), seed));
  }
}

PSM_MM_TEST(RandomShapesAndModes) {
  const std::uint32_t seed = 20250101;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  const int max_k = static_cast<int>(std::min(kCfg.in_depth * kR, kCfg.wgt_depth));
  int done = 0;
  while (done < 40) {
    const MatmulShape s{
        static_cast<std::size_t>(rand_int(rng, 1, static_cast<int>(kCfg.acc_depth))),
        static_cast<std::size_t>(rand_int(rng, 1, std::min(max_k, 8 * static_cast<int>(kR)))),
        static_cast<std::size_t>(rand_int(rng, 1, static_cast<int>(kCfg.rq_depth)))};
    if (!fits(kCfg, s)) {
      continue;
    }
    const int mode = rand_int(rng, 0, 3);
    const int bits = mode == 0 ? 8 : (mode == 1 ? 16 : 32);
    SCOPED_TRACE("job " + std::to_string(done) + " " + to_string(s));
    ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, bits, mode != 3), seed));
    ++done;
  }
}

// MATMUL_ACT's digit groups: G groups of k in A's rows and in W^T, accumulated with a shift of
// 8 bits from group to group; several k and n tiles per group, every row count class.
PSM_MM_TEST(DigitGroupsAccumulateWithShift) {
  const std::uint32_t seed = 256;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  int done = 0;
  for (const std::size_t g : {std::size_t{2}, std::size_t{3}}) {
    for (const MatmulShape s :
         {MatmulShape{1, 2 * kR + 1, kC + 1, g}, MatmulShape{kR + 3, kR, 2 * kC, g},
          MatmulShape{5, 3, 1, g}, MatmulShape{2 * kC + 1, kR - 1 + (kR == 1), kC, g}}) {
      if (!fits(kCfg, s)) {
        continue;
      }
      SCOPED_TRACE(to_string(s));
      ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 16, true), seed));
      ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, s, 32, false), seed));
      ++done;
    }
  }
  EXPECT_GE(done, 4) << "too few shapes fit this configuration";
}

// The use the digit groups exist for: 12-bit queries and keys split as x = 256 * hi + lo (lo
// the signed low byte, hi in [-8, 8]); three groups (hi.hi | hi.lo + lo.hi | lo.lo) give q . k
// exactly, and the busy cycles follow the closed form with G * KT * NT tiles.
PSM_MM_TEST(DigitGroupsGiveExactTwelveBitProducts) {
  const std::uint32_t seed = 4096;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  const MatmulShape s{3, 2 * 5, kC + 2, 3};  // k = 2 * head_size, head_size 5
  PSM_MM_REQUIRE_FITS(s);
  const std::size_t hs = s.k / 2, gk = 3 * s.k;
  std::uniform_int_distribution<int> x12(-2048, 2047);
  std::vector<int> q(s.m * hs), key(s.n * hs);
  for (int& v : q) v = x12(rng);
  for (int& v : key) v = x12(rng);
  q[0] = -2048;
  key[0] = -2048;  // the extremes: hi = -8
  const auto lo = [](int x) { return static_cast<std::int8_t>(x & 0xff); };
  const auto hi = [&](int x) { return static_cast<std::int8_t>((x - lo(x)) / 256); };
  MatmulJob job;
  job.shape = s;
  job.a.assign(s.m * gk, 0);
  job.w.assign(s.n * gk, 0);
  for (std::size_t r = 0; r < s.m; ++r) {
    for (std::size_t g = 0; g < 3; ++g) {  // a: [hi | lo] in every group
      for (std::size_t i = 0; i < hs; ++i) {
        job.a[r * gk + g * s.k + i] = hi(q[r * hs + i]);
        job.a[r * gk + g * s.k + hs + i] = lo(q[r * hs + i]);
      }
    }
  }
  for (std::size_t c = 0; c < s.n; ++c) {  // w: [hi | 0], [lo | hi], [0 | lo]
    for (std::size_t i = 0; i < hs; ++i) {
      job.w[c * gk + i] = hi(key[c * hs + i]);
      job.w[c * gk + s.k + i] = lo(key[c * hs + i]);
      job.w[c * gk + s.k + hs + i] = hi(key[c * hs + i]);
      job.w[c * gk + 2 * s.k + hs + i] = lo(key[c * hs + i]);
    }
  }
  job.rq.assign(s.n, Requant{1, 0});
  job.out_bits = 32;
  job.requant_en = false;
  drv.load(job);
  const auto stats = drv.run(job);
  EXPECT_EQ(stats.busy_cycles, passim::sim::matmul_busy_cycles(kCfg, s));
  const std::vector<std::int32_t> rtl = drv.read_output(s);
  for (std::size_t r = 0; r < s.m; ++r) {
    for (std::size_t c = 0; c < s.n; ++c) {
      std::int64_t dot = 0;
      for (std::size_t i = 0; i < hs; ++i) {
        dot += std::int64_t{q[r * hs + i]} * key[c * hs + i];
      }
      ASSERT_EQ(rtl[r * s.n + c], dot) << "row " << r << ", col " << c;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Numerics
// ---------------------------------------------------------------------------------------------

PSM_MM_TEST(Int8ExtremesAccumulateExactly) {
  const std::uint32_t seed = 128;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  const MatmulShape s{3, std::min(kCfg.in_depth / 3 * kR, kCfg.wgt_depth / 2), 2 * kC};
  PSM_MM_REQUIRE_FITS(s);
  MatmulJob job = random_job(rng, s, 32, false);
  // Row 0 all -128, row 1 all 127, row 2 alternating; weights -128 except column 1 (127).
  for (std::size_t t = 0; t < s.k; ++t) {
    job.a[0 * s.k + t] = -128;
    job.a[1 * s.k + t] = 127;
    job.a[2 * s.k + t] = static_cast<std::int8_t>(t % 2 == 0 ? -128 : 127);
    for (std::size_t c = 0; c < s.n; ++c) {
      job.w[c * s.k + t] = static_cast<std::int8_t>(c == 1 ? 127 : -128);
    }
  }
  ASSERT_NO_FATAL_FAILURE(check_job(drv, job, seed));
  const auto golden = passim::sim::matmul_golden(job);
  EXPECT_EQ(golden[0], 16384 * static_cast<std::int32_t>(s.k));  // the test reaches the extreme
}

PSM_MM_TEST(NegativeTiesRoundTowardPlusInfinity) {
  // mult = 2^30, shift = 31 halves the accumulator: odd values are exact ties.
  // k = 1 and a, w odd make every accumulator odd: -3 -> -1 (not -2), -1 -> 0, 3 -> 2.
  const std::uint32_t seed = 31;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  const MatmulShape s{6, 1, std::min<std::size_t>(kC + 1, kCfg.rq_depth)};
  MatmulJob job = random_job(rng, s, 8, true);
  const std::vector<std::int8_t> a{-3, -1, 1, 3, -127, 127};
  for (std::size_t r = 0; r < s.m; ++r) {
    job.a[r] = a[r];
  }
  for (std::size_t c = 0; c < s.n; ++c) {
    job.w[c] = static_cast<std::int8_t>(c % 2 == 0 ? 1 : -1);
    job.rq[c] = Requant{1 << 30, 31};
  }
  const auto golden = passim::sim::matmul_golden(job);
  EXPECT_EQ(golden[0 * s.n], -1);   // -3 * 1 = -3 -> -1.5 -> -1
  EXPECT_EQ(golden[1 * s.n], 0);    // -1 -> -0.5 -> 0
  EXPECT_EQ(golden[3 * s.n], 2);    // 3 -> 1.5 -> 2
  EXPECT_EQ(golden[4 * s.n], -63);  // -127 -> -63.5 -> -63
  ASSERT_NO_FATAL_FAILURE(check_job(drv, job, seed));
  // Longer sums: random odd negative accumulators through the same tie.
  const MatmulShape s2{kCfg.acc_depth / 2, 2 * kR + 1, s.n};
  PSM_MM_REQUIRE_FITS(s2);
  MatmulJob job2 = random_job(rng, s2, 16, true);
  for (auto& rq : job2.rq) {
    rq = Requant{1 << 30, 31};
  }
  ASSERT_NO_FATAL_FAILURE(check_job(drv, job2, seed));
}

PSM_MM_TEST(SaturatesAtBothEnds) {
  const std::uint32_t seed = 8163;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  const MatmulShape s{4, 2 * kR + 1, std::min<std::size_t>(kC + 1, kCfg.rq_depth)};
  PSM_MM_REQUIRE_FITS(s);
  for (int bits : {2, 8, 12, 16, 32}) {
    SCOPED_TRACE("out_bits " + std::to_string(bits));
    MatmulJob job = random_job(rng, s, bits, true);
    // Rows 0/1 give large positive/negative sums; big multipliers push them past the range.
    for (std::size_t t = 0; t < s.k; ++t) {
      job.a[0 * s.k + t] = 127;
      job.a[1 * s.k + t] = -128;
      for (std::size_t c = 0; c < s.n; ++c) {
        job.w[c * s.k + t] = 127;
      }
    }
    for (auto& rq : job.rq) {
      rq = Requant{std::numeric_limits<std::int32_t>::max(), bits == 32 ? 0 : 20};
    }
    const auto golden = passim::sim::matmul_golden(job);
    const std::int32_t hi =
        bits == 32 ? std::numeric_limits<std::int32_t>::max() : (std::int32_t{1} << (bits - 1)) - 1;
    EXPECT_EQ(golden[0], hi);
    EXPECT_EQ(golden[s.n], -hi - 1);
    ASSERT_NO_FATAL_FAILURE(check_job(drv, job, seed));
  }
}

PSM_MM_TEST(ShiftAndMultiplierExtremes) {
  const std::uint32_t seed = 63;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  const MatmulShape s{5, kR + 1, std::min<std::size_t>(8, kCfg.rq_depth)};
  const std::vector<Requant> extremes{
      {0, 0},       {1, 0},    {std::numeric_limits<std::int32_t>::max(), 63},
      {1, 63},      {1, 1},    {std::numeric_limits<std::int32_t>::max(), 62},
      {1 << 30, 1}, {12345, 7}};
  for (int bits : {8, 16, 32}) {
    MatmulJob job = random_job(rng, s, bits, true);
    for (std::size_t c = 0; c < s.n; ++c) {
      job.rq[c] = extremes[c % extremes.size()];
    }
    ASSERT_NO_FATAL_FAILURE(check_job(drv, job, seed));
  }
}

// Each column's bias is added to its int32 sum before the multiply (Requant.bias): the ends of
// the 26-bit range, sums of both signs, identity and halving steps, and saturation.
PSM_MM_TEST(BiasIsAddedBeforeTheMultiply) {
  const std::uint32_t seed = 2525;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  const MatmulShape s{4, 2 * kR + 1, std::min<std::size_t>(2 * kC + 1, kCfg.rq_depth)};
  PSM_MM_REQUIRE_FITS(s);
  const std::int32_t bmax = (1 << (passim::kRequantBiasBits - 1)) - 1;
  const std::int32_t bmin = -(1 << (passim::kRequantBiasBits - 1));
  const std::vector<std::int32_t> biases{bmax, bmin, bmin + 1, -1, 1, 0, bmax - 7, 12345};
  const std::vector<Requant> steps{{1 << 30, 30}, {1 << 30, 31}, {0x7fffffff, 31},
                                   {0x7fffffff, 0}, {1 << 30, 40}, {123456789, 33}};
  for (int bits : {8, 16, 32}) {
    SCOPED_TRACE("out_bits " + std::to_string(bits));
    MatmulJob job = random_job(rng, s, bits, true);
    for (std::size_t t = 0; t < s.k; ++t) {
      job.a[0 * s.k + t] = 127;   // row 0: large positive sums
      job.a[1 * s.k + t] = -128;  // row 1: large negative sums
    }
    for (std::size_t c = 0; c < s.n; ++c) {
      job.rq[c] = steps[(c + std::size_t(bits)) % steps.size()];
      job.rq[c].bias = c < biases.size() ? biases[c] : rand_int(rng, bmin, bmax);
    }
    const auto golden = passim::sim::matmul_golden(job);
    ASSERT_NO_FATAL_FAILURE(check_job(drv, job, seed));
    // The same job without biases differs: the bias reached the read-out.
    MatmulJob plain = job;
    for (auto& rq : plain.rq) {
      rq.bias = 0;
    }
    EXPECT_NE(passim::sim::matmul_golden(plain), golden);
  }
}

PSM_MM_TEST(RawModeWritesInt32Accumulators) {
  // requant_en = 0 ignores the (garbage) parameters and writes matmul_i8 exactly.
  const std::uint32_t seed = 32;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  const MatmulShape s{kR + kC + 1, 3 * kR - 1, kC + 1};
  PSM_MM_REQUIRE_FITS(s);
  MatmulJob job = random_job(rng, s, 8, false);
  std::vector<std::int32_t> acc(s.m * s.n);
  passim::kernels::matmul_i8(job.a, job.w, acc, s.m, s.k, s.n);
  EXPECT_EQ(passim::sim::matmul_golden(job), acc);
  ASSERT_NO_FATAL_FAILURE(check_job(drv, job, seed));
}

PSM_MM_TEST(PaddingGarbageAndStaleAccumulatorsAreIgnored) {
  // The same job after a bigger one (stale accumulators) and with two garbage fills.
  const std::uint32_t seed = 99;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  const MatmulShape big{kCfg.acc_depth / 2, 2 * kR, 2 * kC};
  const MatmulShape s{3, 2 * kR - 1, kC + 1};
  PSM_MM_REQUIRE_FITS(big);
  PSM_MM_REQUIRE_FITS(s);
  const MatmulJob job = random_job(rng, s, 16, true);
  ASSERT_NO_FATAL_FAILURE(check_job(drv, random_job(rng, big, 32, false), seed));
  ASSERT_NO_FATAL_FAILURE(check_job(drv, job, seed));
  drv.fill_garbage();
  ASSERT_NO_FATAL_FAILURE(check_job(drv, job, seed));
}

PSM_MM_TEST(BackToBackCommandsGiveTheSameResult) {
  // The second start_i comes in the cycle right after done_o, on unchanged memories.
  const std::uint32_t seed = 77;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  const MatmulShape s{kR + 1, 2 * kR + 1, kC + 1};
  PSM_MM_REQUIRE_FITS(s);
  const MatmulJob job = random_job(rng, s, 8, true);
  const auto golden = passim::sim::matmul_golden(job);
  drv.load(job);
  const auto first = drv.run(job);
  const auto second = drv.run(job);
  EXPECT_EQ(first.busy_cycles, second.busy_cycles);
  const auto rtl = drv.read_output(s);
  ASSERT_EQ(rtl, golden) << mismatch_report(job, rtl, golden, seed);
}

#ifdef PSM_MM_HAS_ASSERTIONS
PSM_MM_TEST(AssertsOnIllegalCommand) {
  // The RTL's CmdSizes_A assertion stops the simulation on m = 0 (which would never finish).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  MatmulJob job;
  job.shape = MatmulShape{0, kR, kC};
  EXPECT_DEATH(
      {
        dup2(STDERR_FILENO, STDOUT_FILENO);  // Verilator reports on stdout; gtest reads stderr
        Driver drv(kCfg, 1);
        drv.run(job);
      },
      "Assertion failed in .*CmdSizes_A");
}
#endif

// ---------------------------------------------------------------------------------------------
// Cycle model
// ---------------------------------------------------------------------------------------------

PSM_MM_TEST(BusyCyclesMatchClosedForm) {
  const std::uint32_t seed = 5;
  auto rng = seeded(seed);
  Driver drv(kCfg, seed + 1);
  // One tile; m below, between and above R and C with several tiles (the slot is
  // T = max(m, R, C)); m = 1 with many tiles (decode); the accumulator's full height.
  const std::vector<MatmulShape> shapes{{1, 1, 1},
                                        {7, 13, 5},
                                        {1, 17, 1},
                                        {1, 3 * kR, 2 * kC + 1},
                                        {2, 2 * kR + 1, 2 * kC},
                                        {kR, kR, kC},
                                        {kC, 2 * kR, 3 * kC},
                                        {kR + kC + 1, 2 * kR + 1, 2 * kC + 1},
                                        {kCfg.acc_depth, kR, kC},
                                        {kCfg.acc_depth, 2 * kR, 2 * kC}};
  int checked = 0;
  for (const auto& s : shapes) {
    if (!fits(kCfg, s)) {
      continue;
    }
    SCOPED_TRACE(to_string(s));
    const MatmulJob job = random_job(rng, s, 8, true);
    drv.load(job);
    const auto stats = drv.run(job);
    const std::uint64_t tiles = ceil_div(s.k, kR) * ceil_div(s.n, kC);
    EXPECT_EQ(stats.busy_cycles, passim::sim::matmul_busy_cycles(kCfg, s));
    EXPECT_EQ(stats.done_pulses, 1);
    EXPECT_EQ(stats.perf_busy, stats.busy_cycles);
    EXPECT_EQ(stats.perf_mac, tiles * s.m);  // one activation row per cycle while streaming
    ++checked;
  }
  EXPECT_GE(checked, 6);
  // docs/cycle-model.md's worked examples. 7x13x5 on 4x4: 8 tiles in slots of T = 7,
  // (8 - 1) * 7 + 7 + (4 + 4 + 2) + 2 = 68. 256x256x256 on 16x16: 256 tiles, T = 256,
  // 255 * 256 + 256 + 34 + 2 = 65572. 1x256x256 on 16x16 (decode): T = 16, 255 * 16 + 1 + 36.
  EXPECT_EQ(passim::sim::matmul_busy_cycles(MatmulConfig{4, 4, 256, 256, 64, 256, 64}, {7, 13, 5}),
            68U);
  const MatmulConfig base{16, 16, 4096, 8192, 256, 4096, 256};
  EXPECT_EQ(passim::sim::matmul_busy_cycles(base, {256, 256, 256}), 65572U);
  EXPECT_EQ(passim::sim::matmul_busy_cycles(base, {1, 256, 256}), 4117U);
}

// ---------------------------------------------------------------------------------------------
// psm_requant on its own: accumulators the matmul cannot reach (the full int32 range)
// ---------------------------------------------------------------------------------------------

#ifdef PSM_MM_WITH_REQUANT_MODEL
TEST(RequantRtl, MatchesRequantizeOverFullRange) {
  const std::uint32_t seed = 1234;
  auto rng = seeded(seed);
  constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
  constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
  struct Case {
    std::int32_t x;
    Requant rq;
    int bits;
  };
  std::vector<Case> cases;
  const std::vector<std::int32_t> xs{kMin, kMin + 1, -3, -1, 0, 1, 3, kMax - 1, kMax};
  const std::vector<std::int32_t> mults{0, 1, 1 << 30, kMax - 1, kMax};
  // Requant.bias: 0, the ends of its 26-bit range and small values. x + bias runs past the
  // int32 range at both ends (kMax + bmax, kMin + bmin): the sum must not wrap.
  const std::int32_t bmax = (1 << (passim::kRequantBiasBits - 1)) - 1;
  const std::int32_t bmin = -(1 << (passim::kRequantBiasBits - 1));
  const std::vector<std::int32_t> biases{0, bmax, bmin, -1, 1};
  // passim::round_shift adds 2^62 at shift 63 in int64, which overflows when the product is
  // 2^62 or more; that needs x + bias > 2^31 (only a bias can do it) and is skipped here.
  const auto golden_defined = [](const Case& c) {
    const std::int64_t prod = (std::int64_t{c.x} + c.rq.bias) * c.rq.mult;
    return c.rq.shift < 63 || prod < (std::int64_t{1} << 62);
  };
  std::size_t skipped = 0;
  const auto add = [&](const Case& c) {
    if (golden_defined(c)) {
      cases.push_back(c);
    } else {
      ++skipped;
    }
  };
  for (int bits : {2, 8, 12, 16, 31, 32}) {
    for (int shift = 0; shift <= 63; ++shift) {
      for (std::int32_t x : xs) {
        for (std::int32_t mult : mults) {
          for (std::int32_t bias : biases) {
            add({x, Requant{mult, shift, bias}, bits});
          }
        }
      }
      for (int i = 0; i < 40; ++i) {
        const std::int32_t x = static_cast<std::int32_t>(rng());
        const auto mult = static_cast<std::int32_t>(rng() & 0x7fffffffU);
        const std::int32_t bias = i % 2 == 0 ? 0 : rand_int(rng, bmin, bmax);
        add({x >> rand_int(rng, 0, 31), Requant{mult, shift, bias}, bits});
      }
    }
  }
  EXPECT_LT(skipped, cases.size() / 100) << "only the int64-overflow corner is skipped";
  auto ctx = std::make_unique<VerilatedContext>();
  auto top = std::make_unique<Vpsm_requant>(ctx.get(), "top");
  auto tick = [&] {
    top->clk_i = 0;
    top->eval();
    top->clk_i = 1;
    top->eval();
  };
  // Two register stages: a case presented with en_i in cycle t is on y_o in cycle t + 2, i.e.
  // after the tick of cycle t + 1. About one cycle in four is a bubble (en_i low, garbage
  // operands) that must neither be sampled nor disturb the cases in flight.
  std::vector<std::int32_t> rtl;
  std::vector<std::int32_t> golden;
  std::vector<bool> sampled;  // en_i of each cycle
  std::size_t next = 0;
  std::size_t drain = 2;  // cycles after the last case
  for (std::size_t t = 0; drain > 0; ++t) {
    if (next == cases.size()) {
      --drain;
    }
    const bool en = next < cases.size() && rand_int(rng, 0, 3) != 0;
    top->en_i = en ? 1 : 0;
    if (en) {
      const Case& c = cases[next++];
      top->x_i = static_cast<std::uint32_t>(c.x);
      top->bias_i = static_cast<std::uint32_t>(c.rq.bias) & ((1U << passim::kRequantBiasBits) - 1);
      top->mult_i = static_cast<std::uint32_t>(c.rq.mult);
      top->shift_i = static_cast<std::uint8_t>(c.rq.shift);
      top->out_bits_i = static_cast<std::uint8_t>(c.bits);
      golden.push_back(passim::requantize(c.x, c.rq, c.bits));
    } else {
      top->x_i = static_cast<std::uint32_t>(rng());
      top->bias_i = static_cast<std::uint32_t>(rng()) & ((1U << passim::kRequantBiasBits) - 1);
      top->mult_i = static_cast<std::uint32_t>(rng() & 0x7fffffffU);
      top->shift_i = static_cast<std::uint8_t>(rng() & 63U);
      top->out_bits_i = static_cast<std::uint8_t>(rng() & 63U);
    }
    sampled.push_back(en);
    tick();
    if (t >= 1 && sampled[t - 1]) {
      rtl.push_back(static_cast<std::int32_t>(top->y_o));
    }
  }
  top->final();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ASSERT_EQ(rtl[i], golden[i]) << "seed " << seed << ", first bad case " << i << ": x "
                                 << cases[i].x << ", bias " << cases[i].rq.bias << ", mult "
                                 << cases[i].rq.mult << ", shift " << cases[i].rq.shift
                                 << ", out_bits " << cases[i].bits;
  }
  EXPECT_EQ(rtl, golden);
}
#endif

}  // namespace
