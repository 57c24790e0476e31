// SPDX-License-Identifier: Apache-2.0
// rtl/attn/psm_attn.sv (Lanes = 2 and 3) against the ATTN_SCORE and ATTN_VALUE semantics of
// passim::CpuDevice (the two halves of attention_i8()), compared exactly.
#include <cmath>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "Vpsm_attn_l2.h"
#include "Vpsm_attn_l3.h"
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
struct AttnModel {
  using Model = Top;
  static constexpr std::size_t kLanes = L;
};

std::uint32_t lane(std::int32_t v) { return static_cast<std::uint32_t>(v); }

/// One head: the src row (q of len, or p of rows) and the cache (rows rows of len).
struct Head {
  std::vector<std::int32_t> src;
  std::vector<std::int32_t> cache;
  Requant rq;
};

/// Busy cycles of ATTN_SCORE from the schedule in rtl/attn/README.md, cycle by cycle: the
/// parameter read, one scratchpad access per cycle (a one-word q once, else q and k words
/// alternating for every position), and an output word's write 4 cycles after the read of
/// its last k word, taking the port from the reads. The command ends with the last write.
std::uint64_t score_busy_cycles(std::size_t len, std::size_t rows, std::size_t lanes) {
  const std::size_t w = (len + lanes - 1) / lanes;
  const std::size_t reads_per_pos = w == 1 ? 1 : 2 * w;
  std::set<std::uint64_t> writes;
  std::uint64_t cycle = w == 1 ? 2 : 1;  // param (and the one q word)
  for (std::size_t t = 0; t < rows; ++t) {
    for (std::size_t r = 0; r < reads_per_pos; ++r) {
      do {
        ++cycle;
      } while (writes.count(cycle) != 0);
    }
    if (t % lanes == lanes - 1 || t == rows - 1) {
      writes.insert(cycle + 4);
    }
  }
  return *writes.rbegin();
}

template <typename P>
class AttnRtl : public ::testing::Test {
 protected:
  static constexpr std::size_t kLanes = P::kLanes;
  static constexpr std::uint32_t kParamBase = 6;

  AttnRtl() {
    VecScratchpad mem(1, kLanes, 0);
    EltParamMemory prm({0}, 0);
    EltHarness<typename P::Model>(top_, mem, &prm).reset();
  }

  /// Runs ATTN_SCORE or ATTN_VALUE for one head with `len` = head_size and `rows` = t_len,
  /// and checks it against CpuDevice, the read counts and the cycle count
  /// (rtl/attn/README.md).
  void check(Opcode op, std::size_t len, std::size_t rows, const Head& h, std::uint32_t seed) {
    const bool score = op == Opcode::kAttnScore;
    const std::uint32_t w = elt_words(len, kLanes);
    const std::uint32_t pw = elt_words(rows, kLanes);
    const std::size_t src_len = score ? len : rows;
    EltCommand cmd;
    cmd.op = op;
    cmd.len = static_cast<std::uint32_t>(len);
    cmd.rows = static_cast<std::uint32_t>(rows);
    cmd.param = kParamBase;
    cmd.src = 4;
    cmd.src2 = cmd.src + elt_words(src_len, kLanes) + 3;
    cmd.dst = cmd.src2 + static_cast<std::uint32_t>(rows) * w + 2;
    const std::size_t out_len = score ? rows : len;
    VecScratchpad mem(cmd.dst + elt_words(out_len, kLanes) + 16, kLanes, seed);
    for (std::size_t i = 0; i < src_len; ++i) {
      mem.at(cmd.src + i / kLanes, i % kLanes) = lane(h.src[i]);
    }
    for (std::size_t t = 0; t < rows; ++t) {
      for (std::size_t i = 0; i < len; ++i) {
        mem.at(cmd.src2 + t * w + i / kLanes, i % kLanes) = lane(h.cache[t * len + i]);
      }
    }
    std::vector<std::uint64_t> params(kParamBase + 2, elt_param({1 << 30, 1}));
    params[kParamBase] = elt_param(h.rq, seed);

    EltExpect e;
    e.out_base = cmd.dst;
    e.out_rows = 1;
    e.out_len = out_len;
    // SCORE reads q once per position (once in all when it is one word); VALUE reads p once
    // per output word.
    const std::size_t src_reads = score ? (w == 1 ? 1 : rows) : w;
    elt_add_row(e.reads, cmd.src, src_len, kLanes, static_cast<int>(src_reads));
    elt_add_row(e.reads, cmd.src2, rows * w * kLanes, kLanes);
    e.param_reads[kParamBase] = 1;
    e.busy_cycles =
        score ? score_busy_cycles(len, rows, kLanes) : 1 + w * (rows + pw + 4ull);

    auto describe = [&](std::size_t, std::size_t i) {
      std::ostringstream s;
      s << "rq {" << h.rq.mult << ", " << h.rq.shift << "}, ";
      if (score) {
        std::uint32_t acc = 0;
        for (std::size_t k = 0; k < len; ++k) {
          acc += static_cast<std::uint32_t>(h.src[k] * h.cache[i * len + k]);
        }
        s << "q . k_" << i << " = " << static_cast<std::int32_t>(acc) << " (q[0] " << h.src[0]
          << ", k_" << i << "[0] " << h.cache[i * len] << ")";
      } else {
        std::uint32_t acc = 0;
        for (std::size_t t = 0; t < rows; ++t) {
          acc += static_cast<std::uint32_t>(h.src[t] * h.cache[t * len + i]);
        }
        s << "sum_t p[t] v_t[" << i << "] = " << static_cast<std::int32_t>(acc) << " (p[0] "
          << h.src[0] << ", v_0[" << i << "] " << h.cache[i] << ")";
      }
      return s.str();
    };
    passim::sim::elt_check(top_, mem, params, cmd, e, seed, describe);
  }

