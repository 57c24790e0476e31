// SPDX-License-Identifier: Apache-2.0
// rtl/layernorm/psm_layernorm.sv (Lanes = 2 and 4) in BATCHNORM mode (`mode_i` = 1), which runs
// rtl/batchnorm/psm_batchnorm.sv alone, against its golden twin passim::kernels::batchnorm_i8(),
// compared exactly, with the pass, port traffic and cycles of rtl/batchnorm/README.md.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "layernorm_fixture.hpp"
#include "passim/fixed_point.hpp"

namespace {

using passim::Requant;
using passim::sim::vec_seeded_rng;
using passim::sim::vec_uniform;
using passim::sim::vec_words;
using namespace passim::sim::norm_test;  // the shared testbench

template <typename P>
class BatchNormRtl : public NormRtl<P> {};
TYPED_TEST_SUITE(BatchNormRtl, NormModels, LaneNames);

// ---------------------------------------------------------------------------------------------
// BatchNorm
// ---------------------------------------------------------------------------------------------

/// A step as the quantiser would build it for |x * gain| up to 2^30 mapped to about +-2^(bits)
/// output LSB.
Requant random_step(std::mt19937& rng) {
  const double m = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng),
                              vec_uniform<int>(rng, -30, -14));
  return passim::make_requant(m);
}

TYPED_TEST(BatchNormRtl, RandomRowsOfManyLengths) {
  const std::uint32_t seed = 9201;
  auto rng = vec_seeded_rng(seed);
  const std::size_t l = TestFixture::kLanes;
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, l - 1, l + 1,
                              std::size_t{33}, std::size_t{100}, std::size_t{4096}}) {
    for (int row = 0; row < 3; ++row) {
      NormCase c;
      c.x = random_i16(rng, n, -32768, 32767);
      c.gain = random_i16(rng, n, -32768, 32767);
      c.bias = random_i16(rng, n, -150, 150);
      c.rq = random_step(rng);
      SCOPED_TRACE("n " + std::to_string(n) + ", row " + std::to_string(row));
      this->check_bn(c, seed + static_cast<std::uint32_t>(3 * n + row));
      ASSERT_FALSE(this->HasFatalFailure());
    }
  }
  std::printf("[  CYCLES  ] BatchNorm, Lanes %zu, n 4096: %s\n", TestFixture::kLanes,
              this->last_run_.stats.summary().c_str());
}

// Every int16 input (two rows of 32768, in place), with random and extreme gains and steps.
TYPED_TEST(BatchNormRtl, EveryInt16Value) {
  const std::uint32_t seed = 9202;
  auto rng = vec_seeded_rng(seed);
  const std::size_t n = 32768;
  const auto w = static_cast<std::uint32_t>(vec_words(n, TestFixture::kLanes));
  const std::vector<Requant> steps{passim::make_requant(std::ldexp(1.0, -20)),
                                   passim::make_requant(0.7 * std::ldexp(1.0, -16)),
                                   {1 << 30, 31}};  // 1/2: ties
  for (int half = 0; half < 2; ++half) {
    for (std::size_t s = 0; s < steps.size(); ++s) {
      NormCase c;
      c.x.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        c.x[i] = static_cast<std::int16_t>(static_cast<std::int64_t>(i) - 32768 +
                                           32768 * half);
      }
      c.gain = (s == 2) ? std::vector<std::int16_t>(n, 1) : random_i16(rng, n, -32768, 32767);
      c.bias = random_i16(rng, n, -100, 100);
      c.rq = steps[s];
      SCOPED_TRACE("half " + std::to_string(half) + ", step " + std::to_string(s));
      this->check_bn(c, seed + static_cast<std::uint32_t>(4 * half + s), {0, w, 0});
      ASSERT_FALSE(this->HasFatalFailure());
    }
  }
}

// Extreme steps: mult 0 (out = bias), the largest multiplier without a shift (requantize
// saturates to int32 before the bias), the largest shift, rounding ties of both signs.
TYPED_TEST(BatchNormRtl, ExtremeStepsAndSaturation) {
  const std::uint32_t seed = 9203;
  auto rng = vec_seeded_rng(seed);
  std::vector<std::int16_t> x{-32768, 32767, -32767, 0, 1, -1, 3, -3, 5, -5, 1024, -1024, 77};
  const std::size_t n = x.size();
  const std::vector<Requant> steps{{0, 0},          {2147483647, 0}, {2147483647, 63},
                                   {1 << 30, 31},   {1 << 30, 32},   {1, 0},
                                   {1 << 30, 46},   {1 << 30, 30}};
  for (std::size_t s = 0; s < steps.size(); ++s) {
    for (int g = 0; g < 3; ++g) {
      NormCase c;
      c.x = x;
      c.gain = g == 0 ? std::vector<std::int16_t>(n, 1)
                      : (g == 1 ? std::vector<std::int16_t>(n, -32768)
                                : random_i16(rng, n, -32768, 32767));
      c.bias = random_i16(rng, n, -32768, 32767);
      c.bias[0] = 0;
      c.bias[1] = 0;
      c.rq = steps[s];
      SCOPED_TRACE("step " + std::to_string(s) + ", gains " + std::to_string(g));
      this->check_bn(c, seed + static_cast<std::uint32_t>(s));
      ASSERT_FALSE(this->HasFatalFailure());
    }
  }
}

TYPED_TEST(BatchNormRtl, InPlaceRow) {
  const std::uint32_t seed = 9204;
  auto rng = vec_seeded_rng(seed);
  NormCase c;
  c.x = random_i16(rng, 77, -32768, 32767);
  c.gain = random_i16(rng, 77, -32768, 32767);
  c.bias = random_i16(rng, 77, -128, 127);
  c.rq = random_step(rng);
  this->check_bn(c, seed, {300, 600, 300});
}

}  // namespace
