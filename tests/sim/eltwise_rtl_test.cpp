// SPDX-License-Identifier: Apache-2.0
// rtl/eltwise/psm_eltwise.sv (Lanes = 2 and 3) against its golden twins add_i16(), mul_i8() and
// embed_i16(), run through passim::CpuDevice (ADD, MUL, EMBED), compared exactly.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "Vpsm_eltwise_l2.h"
#include "Vpsm_eltwise_l3.h"
#include "elt_check.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/fixed_point.hpp"

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

template <typename Top, std::size_t L>
struct EltwiseModel {
  using Model = Top;
  static constexpr std::size_t kLanes = L;
};

/// The operands of one command: rows * len lanes of a and b (raw 32-bit lanes: the unit and
/// CpuDevice use only the low 16 bits, or 8 for EMBED) and the parameter memory.
struct Operands {
  std::vector<std::uint32_t> a, b;
  std::vector<std::uint64_t> params;
};

template <typename P>
class EltwiseRtl : public ::testing::Test {
 protected:
  static constexpr std::size_t kLanes = P::kLanes;
  static constexpr std::uint32_t kParamBase = 5;  // entry of channel 0 / row 0

  EltwiseRtl() {
    VecScratchpad mem(1, kLanes, 0);
    EltParamMemory prm({0}, 0);
    EltHarness<typename P::Model>(top_, mem, &prm).reset();
  }

  /// Runs op over `rows` rows of `len` (a at src, b at src2, out at dst, or in place at src)
  /// and checks it against CpuDevice, the read counts and the cycle count.
  void check(Opcode op, std::size_t len, std::size_t rows, const Operands& x, std::uint32_t seed,
             bool in_place = false) {
    const std::uint32_t w = elt_words(len, kLanes);
    EltCommand cmd;
    cmd.op = op;
    cmd.len = static_cast<std::uint32_t>(len);
    cmd.rows = static_cast<std::uint32_t>(rows);
    cmd.src = 7;
    cmd.src2 = cmd.src + static_cast<std::uint32_t>(rows) * w + 3;
    cmd.dst = in_place ? cmd.src : cmd.src2 + static_cast<std::uint32_t>(rows) * w + 2;
    cmd.param = kParamBase;
    VecScratchpad mem(cmd.dst + rows * w + cmd.src2 + 16, kLanes, seed);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < len; ++i) {
        mem.at(cmd.src + r * w + i / kLanes, i % kLanes) = x.a[r * len + i];
        if (op != Opcode::kEmbed) {
          mem.at(cmd.src2 + r * w + i / kLanes, i % kLanes) = x.b[r * len + i];
        }
      }
    }

    EltExpect e;
    e.out_base = cmd.dst;
    e.out_rows = rows;
    e.out_len = len;
    elt_add_row(e.reads, cmd.src, rows * w * kLanes, kLanes);  // rows are contiguous
    if (op != Opcode::kEmbed) {
      elt_add_row(e.reads, cmd.src2, rows * w * kLanes, kLanes);
    }
    if (op == Opcode::kMul) {
      for (std::uint32_t i = 0; i < len; ++i) {
        e.param_reads[kParamBase + i] = static_cast<int>(rows);
      }
    }
    if (op == Opcode::kEmbed) {
      for (std::uint32_t r = 0; r < rows; ++r) {
        e.param_reads[kParamBase + r] = 1;
      }
    }
    // Cycles (rtl/eltwise/README.md): ADD 5 per word; MUL 5 per word + 1 per element;
    // EMBED 4 per word + 1 per row.
    switch (op) {
      case Opcode::kAdd:
        e.busy_cycles = 5ull * w * rows;
        break;
      case Opcode::kMul:
        e.busy_cycles = (5ull * w + len) * rows;
        break;
      default:
        e.busy_cycles = (4ull * w + 1) * rows;
        break;
    }

    auto describe = [&](std::size_t r, std::size_t i) {
      std::ostringstream s;
      s << "a " << static_cast<std::int32_t>(x.a[r * len + i]);
      if (op != Opcode::kEmbed) {
        s << ", b " << static_cast<std::int32_t>(x.b[r * len + i]);
      }
      const std::size_t entry = kParamBase + (op == Opcode::kMul ? i : r);
      if (op != Opcode::kAdd && entry < x.params.size()) {
        s << ", rq {" << (x.params[entry] & 0x7FFFFFFFu) << ", " << ((x.params[entry] >> 32) & 63)
          << "}";
      }
      return s.str();
    };
    passim::sim::elt_check(top_, mem, x.params, cmd, e, seed, describe);
  }

  typename P::Model top_;
};

