// SPDX-License-Identifier: Apache-2.0
// rtl/gelu/psm_gelu.sv (Lanes = 2 and 4) against its golden twin passim::kernels::gelu_i8(),
// with the port traffic and cycles of rtl/gelu/README.md, and rtl/gelu/psm_gelu_phi.sv
// against gelu_phi_q16(); compared exactly.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "Vpsm_gelu_l2.h"
#include "Vpsm_gelu_l4.h"
#include "Vpsm_gelu_phi.h"
#include "passim/fixed_point.hpp"
#include "passim/kernels/gelu.hpp"
#include "vec_harness.hpp"
#include "vec_traced_run.hpp"

namespace {

using passim::Requant;
using passim::sim::vec_first_mismatch;
using passim::sim::vec_seeded_rng;
using passim::sim::vec_uniform;
using passim::sim::vec_word_mask;
using passim::sim::vec_words;
using passim::sim::VecHarness;
using passim::sim::VecScratchpad;
using passim::sim::VecTracedRun;

constexpr std::uint64_t kCyclesPerWord = 7;  // rtl/gelu/README.md

template <typename Top, std::size_t L>
struct GeluModel {
  using Model = Top;
  static constexpr std::size_t kLanes = L;
};

struct GeluSteps {
  Requant to_q10;
  Requant out_rq;
};

/// The steps of tests/kernels/gelu_test.cpp for an input scale 2^-in_bits and an output scale
/// 2^-out_bits: to_q10 multiplies by 2^(10 - in_bits), out_rq by 2^(out_bits - in_bits - 16).
GeluSteps pow2_steps(int in_bits, int out_bits) {
  return {{1 << 30, 30 - (10 - in_bits)}, {1 << 30, 30 + 16 + in_bits - out_bits}};
}

/// The steps a quantiser would build for real scales s_in and s_out.
GeluSteps steps_for(double s_in, double s_out) {
  return {passim::make_requant(s_in * 1024.0),
          passim::make_requant(s_in / (std::ldexp(1.0, passim::kGeluPhiFracBits) * s_out))};
}

std::uint32_t lane(std::int32_t v) { return static_cast<std::uint32_t>(v); }

template <typename P>
class GeluRtl : public ::testing::Test {
 protected:
  static constexpr std::size_t kLanes = P::kLanes;

  GeluRtl() {
    VecScratchpad mem(1, kLanes, 0);
    VecHarness<typename P::Model>(top_, mem).reset();
  }

