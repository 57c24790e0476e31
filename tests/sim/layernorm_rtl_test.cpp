// SPDX-License-Identifier: Apache-2.0
// rtl/layernorm/psm_layernorm.sv (Lanes = 2 and 4) in LAYERNORM mode (`mode_i` = 0) against its
// golden twin passim::kernels::layernorm_i8(), compared exactly, with the passes, port traffic
// and cycles of rtl/layernorm/README.md. BATCHNORM mode: batchnorm_rtl_test.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "layernorm_fixture.hpp"
#include "passim/fixed_point.hpp"
#include "passim/kernels/layernorm.hpp"

namespace {

using passim::Requant;
using passim::sim::vec_seeded_rng;
using passim::sim::vec_uniform;
using passim::sim::vec_words;
using namespace passim::sim::norm_test;  // the shared testbench

template <typename P>
class LayerNormRtl : public NormRtl<P> {};
TYPED_TEST_SUITE(LayerNormRtl, NormModels, LaneNames);

// ---------------------------------------------------------------------------------------------
// LayerNorm
// ---------------------------------------------------------------------------------------------

/// A random LayerNorm row: centre anywhere in int16, amplitude of any magnitude (clipped to
/// int16), realistic gains, biases around the int8 range, eps up to 2^20.
NormCase random_ln_row(std::mt19937& rng, std::size_t n, int want_frac) {
  NormCase c;
  const std::int64_t centre = vec_uniform<std::int64_t>(rng, -32768, 32767);
  const std::int64_t amp = std::int64_t{1} << vec_uniform<int>(rng, 0, 16);
  c.x.resize(n);
  for (auto& v : c.x) {
    v = static_cast<std::int16_t>(
        std::clamp<std::int64_t>(centre + vec_uniform<std::int64_t>(rng, -amp, amp), -32768,
                                 32767));
  }
  c.eps = vec_uniform<std::uint64_t>(rng, 0, 1 << 20);
  c.frac = legal_frac(c.x, c.eps, want_frac);
  c.gain = realistic_gain(rng, n, c.frac);
  c.bias = random_i16(rng, n, -200, 200);
  return c;
}

TYPED_TEST(LayerNormRtl, RandomRowsOfManyLengths) {
  const std::uint32_t seed = 9101;
  auto rng = vec_seeded_rng(seed);
  const std::size_t l = TestFixture::kLanes;
  std::vector<std::size_t> lengths{1,     2,     3,     4,     5,     7,   l - 1, l,
                                   l + 1, 2 * l - 1, 2 * l + 1, 31,  64,  100, 255, 257,
                                   511,   1000,  1023,  4095,  4096};
  for (int i = 0; i < 12; ++i) {
    lengths.push_back(vec_uniform<std::size_t>(rng, 1, 600));
  }
  for (const std::size_t n : lengths) {
    for (int row = 0; row < 3; ++row) {
      const NormCase c = random_ln_row(rng, n, vec_uniform<int>(rng, 0, 13));
      SCOPED_TRACE("n " + std::to_string(n) + ", row " + std::to_string(row));
      this->check_ln(c, seed + static_cast<std::uint32_t>(3 * n + row));
      ASSERT_FALSE(this->HasFatalFailure());
    }
  }
}

// A constant row has zero variance: ssd = eps, or 1 when eps = 0; every d is 0 and the output
// is saturate(bias, 8), for any gain.
TYPED_TEST(LayerNormRtl, ConstantRowsWithAndWithoutEps) {
  const std::uint32_t seed = 9102;
  auto rng = vec_seeded_rng(seed);
  for (const int v : {0, 1, -1, 12345, 32767, -32768}) {
    for (const std::size_t n : {1u, 2u, 7u, 64u}) {
      for (const std::uint64_t eps :
           {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1} << 39}) {
        NormCase c;
        c.x.assign(n, static_cast<std::int16_t>(v));
        c.frac = legal_frac(c.x, eps, 13);
        c.eps = eps;
        c.gain = random_i16(rng, n, -32768, 32767);
        c.bias = random_i16(rng, n, -300, 300);  // some saturate
        SCOPED_TRACE("value " + std::to_string(v) + ", n " + std::to_string(n) + ", eps " +
                     std::to_string(eps));
        this->check_ln(c, seed + static_cast<std::uint32_t>(n));
        ASSERT_FALSE(this->HasFatalFailure());
      }
    }
  }
}