using EltwiseModels =
    ::testing::Types<EltwiseModel<Vpsm_eltwise_l2, 2>, EltwiseModel<Vpsm_eltwise_l3, 3>>;
class LaneNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return "Lanes" + std::to_string(T::kLanes);
  }
};
TYPED_TEST_SUITE(EltwiseRtl, EltwiseModels, LaneNames);

/// A lane holding v sign-extended to 32 bits.
std::uint32_t lane(std::int32_t v) { return static_cast<std::uint32_t>(v); }

/// n random int16 lanes (sign-extended).
std::vector<std::uint32_t> random_i16(std::mt19937& rng, std::size_t n) {
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) {
    x = lane(static_cast<std::int32_t>(elt_uniform(rng, -32768, 32767)));
  }
  return v;
}

/// A random Requant step with a real multiplier in [2^lo, 2^hi], as the quantiser builds it,
/// with junk in the unused bits [63:38] of the entry.
std::uint64_t random_rq(std::mt19937& rng, int lo, int hi) {
  const double m = std::ldexp(1.0, lo) *
                   std::pow(2.0, std::uniform_real_distribution<double>(0.0, hi - lo)(rng));
  return elt_param(passim::make_requant(m), static_cast<std::uint32_t>(rng()));
}

/// A parameter memory of `n` random steps in [2^lo, 2^hi].
std::vector<std::uint64_t> random_params(std::mt19937& rng, std::size_t n, int lo, int hi) {
  std::vector<std::uint64_t> p(n);
  for (auto& e : p) {
    e = random_rq(rng, lo, hi);
  }
  return p;
}

const std::vector<std::size_t> kLengths = {1, 2, 3, 4, 5, 7, 8, 9, 31, 64, 97, 511, 512};

// ---------------------------------------------------------------------------------------------
// ADD: add_i16
// ---------------------------------------------------------------------------------------------

TYPED_TEST(EltwiseRtl, AddRandomRowsOfEveryLength) {
  const std::uint32_t seed = 7101;
  auto rng = elt_seeded_rng(seed);
  for (const std::size_t len : kLengths) {
    Operands x{random_i16(rng, len), random_i16(rng, len), {0, 0, 0, 0, 0}};
    ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAdd, len, 1, x, seed)) << "len " << len;
  }
}

TYPED_TEST(EltwiseRtl, AddSaturatesAtBothEnds) {
  const std::vector<std::int32_t> a{32767, -32768, 32767, -32768, 16384, -16385, 1, 0, -1, 32767};
  const std::vector<std::int32_t> b{1, -1, 32767, -32768, 16384, -16384, -1, 0, -32768, -32768};
  Operands x{{}, {}, {0, 0, 0, 0, 0}};
  for (std::size_t i = 0; i < a.size(); ++i) {
    x.a.push_back(lane(a[i]));
    x.b.push_back(lane(b[i]));
  }
  ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAdd, a.size(), 1, x, 7102));
}

TYPED_TEST(EltwiseRtl, AddMultiRowInPlace) {
  const std::uint32_t seed = 7103;
  auto rng = elt_seeded_rng(seed);
  for (const std::size_t len : {1, 5, 37}) {
    const std::size_t rows = 4;
    Operands x{random_i16(rng, len * rows), random_i16(rng, len * rows), {0, 0, 0, 0, 0}};
    ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAdd, len, rows, x, seed, true)) << len;
    ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAdd, len, rows, x, seed + 1)) << len;
  }
}