  /// Runs GELU over `rows` rows of `len` raw lanes `x` (the unit uses the low 8 bits) and
  /// checks: every output lane (all 32 bits) against gelu_i8, that nothing else in the
  /// garbage-filled scratchpad changed, one pass (pass_o = 0), 7 W rows busy cycles, each input
  /// word read once, each output word written once with its row's tail mask.
  void check(std::size_t len, std::size_t rows, const std::vector<std::uint32_t>& x,
             GeluSteps st, std::uint32_t seed, bool in_place = false, bool spam = false) {
    ASSERT_EQ(x.size(), len * rows);
    const std::uint32_t w = vec_words(len, kLanes);
    const std::uint32_t src = 9;
    const std::uint32_t dst = in_place ? src : src + static_cast<std::uint32_t>(rows) * w + 4;
    VecScratchpad mem(dst + rows * w + 16, kLanes, seed);
    std::vector<std::int8_t> in8(x.size());
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < len; ++i) {
        mem.at(src + r * w + i / kLanes, i % kLanes) = x[r * len + i];
        in8[r * len + i] = static_cast<std::int8_t>(x[r * len + i] & 0xFFu);
      }
    }
    std::vector<std::int8_t> golden8(x.size());
    passim::kernels::gelu_i8(in8, st.to_q10, st.out_rq, golden8);
    std::vector<std::uint32_t> expected_mem = mem.raw();
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < len; ++i) {
        expected_mem[(dst + r * w + i / kLanes) * kLanes + i % kLanes] =
            lane(golden8[r * len + i]);
      }
    }

    top_.src_addr_i = static_cast<std::uint16_t>(src);
    top_.dst_addr_i = static_cast<std::uint16_t>(dst);
    top_.len_i = static_cast<std::uint16_t>(len);
    top_.rows_i = static_cast<std::uint16_t>(rows);
    top_.to_q10_mult_i = static_cast<std::uint32_t>(st.to_q10.mult) & 0x7FFFFFFFu;
    top_.to_q10_shift_i = static_cast<std::uint8_t>(st.to_q10.shift & 63);
    top_.out_rq_mult_i = static_cast<std::uint32_t>(st.out_rq.mult) & 0x7FFFFFFFu;
    top_.out_rq_shift_i = static_cast<std::uint8_t>(st.out_rq.shift & 63);
    std::function<void(typename P::Model&)> scramble;
    if (spam) {
      scramble = [](typename P::Model& t) {
        t.src_addr_i = static_cast<std::uint16_t>(t.src_addr_i + 1u);
        t.dst_addr_i = static_cast<std::uint16_t>(t.dst_addr_i + 2u);
        t.len_i = static_cast<std::uint16_t>(t.len_i + 1u);
        t.rows_i = static_cast<std::uint16_t>(t.rows_i + 1u);
        t.to_q10_shift_i = static_cast<std::uint8_t>((t.to_q10_shift_i + 1u) & 63u);
        t.out_rq_mult_i ^= 0x12345u;
      };
    }
    const std::uint64_t busy = kCyclesPerWord * w * rows;
    const VecTracedRun run = passim::sim::vec_run_traced(top_, mem, busy + 50, scramble, seed);
    const auto& s = run.stats;
    ASSERT_TRUE(s.finished) << "no done_o; len " << len << ", seed " << seed;

    std::vector<std::int32_t> out(x.size());
    std::vector<std::int32_t> golden(x.size());
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < len; ++i) {
        out[r * len + i] = static_cast<std::int32_t>(mem.at(dst + r * w + i / kLanes, i % kLanes));
        golden[r * len + i] = golden8[r * len + i];
      }
    }
    const std::size_t bad = vec_first_mismatch(out, golden);
    ASSERT_EQ(out, golden) << describe(in8, st, bad, seed, len) << ": rtl " << out[bad]
                           << ", golden " << golden[bad];
    const std::size_t bad_word = vec_first_mismatch(mem.raw(), expected_mem);
    ASSERT_EQ(mem.raw(), expected_mem)
        << "scratchpad changed outside the output rows at word " << bad_word / kLanes
        << " lane " << bad_word % kLanes << "; len " << len << ", seed " << seed;

    EXPECT_EQ(run.passes, std::vector<unsigned>{0}) << "pass_o sequence";
    EXPECT_EQ(s.pass_cycles[0], busy) << s.summary();
    EXPECT_EQ(s.busy_cycles(), busy) << s.summary();
    EXPECT_EQ(s.latency, busy + 1) << s.summary();
    EXPECT_EQ(s.done_pulses, 1) << s.summary();
    EXPECT_EQ(s.idle_requests, 0);
    EXPECT_EQ(passim::sim::count_requests(s.reads[0]), rows * w) << "reads";
    for (std::uint32_t k = 0; k < rows * w; ++k) {
      const auto it = s.reads[0].find(src + k);
      ASSERT_NE(it, s.reads[0].end()) << "input word " << k << " never read";
      EXPECT_EQ(it->second, 1) << "input word " << k << " read " << it->second << " times";
    }
    EXPECT_EQ(passim::sim::count_requests(s.writes[0]), rows * w) << "writes";
    for (std::uint32_t k = 0; k < rows * w; ++k) {
      const auto it = s.writes[0].find(dst + k);
      ASSERT_NE(it, s.writes[0].end()) << "output word " << k << " never written";
      EXPECT_EQ(it->second, 1) << "output word " << k << " written " << it->second << " times";
      EXPECT_EQ(s.write_masks.at(dst + k), vec_word_mask(len, kLanes, k % w))
          << "write mask of output word " << k;
    }
    last_run_ = run;
  }

  static std::string describe(const std::vector<std::int8_t>& x, GeluSteps st, std::size_t bad,
                              std::uint32_t seed, std::size_t len) {
    std::ostringstream msg;
    msg << "seed " << seed << ", len " << len << ", to_q10 {" << st.to_q10.mult << ", "
        << st.to_q10.shift << "}, out_rq {" << st.out_rq.mult << ", " << st.out_rq.shift
        << "}, first bad index " << bad;
    if (bad < x.size()) {
      const std::int32_t t = passim::requantize(x[bad], st.to_q10, 32);
      msg << " (x " << int{x[bad]} << ", t " << t << ", phi "
          << passim::kernels::gelu_phi_q16(t) << ")";
    }
    return msg.str();
  }

  typename P::Model top_;
  VecTracedRun last_run_;
};