  typename P::Model top_;
};

using AttnModels = ::testing::Types<AttnModel<Vpsm_attn_l2, 2>, AttnModel<Vpsm_attn_l3, 3>>;
class LaneNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return "Lanes" + std::to_string(T::kLanes);
  }
};
TYPED_TEST_SUITE(AttnRtl, AttnModels, LaneNames);

std::vector<std::int32_t> random_vec(std::mt19937& rng, std::size_t n, std::int32_t lo,
                                     std::int32_t hi) {
  std::vector<std::int32_t> v(n);
  for (auto& x : v) {
    x = static_cast<std::int32_t>(elt_uniform(rng, lo, hi));
  }
  return v;
}

/// A score step as the quantiser builds it: s_q s_k / sqrt(head_size) * 2^10, with q and k
/// scales of a few units / 2047.
Requant score_rq(std::mt19937& rng, std::size_t len) {
  const double s = std::uniform_real_distribution<double>(0.5, 6.0)(rng) / 2047.0;
  return passim::make_requant(s * s / std::sqrt(double(len)) * 1024.0);
}

/// An output step: s_v / (32767 s_out) with s_out around s_v.
Requant value_rq(std::mt19937& rng) {
  return passim::make_requant(std::uniform_real_distribution<double>(0.5, 2.0)(rng) / 32767.0);
}

// ---------------------------------------------------------------------------------------------
// ATTN_SCORE
// ---------------------------------------------------------------------------------------------

TYPED_TEST(AttnRtl, ScoreEveryTLenFrom1To512) {
  const std::uint32_t seed = 9501;
  auto rng = elt_seeded_rng(seed);
  const std::size_t len = 5;
  for (std::size_t rows = 1; rows <= 512; ++rows) {
    const Head h{random_vec(rng, len, -2048, 2047), random_vec(rng, rows * len, -2048, 2047),
                 score_rq(rng, len)};
    ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAttnScore, len, rows, h, seed))
        << "t_len " << rows;
  }
}

// A q row of one word is read once and every position takes one read: each t_len from 1 to
// 100, so the output words' writes fall at every place among the reads and after the last.
TYPED_TEST(AttnRtl, ScoreOneWordHeadEveryTLen) {
  const std::uint32_t seed = 9505;
  auto rng = elt_seeded_rng(seed);
  for (std::size_t len = 1; len <= TestFixture::kLanes; ++len) {
    for (std::size_t rows = 1; rows <= 100; ++rows) {
      const Head h{random_vec(rng, len, -2048, 2047), random_vec(rng, rows * len, -2048, 2047),
                   score_rq(rng, len)};
      ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAttnScore, len, rows, h, seed))
          << "head_size " << len << ", t_len " << rows;
    }
  }
}

TYPED_TEST(AttnRtl, ScoreHeadSizesAndLongRows) {
  const std::uint32_t seed = 9502;
  auto rng = elt_seeded_rng(seed);
  for (const std::size_t len : {1, 2, 3, 8, 17, 64, 128}) {
    for (const std::size_t rows : {1, 7, 64, 512}) {
      const Head h{random_vec(rng, len, -2048, 2047), random_vec(rng, rows * len, -2048, 2047),
                   score_rq(rng, len)};
      ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAttnScore, len, rows, h, seed))
          << "head_size " << len << ", t_len " << rows;
    }
  }
}

