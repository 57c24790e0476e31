// SPDX-License-Identifier: Apache-2.0
// rtl/norm/psm_layernorm.sv (Lanes = 2 and 4) against its golden twins
// passim::kernels::layernorm_i8() (mode_i = 0) and batchnorm_i8() (mode_i = 1), compared
// exactly, with the passes, port traffic and cycles of rtl/norm/README.md.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "Vpsm_layernorm_l2.h"
#include "Vpsm_layernorm_l4.h"
#include "passim/fixed_point.hpp"
#include "passim/kernels/layernorm.hpp"
#include "passim/kernels/batchnorm.hpp"
#include "vec_harness.hpp"
#include "vec_traced_run.hpp"

namespace {

using passim::Requant;
using passim::sim::vec_first_mismatch;
using passim::sim::vec_seeded_rng;
using passim::sim::vec_uniform;
using passim::sim::vec_words;
using passim::sim::VecHarness;
using passim::sim::VecScratchpad;
using passim::sim::VecTracedRun;

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
RowStats row_stats(const std::vector<std::int16_t>& x, std::uint64_t eps) {
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
int legal_frac(const std::vector<std::int16_t>& x, std::uint64_t eps, int want) {
  return std::min(want, 4 + row_stats(x, eps).k);
}

std::vector<std::int16_t> random_i16(std::mt19937& rng, std::size_t n, std::int64_t lo,
                                     std::int64_t hi) {
  std::vector<std::int16_t> v(n);
  for (auto& e : v) {
    e = vec_uniform<std::int16_t>(rng, lo, hi);
  }
  return v;
}

/// Gains like a real model's: g * sqrt(n) / s_out with |g| around 1, in Q.frac; capped so
/// int16 holds them at frac 13.
std::vector<std::int16_t> realistic_gain(std::mt19937& rng, std::size_t n, int frac) {
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
    // rtl/norm/README.md: W + DivWidth + 3, W + 97 + k, 5 W.
    const std::vector<std::uint64_t> cycles{w + kDivWidth + 3, w + 97 + std::uint64_t(st.k),
                                            5 * w};
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
  /// the busy cycles of each pass, that each pass reads the rows of rtl/norm/README.md once
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
        passim::sim::vec_run_traced(top_, mem, budget + 50, scramble, seed + 1);
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
    for (std::size_t p = 0; p < passim::sim::VecRunStats::kPasses; ++p) {
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
      EXPECT_EQ(passim::sim::count_requests(s.reads[p]), words) << "reads in pass " << p;
      passim::sim::expect_reads_whole_row(s, p, at.src, n, kLanes, "input");
    }
    if (at.src != at.gain) {
      EXPECT_EQ(passim::sim::count_requests(s.reads[last]), 3 * std::uint64_t{words})
          << "reads in pass " << last;
      passim::sim::expect_reads_whole_row(s, last, at.src, n, kLanes, "input");
      passim::sim::expect_reads_whole_row(s, last, at.gain, n, kLanes, "gain");
      passim::sim::expect_reads_whole_row(s, last, bias_at, n, kLanes, "bias");
    }
    passim::sim::expect_writes_whole_row(s, last, at.dst, n, kLanes);
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

template <typename P>
class LayerNormRtl : public NormRtl<P> {};
template <typename P>
class BatchNormRtl : public NormRtl<P> {};
TYPED_TEST_SUITE(LayerNormRtl, NormModels, LaneNames);
TYPED_TEST_SUITE(BatchNormRtl, NormModels, LaneNames);

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