using GeluModels = ::testing::Types<GeluModel<Vpsm_gelu_l2, 2>, GeluModel<Vpsm_gelu_l4, 4>>;
class LaneNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return "Lanes" + std::to_string(T::kLanes);
  }
};
TYPED_TEST_SUITE(GeluRtl, GeluModels, LaneNames);

/// Every int8 value in every lane: `Lanes` rows of 256, row r rotated by r.
std::vector<std::uint32_t> every_int8(std::size_t lanes) {
  std::vector<std::uint32_t> x;
  for (std::size_t r = 0; r < lanes; ++r) {
    for (std::size_t i = 0; i < 256; ++i) {
      x.push_back(lane(static_cast<std::int32_t>((i + r) % 256) - 128));
    }
  }
  return x;
}

// All 256 inputs with the steps of a real model (input scales 2^-3 .. 2^-6, as in
// tests/kernels/gelu_test.cpp), mixed input and output scales, and non-power-of-two scales.
TYPED_TEST(GeluRtl, EveryInt8InputForModelScales) {
  const std::size_t l = TestFixture::kLanes;
  const auto x = every_int8(l);
  std::vector<GeluSteps> steps;
  for (const int bits : {3, 4, 5, 6}) {
    steps.push_back(pow2_steps(bits, bits));
  }
  for (const auto& [in, out] : {std::pair{4, 3}, std::pair{4, 5}, std::pair{6, 4},
                                std::pair{3, 6}, std::pair{0, 0}, std::pair{7, 7}}) {
    steps.push_back(pow2_steps(in, out));
  }
  for (const auto& [in, out] : {std::pair{0.05, 0.04}, std::pair{0.011, 0.013},
                                std::pair{0.3, 0.25}, std::pair{1.0 / 17, 1.0 / 19}}) {
    steps.push_back(steps_for(in, out));
  }
  for (std::size_t k = 0; k < steps.size(); ++k) {
    SCOPED_TRACE("steps " + std::to_string(k));
    this->check(256, l, x, steps[k], 9301 + static_cast<std::uint32_t>(k));
    ASSERT_FALSE(this->HasFatalFailure());
  }
  std::printf("[  CYCLES  ] GELU, Lanes %zu, len 256, rows %zu: %s\n", l, l,
              this->last_run_.stats.summary().c_str());
}

// Extremes: t saturating to int32 (|t| = 2^31 for x = -128), zero steps, the largest shifts,
// identity-like output steps (saturation at both ends) and rounding ties in both roundings.
TYPED_TEST(GeluRtl, ExtremeStepsAndSaturation) {
  const std::size_t l = TestFixture::kLanes;
  const auto x = every_int8(l);
  const std::vector<GeluSteps> steps{
      {{2147483647, 0}, {1 << 30, 46}},       // t saturates to int32
      {{2147483647, 0}, {2147483647, 0}},     // ... and the output saturates
      {{0, 0}, {1 << 30, 30}},                // t = 0: Phi = 2^15 + erf(0+)
      {{2147483647, 63}, {2147483647, 63}},   // both steps round to (almost) zero
      {{1 << 30, 20}, {1 << 30, 31}},         // t = x * 2^10 (beyond the clip), out = x * Phi/2
      {{1 << 30, 31}, {1 << 30, 47}},         // ties in both roundings
      {{1 << 30, 30}, {1, 0}},                // out = x * Phi: saturates unless Phi is 0
      {{1 << 30, 23}, {1 << 30, 37}},         // output beyond int8: saturation at both ends
  };
  for (std::size_t k = 0; k < steps.size(); ++k) {
    SCOPED_TRACE("steps " + std::to_string(k));
    this->check(256, l, x, steps[k], 9302 + static_cast<std::uint32_t>(k));
    ASSERT_FALSE(this->HasFatalFailure());
  }
}

