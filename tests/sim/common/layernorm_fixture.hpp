// SPDX-License-Identifier: Apache-2.0
/// \file The testbench of psm_layernorm (Lanes = 2 and 4) shared by layernorm_rtl_test.cpp
/// (LAYERNORM, `mode_i` = 0) and batchnorm_rtl_test.cpp (BATCHNORM, `mode_i` = 1): one row per
/// command against layernorm_i8() or batchnorm_i8(), compared exactly, with the passes, port
/// traffic and cycles of rtl/layernorm/README.md and rtl/batchnorm/README.md.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "Vpsm_layernorm_l2.h"
#include "Vpsm_layernorm_l4.h"
#include "passim/fixed_point.hpp"
#include "passim/kernels/batchnorm.hpp"
#include "passim/kernels/layernorm.hpp"
#include "vec_harness.hpp"
#include "vec_traced_run.hpp"

namespace passim::sim::norm_test {


using passim::Requant;

constexpr std::size_t kScratchWords = std::size_t{1} << 16;  // AddrWidth = 16 (the default)
constexpr std::uint64_t kDivWidth = 33;                       // LenWidth + 17, LenWidth = 16

template <typename Top, std::size_t L>
struct NormModel {
  using Model = Top;
  static constexpr std::size_t kLanes = L;
};

/// One row and its parameters. LayerNorm uses `frac` and `eps`, BatchNorm `rq`.
struct NormCase {
  std::vector<std::int16_t> x;
  std::vector<std::int16_t> gain;
  std::vector<std::int16_t> bias;
  int frac = 0;
  std::uint64_t eps = 0;
  Requant rq;
};

/// Word addresses of the rows; the bias row always follows the gain row.
struct Layout {
  std::uint32_t src = 8;
  std::uint32_t gain = 20000;
  std::uint32_t dst = 45000;
};

/// The mean and the ssd (after 0 -> 1) of a row, as layernorm_i8 computes them, and the
/// normalisation shift k of rsqrt_requant: only to predict the cycle count of pass 1 and to
/// keep gain_frac_bits inside rsqrt_requant's precondition.
struct RowStats {
  std::int64_t mean = 0;
  std::uint64_t ssd = 1;
  int k = 0;
};
inline RowStats row_stats(const std::vector<std::int16_t>& x, std::uint64_t eps) {
  std::int64_t sum = 0;
  for (const auto v : x) {
    sum += v;
  }
  const auto n = static_cast<std::int64_t>(x.size());
  const std::int64_t num = 2 * sum + n;
  RowStats s;
  s.mean = num / (2 * n) - ((num % (2 * n) != 0 && num < 0) ? 1 : 0);  // floor
  s.ssd = eps;
  for (const auto v : x) {
    const std::int64_t d = v - s.mean;
    s.ssd += static_cast<std::uint64_t>(d * d);
  }
  s.ssd = std::max<std::uint64_t>(s.ssd, 1);
  s.k = (62 - static_cast<int>(std::bit_width(s.ssd))) / 2;
  return s;
}

/// The largest gain_frac_bits <= `want` with rsqrt_requant's shift 59 - k + frac <= 63.
inline int legal_frac(const std::vector<std::int16_t>& x, std::uint64_t eps, int want) {
  return std::min(want, 4 + row_stats(x, eps).k);
}

inline std::vector<std::int16_t> random_i16(std::mt19937& rng, std::size_t n, std::int64_t lo,
                                     std::int64_t hi) {
  std::vector<std::int16_t> v(n);
  for (auto& e : v) {
    e = vec_uniform<std::int16_t>(rng, lo, hi);
  }
  return v;
}

/// Gains like a real model's: g * sqrt(n) / s_out with |g| around 1, in Q.frac; capped so
/// int16 holds them at frac 13.
inline std::vector<std::int16_t> realistic_gain(std::mt19937& rng, std::size_t n, int frac) {
  const std::int64_t one = std::int64_t{1} << frac;
  const std::int64_t hi = std::min<std::int64_t>(32767, 48 * one);
  return random_i16(rng, n, -hi, hi);
}

template <typename P>
class NormRtl : public ::testing::Test {
 protected:
  static constexpr std::size_t kLanes = P::kLanes;