// The upper 16 bits of a lane are ignored (CpuDevice truncates to int16 too).
TYPED_TEST(EltwiseRtl, AddUsesTheLow16BitsOfEachLane) {
  const std::uint32_t seed = 7104;
  auto rng = elt_seeded_rng(seed);
  Operands x{{}, {}, {0, 0, 0, 0, 0}};
  for (int i = 0; i < 41; ++i) {
    x.a.push_back(static_cast<std::uint32_t>(rng()));
    x.b.push_back(static_cast<std::uint32_t>(rng()));
  }
  ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAdd, 41, 1, x, seed));
}

// ---------------------------------------------------------------------------------------------
// MUL: mul_i8, one Requant step per channel
// ---------------------------------------------------------------------------------------------

TYPED_TEST(EltwiseRtl, MulRandomRowsOfEveryLength) {
  const std::uint32_t seed = 7201;
  auto rng = elt_seeded_rng(seed);
  for (const std::size_t len : kLengths) {
    // Multipliers around 2^-23 put |a * b| <= 2^30 near the int8 range, so some saturate.
    Operands x{random_i16(rng, len), random_i16(rng, len),
               random_params(rng, this->kParamBase + len, -27, -19)};
    ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kMul, len, 1, x, seed)) << "len " << len;
  }
}

TYPED_TEST(EltwiseRtl, MulSaturatesAndRoundsTiesUp) {
  // Channel by channel: saturation high and low, ties (0.5 * odd), a zero step, the largest
  // shift, and a step that is exactly 1.
  const std::vector<std::int32_t> a{32767, -32768, 3, -3, 5, -5, 12345, -32768, 32767, 1, -1};
  const std::vector<std::int32_t> b{32767, 32767, 1, 1, -1, -1, 777, -32768, -32768, 127, 128};
  std::vector<Requant> rq{{1 << 30, 31},   {1 << 30, 31}, {1 << 30, 1}, {1 << 30, 31},
                          {1 << 30, 31},   {1 << 30, 31}, {0, 0},       {2147483647, 63},
                          {2147483647, 0}, {1, 0},        {1, 0}};
  Operands x{{}, {}, std::vector<std::uint64_t>(this->kParamBase, 0)};
  for (std::size_t i = 0; i < a.size(); ++i) {
    x.a.push_back(lane(a[i]));
    x.b.push_back(lane(b[i]));
    x.params.push_back(elt_param(rq[i], 0x3FFFFFFu));
  }
  ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kMul, a.size(), 1, x, 7202));
}

TYPED_TEST(EltwiseRtl, MulMultiRowReusesTheChannelSteps) {
  const std::uint32_t seed = 7203;
  auto rng = elt_seeded_rng(seed);
  for (const std::size_t len : {1, 4, 13, 40}) {
    const std::size_t rows = 3;
    Operands x{random_i16(rng, len * rows), random_i16(rng, len * rows),
               random_params(rng, this->kParamBase + len, -26, -20)};
    ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kMul, len, rows, x, seed)) << "len " << len;
  }
}

TYPED_TEST(EltwiseRtl, MulUsesTheLow16BitsOfEachLane) {
  const std::uint32_t seed = 7204;
  auto rng = elt_seeded_rng(seed);
  Operands x{{}, {}, random_params(rng, this->kParamBase + 23, -26, -20)};
  for (int i = 0; i < 23; ++i) {
    x.a.push_back(static_cast<std::uint32_t>(rng()));
    x.b.push_back(static_cast<std::uint32_t>(rng()));
  }
  ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kMul, 23, 1, x, seed));
}

// ---------------------------------------------------------------------------------------------
// EMBED: embed_i16, one Requant step per row
// ---------------------------------------------------------------------------------------------

TYPED_TEST(EltwiseRtl, EmbedRandomRowsOfEveryLength) {
  const std::uint32_t seed = 7301;
  auto rng = elt_seeded_rng(seed);
  for (const std::size_t len : kLengths) {
    Operands x{{}, {}, random_params(rng, this->kParamBase + 1, -4, 9)};
    for (std::size_t i = 0; i < len; ++i) {
      x.a.push_back(lane(static_cast<std::int32_t>(elt_uniform(rng, -128, 127))));
    }
    ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kEmbed, len, 1, x, seed)) << "len " << len;
  }
}

