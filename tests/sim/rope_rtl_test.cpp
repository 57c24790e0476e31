// SPDX-License-Identifier: Apache-2.0
// rtl/rope/psm_rope.sv (Lanes = 2 and 3) against its golden twin rope_i16(), run through
// passim::CpuDevice (ROPE), compared exactly.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "Vpsm_rope_l2.h"
#include "Vpsm_rope_l3.h"
#include "elt_check.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/fixed_point.hpp"

namespace {

using passim::hw::Opcode;
using passim::sim::elt_add_row;
using passim::sim::elt_seeded_rng;
using passim::sim::elt_uniform;
using passim::sim::elt_words;
using passim::sim::EltCommand;
using passim::sim::EltExpect;
using passim::sim::EltHarness;
using passim::sim::VecScratchpad;

constexpr std::int32_t kOne = 1 << passim::kRopeFracBits;  // 1.0 in Q1.14

template <typename Top, std::size_t L>
struct RopeModel {
  using Model = Top;
  static constexpr std::size_t kLanes = L;
};

/// One command: `rows` heads of len raw lanes, and the len/2 cos and sin raw lanes.
struct Heads {
  std::vector<std::uint32_t> v;
  std::vector<std::uint32_t> cos, sin;
};

std::uint32_t lane(std::int32_t v) { return static_cast<std::uint32_t>(v); }

template <typename P>
class RopeRtl : public ::testing::Test {
 protected:
  static constexpr std::size_t kLanes = P::kLanes;

  RopeRtl() {
    VecScratchpad mem(1, kLanes, 0);
    EltHarness<typename P::Model>(top_, mem, nullptr).reset();
  }

  /// Cycles of one row (rtl/rope/README.md): 7 per step of 2 * Lanes elements, 5 for a last
  /// step that holds only one word.
  static std::uint64_t row_cycles(std::size_t len) {
    const std::size_t steps = (len + 2 * kLanes - 1) / (2 * kLanes);
    const std::size_t last = len - (steps - 1) * 2 * kLanes;  // elements in the last step
    return 7 * steps - (last > kLanes ? 0 : 2);
  }

  /// Runs ROPE on the heads and checks it against CpuDevice, the read counts (each head word
  /// once, each table word once per head) and the cycle count. Returns the output heads.
  std::vector<std::int32_t> check(std::size_t len, std::size_t rows, const Heads& h,
                                  std::uint32_t seed, bool in_place = false) {
    const std::uint32_t w = elt_words(len, kLanes);
    const std::uint32_t tw = elt_words(len / 2, kLanes);
    EltCommand cmd;
    cmd.op = Opcode::kRope;
    cmd.len = static_cast<std::uint32_t>(len);
    cmd.rows = static_cast<std::uint32_t>(rows);
    cmd.src2 = 3;
    cmd.src = cmd.src2 + 2 * tw + 5;
    cmd.dst = in_place ? cmd.src : cmd.src + static_cast<std::uint32_t>(rows) * w + 2;
    VecScratchpad mem(cmd.dst + rows * w + 16, kLanes, seed);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < len; ++i) {
        mem.at(cmd.src + r * w + i / kLanes, i % kLanes) = h.v[r * len + i];
      }
    }
    for (std::size_t j = 0; j < len / 2; ++j) {
      mem.at(cmd.src2 + j / kLanes, j % kLanes) = h.cos[j];
      mem.at(cmd.src2 + tw + j / kLanes, j % kLanes) = h.sin[j];
    }