  NormRtl() {
    VecScratchpad mem(1, kLanes, 0);
    VecHarness<typename P::Model>(top_, mem).reset();
  }

  /// LayerNorm of one row (no reset since the previous command), checked against layernorm_i8.
  void check_ln(const NormCase& c, std::uint32_t seed, Layout at = {}, bool spam = false) {
    std::vector<std::int8_t> golden(c.x.size());
    passim::kernels::layernorm_i8(c.x, {c.gain, c.bias, c.frac, c.eps}, golden);
    const RowStats st = row_stats(c.x, c.eps);
    const std::uint64_t w = vec_words(c.x.size(), kLanes);
    // rtl/layernorm/README.md: W + ceil(DivWidth / 2) + 3, W + 67 + k, 5 W.
    const std::vector<std::uint64_t> cycles{w + (kDivWidth + 1) / 2 + 3,
                                            w + 67 + std::uint64_t(st.k), 5 * w};
    run_and_check(false, c, golden, cycles, seed, at, spam);
  }

  /// BatchNorm of one row, checked against batchnorm_i8.
  void check_bn(const NormCase& c, std::uint32_t seed, Layout at = {}, bool spam = false) {
    std::vector<std::int8_t> golden(c.x.size());
    passim::kernels::batchnorm_i8(c.x, {c.gain, c.bias, c.rq}, golden);
    run_and_check(true, c, golden, {5 * std::uint64_t{vec_words(c.x.size(), kLanes)}}, seed, at,
                  spam);
  }