// Extremes: at head_size 512 q . k of all (-2048)(-2048) is 2^31 and wraps to INT32_MIN like
// the golden uint32 sum; steps that saturate the int32 score at both ends; a zero step.
TYPED_TEST(AttnRtl, ScoreWrapsAndSaturates) {
  const std::size_t len = 512, rows = 4;
  Head h{std::vector<std::int32_t>(len, -2048),
         std::vector<std::int32_t>(rows * len, -2048),
         {1 << 30, 30}};
  for (std::size_t i = 0; i < len; ++i) {
    h.cache[1 * len + i] = 2047;  // -2^22 + 2^11 per element: large negative
    h.cache[2 * len + i] = (i % 2 == 0) ? 2047 : -2048;
    h.cache[3 * len + i] = (i == 0) ? 2047 : -2048;  // wraps just past INT32_MAX
  }
  for (const Requant rq : {Requant{1 << 30, 30}, Requant{2147483647, 0}, Requant{0, 0},
                           Requant{1 << 30, 31}, Requant{2147483647, 63}}) {
    h.rq = rq;
    ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAttnScore, len, rows, h, 9503))
        << "rq {" << rq.mult << ", " << rq.shift << "}";
  }
  // int16 operands (beyond the 12-bit format): every product is at most 2^30.
  Head big{{-32768, 32767, -32768}, {-32768, -32768, 32767, 32767, 32767, -32768}, {1, 0}};
  ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAttnScore, 3, 2, big, 9504));
}

// ---------------------------------------------------------------------------------------------
// ATTN_VALUE
// ---------------------------------------------------------------------------------------------

TYPED_TEST(AttnRtl, ValueEveryTLenFrom1To512) {
  const std::uint32_t seed = 9601;
  auto rng = elt_seeded_rng(seed);
  const std::size_t len = 5;
  for (std::size_t rows = 1; rows <= 512; ++rows) {
    const Head h{random_vec(rng, rows, 0, 32767), random_vec(rng, rows * len, -128, 127),
                 value_rq(rng)};
    ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAttnValue, len, rows, h, seed))
        << "t_len " << rows;
  }
}

TYPED_TEST(AttnRtl, ValueHeadSizesAndLongRows) {
  const std::uint32_t seed = 9602;
  auto rng = elt_seeded_rng(seed);
  for (const std::size_t len : {1, 2, 3, 8, 17, 64, 128}) {
    for (const std::size_t rows : {1, 7, 64, 512}) {
      const Head h{random_vec(rng, rows, 0, 32767), random_vec(rng, rows * len, -128, 127),
                   value_rq(rng)};
      ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAttnValue, len, rows, h, seed))
          << "head_size " << len << ", t_len " << rows;
    }
  }
}

// Extremes: p = 1.0 everywhere with v = 127 / -128 (sums near +-2^31 at t_len 512, saturating
// the int8 output), int16 p and v (every product 2^30: the sum wraps), a zero step and ties.
TYPED_TEST(AttnRtl, ValueExtremesWrapAndSaturate) {
  const std::size_t len = 7, rows = 512;
  Head h{std::vector<std::int32_t>(rows, 32767),
         std::vector<std::int32_t>(rows * len, 127),
         {1 << 30, 45}};
  for (std::size_t t = 0; t < rows; ++t) {
    h.cache[t * len + 1] = -128;
    h.cache[t * len + 2] = (t % 2 == 0) ? 127 : -128;
    h.cache[t * len + 3] = 0;
    h.cache[t * len + 4] = -32768;
    h.cache[t * len + 5] = 32767;
  }
  for (const Requant rq : {Requant{1 << 30, 45}, Requant{1 << 30, 30}, Requant{0, 0},
                           Requant{1 << 30, 31}, Requant{2147483647, 63}}) {
    h.rq = rq;
    ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAttnValue, len, rows, h, 9603))
        << "rq {" << rq.mult << ", " << rq.shift << "}";
  }
  h.src.assign(rows, -32768);
  h.rq = {1 << 30, 31};
  ASSERT_NO_FATAL_FAILURE(this->check(Opcode::kAttnValue, len, rows, h, 9604));
}

}  // namespace
