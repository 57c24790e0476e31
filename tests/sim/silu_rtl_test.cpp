// SPDX-License-Identifier: Apache-2.0
// rtl/silu/psm_silu.sv (Lanes = 2 and 3) against its golden twin silu_i16(), run through
// passim::CpuDevice (SILU), compared exactly.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "Vpsm_silu_l2.h"
#include "Vpsm_silu_l3.h"
#include "elt_check.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/fixed_point.hpp"
#include "passim/kernels/silu.hpp"

namespace {

using passim::Requant;
using passim::hw::Opcode;
using passim::sim::elt_add_row;
using passim::sim::elt_param;
using passim::sim::elt_seeded_rng;
using passim::sim::elt_uniform;
using passim::sim::elt_words;
using passim::sim::EltCommand;
using passim::sim::EltExpect;
using passim::sim::EltHarness;
using passim::sim::EltParamMemory;
using passim::sim::VecScratchpad;

constexpr std::int32_t kSigOne = 1 << passim::kSigmoidFracBits;  // 1.0 in Q0.15
constexpr std::uint64_t kCyclesPerWord = 26;                     // rtl/silu/README.md

template <typename Top, std::size_t L>
struct SiluModel {
  using Model = Top;
  static constexpr std::size_t kLanes = L;
};

/// The two Requant steps, as the quantiser builds them (runtime/src/quant/quantize.cpp) for a gate
/// range of +-in_range and an output range of +-out_range (real units).
struct SiluSteps {
  Requant to_q10;
  Requant out_rq;
};
SiluSteps steps_for(double in_range, double out_range) {
  const double s_x = in_range / 32767.0;
  const double s_out = out_range / 32767.0;
  return {passim::make_requant(s_x * 1024.0), passim::make_requant(s_x / (kSigOne * s_out))};
}

template <typename P>
class SiluRtl : public ::testing::Test {
 protected:
  static constexpr std::size_t kLanes = P::kLanes;
  static constexpr std::uint32_t kParamBase = 3;  // to_q10 here, out_rq at kParamBase + 1

  SiluRtl() {
    VecScratchpad mem(1, kLanes, 0);
    EltHarness<typename P::Model>(top_, mem, nullptr).reset();
  }

  /// Runs SILU over `rows` rows of `len` raw lanes `x` (the unit and CpuDevice use the low 16
  /// bits) and checks it against CpuDevice, the read counts and the cycle count.
  void check(std::size_t len, std::size_t rows, const std::vector<std::uint32_t>& x, SiluSteps st,
             std::uint32_t seed, bool in_place = false) {
    const std::uint32_t w = elt_words(len, kLanes);
    EltCommand cmd;
    cmd.op = Opcode::kSilu;
    cmd.len = static_cast<std::uint32_t>(len);
    cmd.rows = static_cast<std::uint32_t>(rows);
    cmd.src = 9;
    cmd.dst = in_place ? cmd.src : cmd.src + static_cast<std::uint32_t>(rows) * w + 4;
    cmd.param = kParamBase;
    VecScratchpad mem(cmd.dst + rows * w + 16, kLanes, seed);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < len; ++i) {
        mem.at(cmd.src + r * w + i / kLanes, i % kLanes) = x[r * len + i];
      }
    }
    // CpuDevice reads both steps from the parameter memory; the unit gets them as inputs.
    std::vector<std::uint64_t> params(kParamBase + 2, 0);
    params[kParamBase] = elt_param(st.to_q10, seed);
    params[kParamBase + 1] = elt_param(st.out_rq, seed * 3);
    top_.to_q10_i = params[kParamBase];
    top_.out_rq_i = params[kParamBase + 1];

    EltExpect e;
    e.out_base = cmd.dst;
    e.out_rows = rows;
    e.out_len = len;
    elt_add_row(e.reads, cmd.src, rows * w * kLanes, kLanes);
    e.busy_cycles = kCyclesPerWord * w * rows;
    auto describe = [&](std::size_t r, std::size_t i) {
      const auto v = static_cast<std::int16_t>(x[r * len + i]);
      const std::int32_t t = passim::requantize(v, st.to_q10, 32);
      std::ostringstream s;
      s << "x " << v << " (lane " << x[r * len + i] << "), to_q10 {" << st.to_q10.mult << ", "
        << st.to_q10.shift << "}, t " << t << ", sigmoid " << passim::kernels::sigmoid_q15(t)
        << ", out_rq {" << st.out_rq.mult << ", " << st.out_rq.shift << "}";
      return s.str();
    };
    passim::sim::elt_check(top_, mem, params, cmd, e, seed, describe);
  }

  typename P::Model top_;
};