// +-1 around a large mean: the rounded mean is off by up to 1/2 and the deviations are tiny,
// so the result depends on every rounding (the kernel's worst family, docs/numerics.md 4.9).
// Pattern 0 is c + 1, c - 1, ... (odd n: mean c + 1/n); pattern 1 is c, c + 1, ... (even n:
// the mean c + 1/2 is a tie, rounded up; negative c takes the divider's negative branch).
TYPED_TEST(LayerNormRtl, AlternatingAroundLargeMeans) {
  const std::uint32_t seed = 9103;
  auto rng = vec_seeded_rng(seed);
  for (const int centre : {30000, -30000, 32766, -32767, 0, -1}) {
    for (const std::size_t n : {2u, 3u, 4u, 5u, 63u, 64u, 65u, 1001u}) {
      for (int pattern = 0; pattern < 2; ++pattern) {
        for (const std::uint64_t eps : {std::uint64_t{0}, std::uint64_t{3}}) {
          NormCase c;
          c.x.resize(n);
          for (std::size_t i = 0; i < n; ++i) {
            const int step = (pattern == 0) ? ((i % 2 == 0) ? 1 : -1) : static_cast<int>(i % 2);
            c.x[i] = static_cast<std::int16_t>(centre + step);
          }
          c.eps = eps;
          c.frac = legal_frac(c.x, eps, vec_uniform<int>(rng, 0, 13));
          c.gain = realistic_gain(rng, n, c.frac);
          c.bias = random_i16(rng, n, -20, 20);
          SCOPED_TRACE("centre " + std::to_string(centre) + ", n " + std::to_string(n) +
                       ", pattern " + std::to_string(pattern));
          this->check_ln(c, seed + static_cast<std::uint32_t>(n));
          ASSERT_FALSE(this->HasFatalFailure());
        }
      }
    }
  }
}

// int16 extremes: deviations up to 65535 in magnitude times gains of +-32768, so d * gain is
// within 2^31 of overflowing, with extreme biases.
TYPED_TEST(LayerNormRtl, Int16Extremes) {
  const std::uint32_t seed = 9104;
  auto rng = vec_seeded_rng(seed);
  for (const std::size_t n : {2u, 3u, 9u, 4096u}) {
    std::vector<std::vector<std::int16_t>> rows;
    rows.emplace_back(n, std::int16_t{32767});
    rows.back().back() = -32768;  // mean near 32767: d = -65535 + mean - 32767
    rows.emplace_back(n, std::int16_t{-32768});
    rows.back().back() = 32767;
    rows.emplace_back(n);
    for (std::size_t i = 0; i < n; ++i) {
      rows.back()[i] = (i % 2 == 0) ? std::int16_t{32767} : std::int16_t{-32768};
    }
    for (const auto& x : rows) {
      for (const int frac : {0, 6, 13}) {
        NormCase c;
        c.x = x;
        c.frac = legal_frac(x, 0, frac);
        c.gain.resize(n);
        c.bias.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
          c.gain[i] = (i % 3 == 0) ? std::int16_t{-32768}
                                   : ((i % 3 == 1) ? std::int16_t{32767}
                                                   : vec_uniform<std::int16_t>(rng, -32768, 32767));
          c.bias[i] = (i % 2 == 0) ? std::int16_t{-32768} : std::int16_t{32767};
          if (i % 5 == 4) {
            c.bias[i] = vec_uniform<std::int16_t>(rng, -128, 127);
          }
        }
        SCOPED_TRACE("n " + std::to_string(n) + ", frac " + std::to_string(frac) + ", x0 " +
                     std::to_string(x[0]));
        this->check_ln(c, seed + static_cast<std::uint32_t>(n));
        ASSERT_FALSE(this->HasFatalFailure());
      }
    }
  }
}

// Outputs at both int8 limits: large gains (requantised value beyond +-127), and biases that
// alone push the sum past either end.
TYPED_TEST(LayerNormRtl, SaturatesAtBothEnds) {
  const std::uint32_t seed = 9105;
  auto rng = vec_seeded_rng(seed);
  for (const int frac : {0, 13}) {
    NormCase c;
    c.x = random_i16(rng, 101, -32768, 32767);
    c.frac = legal_frac(c.x, 0, frac);
    c.gain = random_i16(rng, 101, -32768, 32767);
    c.bias = random_i16(rng, 101, -300, 300);
    this->check_ln(c, seed);
    ASSERT_FALSE(this->HasFatalFailure());
    std::vector<std::int8_t> out(101);
    passim::kernels::layernorm_i8(c.x, {c.gain, c.bias, c.frac, c.eps}, out);
    EXPECT_NE(std::count(out.begin(), out.end(), std::int8_t{127}), 0);
    EXPECT_NE(std::count(out.begin(), out.end(), std::int8_t{-128}), 0);
  }
}