    EltExpect e;
    e.out_base = cmd.dst;
    e.out_rows = rows;
    e.out_len = len;
    elt_add_row(e.reads, cmd.src, rows * w * kLanes, kLanes);
    elt_add_row(e.reads, cmd.src2, 2 * tw * kLanes, kLanes, static_cast<int>(rows));
    e.busy_cycles = row_cycles(len) * rows;
    auto describe = [&](std::size_t r, std::size_t i) {
      const std::size_t j = i / 2;
      std::ostringstream s;
      s << "pair " << j << ": v0 " << static_cast<std::int16_t>(h.v[r * len + 2 * j]) << ", v1 "
        << static_cast<std::int16_t>(h.v[r * len + 2 * j + 1]) << ", cos "
        << static_cast<std::int16_t>(h.cos[j]) << ", sin " << static_cast<std::int16_t>(h.sin[j]);
      return s.str();
    };
    std::vector<std::int32_t> out;
    passim::sim::elt_check(top_, mem, {0}, cmd, e, seed, describe);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < len; ++i) {
        out.push_back(static_cast<std::int32_t>(mem.at(cmd.dst + r * w + i / kLanes, i % kLanes)));
      }
    }
    return out;
  }

  typename P::Model top_;
};

using RopeModels = ::testing::Types<RopeModel<Vpsm_rope_l2, 2>, RopeModel<Vpsm_rope_l3, 3>>;
class LaneNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return "Lanes" + std::to_string(T::kLanes);
  }
};
TYPED_TEST_SUITE(RopeRtl, RopeModels, LaneNames);

/// `rows` heads of len random 12-bit values.
std::vector<std::uint32_t> random_heads(std::mt19937& rng, std::size_t len, std::size_t rows) {
  std::vector<std::uint32_t> v(len * rows);
  for (auto& x : v) {
    x = lane(static_cast<std::int32_t>(elt_uniform(rng, -2048, 2047)));
  }
  return v;
}

/// The Q1.14 tables of position pos (docs/numerics.md 4.6).
void real_tables(Heads& h, std::size_t len, int pos) {
  h.cos.clear();
  h.sin.clear();
  for (std::size_t j = 0; j < len / 2; ++j) {
    const float freq = 1.0f / std::pow(10000.0f, float(2 * j) / float(len));
    const float angle = float(pos) * freq;
    h.cos.push_back(lane(static_cast<std::int32_t>(std::lround(std::cos(angle) * kOne))));
    h.sin.push_back(lane(static_cast<std::int32_t>(std::lround(std::sin(angle) * kOne))));
  }
}

const std::vector<std::size_t> kHeadSizes = {2, 4, 6, 8, 10, 12, 14, 16, 64, 128};

// Angle 0 (cos 1, sin 0) leaves 12-bit values unchanged.
TYPED_TEST(RopeRtl, ZeroAngleIsTheIdentity) {
  const std::uint32_t seed = 9101;
  auto rng = elt_seeded_rng(seed);
  for (const std::size_t len : kHeadSizes) {
    Heads h{random_heads(rng, len, 2), {}, {}};
    h.v[0] = lane(-2048);
    h.v[1] = lane(2047);
    h.cos.assign(len / 2, lane(kOne));
    h.sin.assign(len / 2, 0);
    std::vector<std::int32_t> out;
    ASSERT_NO_FATAL_FAILURE(out = this->check(len, 2, h, seed)) << "len " << len;
    EXPECT_EQ(out, std::vector<std::int32_t>(h.v.begin(), h.v.end())) << "len " << len;
  }
}

// 90 degrees (cos 0, sin 1): (v0, v1) -> (-v1, v0), and -(-2048) saturates to 2047.
TYPED_TEST(RopeRtl, NinetyDegreesSwapsAndSaturates) {
  const std::uint32_t seed = 9102;
  auto rng = elt_seeded_rng(seed);
  for (const std::size_t len : {2, 6, 10, 64}) {
    Heads h{random_heads(rng, len, 1), {}, {}};
    h.v[1] = lane(-2048);
    h.cos.assign(len / 2, 0);
    h.sin.assign(len / 2, lane(kOne));
    std::vector<std::int32_t> out;
    ASSERT_NO_FATAL_FAILURE(out = this->check(len, 1, h, seed)) << "len " << len;
    for (std::size_t j = 0; j < len / 2; ++j) {
      const auto v0 = static_cast<std::int32_t>(h.v[2 * j]);
      const auto v1 = static_cast<std::int32_t>(h.v[2 * j + 1]);
      EXPECT_EQ(out[2 * j], std::min(-v1, 2047)) << "pair " << j;
      EXPECT_EQ(out[2 * j + 1], v0) << "pair " << j;
    }
  }
}