  /// Runs the command and checks: every output lane (all 32 bits) against the golden row, that
  /// nothing else in the (garbage-filled) scratchpad changed, the pass sequence (0, 1, 2 or 0),
  /// the busy cycles of each pass, that each pass reads the rows of rtl/layernorm/README.md once
  /// per word and that only the last pass writes, each output word once with its tail mask.
  void run_and_check(bool batch, const NormCase& c, const std::vector<std::int8_t>& golden8,
                     const std::vector<std::uint64_t>& cycles, std::uint32_t seed, Layout at,
                     bool spam) {
    const std::size_t n = c.x.size();
    ASSERT_EQ(c.gain.size(), n);
    ASSERT_EQ(c.bias.size(), n);
    const std::uint32_t words = vec_words(n, kLanes);
    const std::uint32_t bias_at = at.gain + words;
    const std::vector<std::int32_t> golden(golden8.begin(), golden8.end());

    VecScratchpad mem(kScratchWords, kLanes, seed);
    mem.write_row<std::int16_t>(at.src, c.x);
    mem.write_row<std::int16_t>(at.gain, c.gain);
    mem.write_row<std::int16_t>(bias_at, c.bias);
    std::vector<std::uint32_t> expected_mem = mem.raw();
    for (std::size_t i = 0; i < n; ++i) {
      expected_mem[(at.dst + i / kLanes) * kLanes + i % kLanes] =
          static_cast<std::uint32_t>(golden[i]);
    }

    top_.mode_i = batch ? 1 : 0;
    top_.src_addr_i = static_cast<std::uint16_t>(at.src);
    top_.gain_addr_i = static_cast<std::uint16_t>(at.gain);
    top_.dst_addr_i = static_cast<std::uint16_t>(at.dst);
    top_.len_i = static_cast<std::uint16_t>(n);
    top_.eps_i = c.eps;
    top_.gain_frac_bits_i = static_cast<std::uint8_t>(c.frac & 15);
    top_.rq_mult_i = static_cast<std::uint32_t>(c.rq.mult) & 0x7FFFFFFFu;
    top_.rq_shift_i = static_cast<std::uint8_t>(c.rq.shift & 63);
    std::function<void(typename P::Model&)> scramble;
    if (spam) {
      scramble = [](typename P::Model& t) {
        t.mode_i ^= 1u;
        t.src_addr_i = static_cast<std::uint16_t>(t.src_addr_i + 1u);
        t.dst_addr_i = static_cast<std::uint16_t>(t.dst_addr_i + 3u);
        t.len_i = static_cast<std::uint16_t>(t.len_i + 1u);
        t.rq_shift_i = static_cast<std::uint8_t>((t.rq_shift_i + 1u) & 63u);
        t.gain_frac_bits_i = static_cast<std::uint8_t>((t.gain_frac_bits_i + 1u) % 14u);
        t.eps_i += 12345;
      };
    }
    std::uint64_t budget = 0;
    for (const auto cyc : cycles) {
      budget += cyc;
    }
    const VecTracedRun run =
        vec_run_traced(top_, mem, budget + 50, scramble, seed + 1);
    const auto& s = run.stats;
    ASSERT_TRUE(s.finished) << "no done_o; n " << n << ", seed " << seed << "; " << s.summary();

    const std::vector<std::int32_t> out = mem.read_row(at.dst, n);
    const std::size_t bad = vec_first_mismatch(out, golden);
    ASSERT_EQ(out, golden) << describe(batch, c, bad, seed) << ": rtl " << out[bad]
                           << ", golden " << golden[bad];
    const std::size_t bad_word = vec_first_mismatch(mem.raw(), expected_mem);
    ASSERT_EQ(mem.raw(), expected_mem)
        << "scratchpad changed outside the output row at word " << bad_word / kLanes << " lane "
        << bad_word % kLanes << "; n " << n << ", seed " << seed;

    // Passes and cycles.
    std::vector<unsigned> want_passes;
    for (std::size_t p = 0; p < cycles.size(); ++p) {
      want_passes.push_back(static_cast<unsigned>(p));
    }
    EXPECT_EQ(run.passes, want_passes) << "pass_o sequence; n " << n;
    for (std::size_t p = 0; p < VecRunStats::kPasses; ++p) {
      EXPECT_EQ(s.pass_cycles[p], p < cycles.size() ? cycles[p] : 0)
          << "busy cycles of pass " << p << "; n " << n << ", seed " << seed << "; "
          << s.summary();
    }
    EXPECT_EQ(s.latency, s.busy_cycles() + 1) << s.summary();
    EXPECT_EQ(s.done_pulses, 1) << s.summary();
    EXPECT_EQ(s.idle_requests, 0);

    // Reads: passes 0 and 1 (LayerNorm) read the row; the last pass reads x, gain and bias.
    const std::size_t last = cycles.size() - 1;
    for (std::size_t p = 0; p < last; ++p) {
      EXPECT_EQ(count_requests(s.reads[p]), words) << "reads in pass " << p;
      expect_reads_whole_row(s, p, at.src, n, kLanes, "input");
    }
    if (at.src != at.gain) {
      EXPECT_EQ(count_requests(s.reads[last]), 3 * std::uint64_t{words})
          << "reads in pass " << last;
      expect_reads_whole_row(s, last, at.src, n, kLanes, "input");
      expect_reads_whole_row(s, last, at.gain, n, kLanes, "gain");
      expect_reads_whole_row(s, last, bias_at, n, kLanes, "bias");
    }
    expect_writes_whole_row(s, last, at.dst, n, kLanes);
    last_run_ = run;
  }

  static std::string describe(bool batch, const NormCase& c, std::size_t bad,
                              std::uint32_t seed) {
    std::ostringstream msg;
    msg << (batch ? "BatchNorm" : "LayerNorm") << ", seed " << seed << ", n " << c.x.size();
    if (batch) {
      msg << ", rq {" << c.rq.mult << ", " << c.rq.shift << "}";
    } else {
      const RowStats st = row_stats(c.x, c.eps);
      msg << ", eps " << c.eps << ", gain_frac_bits " << c.frac << ", mean " << st.mean
          << ", ssd " << st.ssd;
    }
    msg << ", first bad index " << bad;
    if (bad < c.x.size()) {
      msg << " (x " << c.x[bad] << ", gain " << c.gain[bad] << ", bias " << c.bias[bad] << ")";
    }
    return msg.str();
  }

  typename P::Model top_;
  VecTracedRun last_run_;
};

using NormModels =
    ::testing::Types<NormModel<Vpsm_layernorm_l2, 2>, NormModel<Vpsm_layernorm_l4, 4>>;
class LaneNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return "Lanes" + std::to_string(T::kLanes);
  }
};

}  // namespace passim::sim::norm_test