TYPED_TEST(GeluRtl, RandomRowsOfManyLengthsAndMultiRow) {
  const std::uint32_t seed = 9303;
  auto rng = vec_seeded_rng(seed);
  const std::size_t l = TestFixture::kLanes;
  const std::vector<std::pair<std::size_t, std::size_t>> shapes{
      {1, 1},  {2, 1},  {3, 1},   {l - 1, 2}, {l + 1, 3}, {5, 2},    {7, 3},
      {8, 1},  {33, 4}, {64, 2},  {97, 1},    {255, 1},   {257, 2},  {1000, 1}};
  for (const auto& [len, rows] : shapes) {
    std::vector<std::uint32_t> x(len * rows);
    for (auto& v : x) {
      v = lane(vec_uniform<std::int32_t>(rng, -128, 127));
    }
    const double s_in = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng),
                                   vec_uniform<int>(rng, -7, -1));
    const double s_out = s_in * std::uniform_real_distribution<double>(0.5, 1.5)(rng);
    SCOPED_TRACE("len " + std::to_string(len) + ", rows " + std::to_string(rows));
    this->check(len, rows, x, steps_for(s_in, s_out), seed, rows == 2);
    ASSERT_FALSE(this->HasFatalFailure());
  }
}

// The upper 24 bits of a lane are ignored: x is the lane's low 8 bits.
TYPED_TEST(GeluRtl, UsesTheLow8BitsOfEachLane) {
  const std::uint32_t seed = 9304;
  auto rng = vec_seeded_rng(seed);
  std::vector<std::uint32_t> x(61);
  for (auto& v : x) {
    v = static_cast<std::uint32_t>(rng());
  }
  this->check(x.size(), 1, x, pow2_steps(4, 4), seed);
}

// Back-to-back commands without a reset, with start_i pulses (and other command fields) while
// busy that must be ignored.
TYPED_TEST(GeluRtl, BackToBackWithStartPulsesWhileBusy) {
  const std::uint32_t seed = 9305;
  auto rng = vec_seeded_rng(seed);
  for (int i = 0; i < 6; ++i) {
    const auto len = vec_uniform<std::size_t>(rng, 1, 40);
    const auto rows = vec_uniform<std::size_t>(rng, 1, 3);
    std::vector<std::uint32_t> x(len * rows);
    for (auto& v : x) {
      v = lane(vec_uniform<std::int32_t>(rng, -128, 127));
    }
    SCOPED_TRACE("command " + std::to_string(i));
    this->check(len, rows, x, pow2_steps(vec_uniform<int>(rng, 3, 6), 4),
                seed + static_cast<std::uint32_t>(i), i % 2 == 1, true);
    ASSERT_FALSE(this->HasFatalFailure());
    EXPECT_GT(this->last_run_.stray_starts, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// psm_gelu_phi
// ---------------------------------------------------------------------------------------------

// Phi(t) for every Q.10 input in [-2^17, 2^17] (|t| / sqrt 2 passes the clip 1811 at
// |t| = 2561, so this covers every distinct value and far beyond), the int32 extremes, and
// random int32 values of every magnitude.
TEST(GeluPhiRtl, MatchesGeluPhiQ16) {
  Vpsm_gelu_phi top;
  std::vector<std::int32_t> ts;
  for (std::int32_t t = -(1 << 17); t <= (1 << 17); ++t) {
    ts.push_back(t);
  }
  for (const std::int32_t t : {std::numeric_limits<std::int32_t>::min(),
                               std::numeric_limits<std::int32_t>::min() + 1,
                               std::numeric_limits<std::int32_t>::max()}) {
    ts.push_back(t);
  }
  const std::uint32_t seed = 9306;
  auto rng = vec_seeded_rng(seed);
  for (int i = 0; i < 100000; ++i) {
    const int bits = vec_uniform<int>(rng, 1, 32);
    ts.push_back(static_cast<std::int32_t>(rng() >> (32 - bits)) * (i % 2 == 0 ? 1 : -1));
  }
  for (const std::int32_t t : ts) {
    top.t_i = static_cast<std::uint32_t>(t);
    top.eval();
    ASSERT_EQ(static_cast<std::int32_t>(top.phi_o), passim::kernels::gelu_phi_q16(t))
        << "t " << t << ", seed " << seed;
  }
}

}  // namespace