TYPED_TEST(LayerNormRtl, EveryGainFracBits) {
  const std::uint32_t seed = 9106;
  auto rng = vec_seeded_rng(seed);
  for (int frac = 0; frac <= 13; ++frac) {
    for (int row = 0; row < 4; ++row) {
      const auto n = vec_uniform<std::size_t>(rng, 1, 300);
      NormCase c = random_ln_row(rng, n, frac);
      // Keep frac exact: shrink the row until rsqrt_requant's precondition holds.
      while (legal_frac(c.x, c.eps, frac) < frac) {
        for (auto& v : c.x) {
          v = static_cast<std::int16_t>(v / 2);
        }
        c.eps /= 2;
      }
      c.frac = frac;
      c.gain = realistic_gain(rng, n, frac);
      SCOPED_TRACE("frac " + std::to_string(frac) + ", row " + std::to_string(row));
      this->check_ln(c, seed + static_cast<std::uint32_t>(16 * frac + row));
      ASSERT_FALSE(this->HasFatalFailure());
    }
  }
}

TYPED_TEST(LayerNormRtl, LongRows) {
  const std::uint32_t seed = 9107;
  auto rng = vec_seeded_rng(seed);
  NormCase c;
  c.x = random_i16(rng, 4096, -32768, 32767);
  c.eps = 12345;
  c.frac = legal_frac(c.x, c.eps, 12);
  c.gain = realistic_gain(rng, 4096, c.frac);
  c.bias = random_i16(rng, 4096, -100, 100);
  this->check_ln(c, seed);
  ASSERT_FALSE(this->HasFatalFailure());
  std::printf("[  CYCLES  ] LayerNorm, Lanes %zu, n 4096, k %d: %s\n", TestFixture::kLanes,
              row_stats(c.x, c.eps).k, this->last_run_.stats.summary().c_str());
  // The longest row that fits the 2^16-word scratchpad three times (x, gain, bias) with
  // Lanes = 2, normalised in place.
  const std::size_t n = 43690;
  const auto w = static_cast<std::uint32_t>(vec_words(n, TestFixture::kLanes));
  c.x = random_i16(rng, n, -32768, 32767);
  c.eps = 0;
  c.frac = legal_frac(c.x, 0, 13);
  c.gain = realistic_gain(rng, n, c.frac);
  c.bias = random_i16(rng, n, -100, 100);
  this->check_ln(c, seed, {0, w, 0});
}

TYPED_TEST(LayerNormRtl, InPlaceRow) {
  const std::uint32_t seed = 9108;
  auto rng = vec_seeded_rng(seed);
  const NormCase c = random_ln_row(rng, 45, 11);
  this->check_ln(c, seed, {300, 600, 300});
}

// Back-to-back commands on one unit without a reset, alternating modes, with start_i pulses
// (and other command fields) while busy that must be ignored.
TYPED_TEST(LayerNormRtl, BackToBackWithStartPulsesWhileBusy) {
  const std::uint32_t seed = 9109;
  auto rng = vec_seeded_rng(seed);
  for (int i = 0; i < 8; ++i) {
    const auto n = vec_uniform<std::size_t>(rng, 1, 70);
    NormCase c = random_ln_row(rng, n, vec_uniform<int>(rng, 0, 13));
    c.rq = passim::make_requant(std::ldexp(1.0, vec_uniform<int>(rng, -20, -8)));
    SCOPED_TRACE("command " + std::to_string(i));
    if (i % 2 == 0) {
      this->check_ln(c, seed + static_cast<std::uint32_t>(i), {}, true);
    } else {
      this->check_bn(c, seed + static_cast<std::uint32_t>(i), {}, true);
    }
    ASSERT_FALSE(this->HasFatalFailure());
    EXPECT_GT(this->last_run_.stray_starts, 0);
  }
}

}  // namespace