TYPED_TEST(EltwiseRtl, EmbedMultiRowSaturatesAtBothEnds) {
  // Five rows, each with its own step: 2^9 (127 * 512 saturates high, -128 * 512 low), 2^8,
  // 0.5 (ties: +-0.5 * odd), 0 and 1.
  const std::size_t len = 7;
  const std::vector<std::int32_t> row{127, -128, 1, -1, 0, 63, -65};
  const std::vector<Requant> rq{{1 << 30, 21}, {1 << 30, 22}, {1 << 30, 31}, {0, 0}, {1, 0}};
  Operands x{{}, {}, std::vector<std::uint64_t>(this->kParamBase, 0)};
  for (std::size_t r = 0; r < rq.size(); ++r) {
    for (const std::int32_t v : row) {
      x.a.push_back(lane(v));
    }
    x.params.push_back(elt_param(rq[r], static_cast<std::uint32_t>(r * 977)));
  }
  ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kEmbed, len, rq.size(), x, 7302));
}

TYPED_TEST(EltwiseRtl, EmbedUsesTheLow8BitsOfEachLane) {
  const std::uint32_t seed = 7303;
  auto rng = elt_seeded_rng(seed);
  const std::size_t len = 19, rows = 3;
  Operands x{{}, {}, random_params(rng, this->kParamBase + rows, -4, 9)};
  for (std::size_t i = 0; i < len * rows; ++i) {
    x.a.push_back(static_cast<std::uint32_t>(rng()));
  }
  ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kEmbed, len, rows, x, seed));
}

// ---------------------------------------------------------------------------------------------
// Control
// ---------------------------------------------------------------------------------------------

// Commands run back to back without a reset, and a start_i pulse while busy is ignored (the
// read counts and the cycle count would change otherwise).
TYPED_TEST(EltwiseRtl, BackToBackCommandsIgnoreStartWhileBusy) {
  const std::uint32_t seed = 7401;
  auto rng = elt_seeded_rng(seed);
  const std::size_t len = 11;
  const Opcode ops[] = {Opcode::kMul, Opcode::kAdd, Opcode::kEmbed, Opcode::kMul};
  for (const Opcode op : ops) {
    Operands x{random_i16(rng, len * 2), random_i16(rng, len * 2),
               random_params(rng, this->kParamBase + len, -20, -8)};
    if (op == Opcode::kEmbed) {
      for (auto& v : x.a) {
        v = lane(static_cast<std::int8_t>(v));
      }
    }
    const std::uint32_t w = elt_words(len, this->kLanes);
    VecScratchpad mem(64, this->kLanes, seed);
    EltCommand cmd{op, 0, 16, 32, this->kParamBase, static_cast<std::uint32_t>(len), 2};
    for (std::size_t i = 0; i < 2 * w * this->kLanes && i < 2 * len; ++i) {
      const std::size_t r = i / len, e = i % len;
      mem.at(cmd.src + r * w + e / this->kLanes, e % this->kLanes) = x.a[i];
      mem.at(cmd.src2 + r * w + e / this->kLanes, e % this->kLanes) = x.b[i];
    }
    EltExpect ex;
    ex.out_base = cmd.dst;
    ex.out_rows = 2;
    ex.out_len = len;
    elt_add_row(ex.reads, cmd.src, 2 * w * this->kLanes, this->kLanes);
    if (op != Opcode::kEmbed) {
      elt_add_row(ex.reads, cmd.src2, 2 * w * this->kLanes, this->kLanes);
    }
    for (std::uint32_t i = 0; i < (op == Opcode::kMul ? len : 0); ++i) {
      ex.param_reads[this->kParamBase + i] = 2;
    }
    for (std::uint32_t r = 0; r < (op == Opcode::kEmbed ? 2u : 0u); ++r) {
      ex.param_reads[this->kParamBase + r] = 1;
    }
    ex.busy_cycles = op == Opcode::kAdd   ? 5ull * w * 2
                     : op == Opcode::kMul ? (5ull * w + len) * 2
                                          : (4ull * w + 1) * 2;
    ASSERT_NO_FATAL_FAILURE(passim::sim::elt_check(
        this->top_, mem, x.params, cmd, ex, seed,
        [](std::size_t, std::size_t) { return std::string("see the seed"); }, nullptr, 6));
  }
}

}  // namespace