// 45 degrees grows (2047, 2047) to (0, 2895) and (-2048, 2047) to (-2896, -1): the rotation
// saturates at 12 bits at both ends; also tables of +-1.0 and values beyond 12 bits.
TYPED_TEST(RopeRtl, SaturatesAtTwelveBits) {
  const std::int32_t c45 = 11585;  // round(cos(pi/4) * 2^14)
  const std::vector<std::int32_t> v{2047, 2047,  -2048,  2047,  -2048, -2048, 2047, -2048,
                                    4000, -4000, -32768, 32767, 1,     -1,    0,    0};
  const std::vector<std::int32_t> c{c45, c45, c45, c45, kOne, -kOne, c45, 0};
  const std::vector<std::int32_t> s{c45, c45, -c45, -c45, 0, 0, -c45, -kOne};
  Heads h;
  for (const auto x : v) {
    h.v.push_back(lane(x));
  }
  for (std::size_t j = 0; j < c.size(); ++j) {
    h.cos.push_back(lane(c[j]));
    h.sin.push_back(lane(s[j]));
  }
  ASSERT_NO_FATAL_FAILURE(this->check(v.size(), 1, h, 9103));
}

// Real tables at random positions, every head size, several heads per command.
TYPED_TEST(RopeRtl, RealTablesManyHeads) {
  const std::uint32_t seed = 9104;
  auto rng = elt_seeded_rng(seed);
  for (const std::size_t len : kHeadSizes) {
    for (const std::size_t rows : {1, 3, 6}) {
      Heads h{random_heads(rng, len, rows), {}, {}};
      real_tables(h, len, static_cast<int>(elt_uniform(rng, 0, 511)));
      ASSERT_NO_FATAL_FAILURE(this->check(len, rows, h, seed, rows == 3))
          << "len " << len << ", rows " << rows;
    }
  }
}

// Any int16 value and table entry (the sums reach 2^31, one bit past int32) and random upper
// bits in every lane (ignored, as CpuDevice truncates to int16).
TYPED_TEST(RopeRtl, Int16ExtremesAndJunkUpperBits) {
  const std::uint32_t seed = 9105;
  auto rng = elt_seeded_rng(seed);
  const std::size_t len = 40, rows = 2;
  const std::vector<std::int32_t> ends{-32768, 32767, -32767, 0};
  for (int k = 0; k < 3; ++k) {
    Heads h;
    for (std::size_t i = 0; i < len * rows; ++i) {
      const std::int32_t x = ends[static_cast<std::size_t>(elt_uniform(rng, 0, 3))];
      h.v.push_back((k == 2 ? static_cast<std::uint32_t>(rng()) << 16 : 0u) ^ lane(x));
    }
    for (std::size_t j = 0; j < len / 2; ++j) {
      const std::int32_t c = ends[static_cast<std::size_t>(elt_uniform(rng, 0, 3))];
      const std::int32_t s =
          k == 0 ? -32768 : ends[static_cast<std::size_t>(elt_uniform(rng, 0, 3))];
      h.cos.push_back((k == 2 ? static_cast<std::uint32_t>(rng()) << 16 : 0u) ^ lane(c));
      h.sin.push_back(lane(s));
    }
    if (k == 0) {  // v0 = s = v1 = c = -32768: v0 s + v1 c = 2^31
      h.v[0] = h.v[1] = h.cos[0] = lane(-32768);
    }
    ASSERT_NO_FATAL_FAILURE(this->check(len, rows, h, seed)) << "round " << k;
  }
}

}  // namespace