using SiluModels = ::testing::Types<SiluModel<Vpsm_silu_l2, 2>, SiluModel<Vpsm_silu_l3, 3>>;
class LaneNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return "Lanes" + std::to_string(T::kLanes);
  }
};
TYPED_TEST_SUITE(SiluRtl, SiluModels, LaneNames);

std::uint32_t lane(std::int32_t v) { return static_cast<std::uint32_t>(v); }

// Every int16 input (two rows of 32768, in place: with Lanes = 2 a separate output would not
// fit the 2^16-word scratchpad) for the scale pairs of the kernel's accuracy test.
TYPED_TEST(SiluRtl, EveryInt16ValueForRealisticScales) {
  std::vector<std::uint32_t> x;
  for (std::int32_t v = -32768; v <= 32767; ++v) {
    x.push_back(lane(v));
  }
  for (const auto& [in, out] : {std::pair{8.0, 8.0}, std::pair{16.0, 16.0}, std::pair{2.0, 2.0},
                                std::pair{4.0, 2.0}, std::pair{12.0, 6.0}}) {
    ASSERT_NO_FATAL_FAILURE(this->check(32768, 2, x, steps_for(in, out), 8101, true))
        << "ranges " << in << " -> " << out;
  }
}

// Extremes: identity steps (out = x * sigmoid saturates at both ends), a to_q10 step so large
// that t saturates to int32 (|t| is then clamped to 2^30), zero steps and the largest shift.
TYPED_TEST(SiluRtl, ExtremesAndSaturation) {
  const std::vector<std::int32_t> v{-32768, 32767, -32767, 0,      1,      -1,  2,
                                    -2,     1024,  -1024,  16384,  -16384, 100, -100,
                                    15,     -15,   32766,  -32766, 7};
  std::vector<std::uint32_t> x;
  for (const std::int32_t i : v) {
    x.push_back(lane(i));
  }
  const std::vector<SiluSteps> steps{
      {{1, 0}, {1, 0}},                      // t = x; out saturates
      {{2147483647, 0}, {1, 0}},             // t saturates to int32: |t| > 2^30
      {{2147483647, 0}, {1 << 30, 45}},      // ... with a small output step
      {{0, 0}, {1 << 30, 30}},               // t = 0: sigmoid 1/2
      {{2147483647, 63}, {2147483647, 63}},  // both steps round to (almost) zero
      {{1 << 30, 20}, {1 << 30, 46}},        // t = x * 2^10: every |t| >= 2^10
      {{1 << 30, 31}, {1 << 30, 15}},        // ties in both roundings
  };
  for (std::size_t k = 0; k < steps.size(); ++k) {
    ASSERT_NO_FATAL_FAILURE(this->check(v.size(), 1, x, steps[k], 8102)) << "steps " << k;
  }
}

TYPED_TEST(SiluRtl, RandomRowsOfEveryLengthAndMultiRow) {
  const std::uint32_t seed = 8103;
  auto rng = elt_seeded_rng(seed);
  const std::vector<std::pair<std::size_t, std::size_t>> shapes{{1, 1},  {2, 1},   {3, 1},  {5, 2},
                                                                {7, 3},  {8, 1},   {33, 4}, {64, 2},
                                                                {97, 1}, {512, 1}, {511, 2}};
  for (const auto& [len, rows] : shapes) {
    std::vector<std::uint32_t> x(len * rows);
    for (auto& v : x) {
      v = lane(static_cast<std::int32_t>(elt_uniform(rng, -32768, 32767)));
    }
    const double in = std::ldexp(1.0, static_cast<int>(elt_uniform(rng, -2, 6)));
    const double out = in * std::uniform_real_distribution<double>(0.25, 1.5)(rng);
    ASSERT_NO_FATAL_FAILURE(this->check(len, rows, x, steps_for(in, out), seed, rows == 2))
        << "len " << len << ", rows " << rows;
  }
}

// The upper 16 bits of a lane are ignored (CpuDevice truncates to int16 too).
TYPED_TEST(SiluRtl, UsesTheLow16BitsOfEachLane) {
  const std::uint32_t seed = 8104;
  auto rng = elt_seeded_rng(seed);
  std::vector<std::uint32_t> x(29);
  for (auto& v : x) {
    v = static_cast<std::uint32_t>(rng());
  }
  ASSERT_NO_FATAL_FAILURE(this->check(x.size(), 1, x, steps_for(8.0, 8.0), seed));
}

}  // namespace
