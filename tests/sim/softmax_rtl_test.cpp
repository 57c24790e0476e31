// SPDX-License-Identifier: Apache-2.0
// rtl/softmax/psm_softmax.sv (Lanes = 2 and 4), rtl/common/psm_iexp.sv and
// rtl/common/psm_divider.sv against their golden twins passim::kernels::softmax_i16() (three
// passes), passim::kernels::softmax_online_i16() with lanes = Lanes (online_i = 1),
// passim::iexp_q10() and C++ unsigned division, compared exactly.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "Vpsm_divider.h"
#include "Vpsm_iexp.h"
#include "Vpsm_softmax_l2.h"
#include "Vpsm_softmax_l4.h"
#include "passim/fixed_point.hpp"
#include "passim/kernels/softmax.hpp"
#include "vec_harness.hpp"

namespace {

using passim::sim::vec_first_mismatch;
using passim::sim::vec_seeded_rng;
using passim::sim::vec_uniform;
using passim::sim::vec_words;
using passim::sim::VecHarness;
using passim::sim::VecRunStats;
using passim::sim::VecScratchpad;

constexpr std::int32_t kI32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kI32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::size_t kScratchWords = std::size_t{1} << 16;  // AddrWidth = 16 (the default)
constexpr std::size_t kMaxLen = 65535;                       // LenWidth = 16 (the default)

// Cycles per pass for a row of W words (rtl/softmax/README.md): the divider is part of pass 1.
constexpr std::uint64_t kPass0Extra = 2;   // last read data + reduction
constexpr std::uint64_t kPass1Extra = 35;  // last read data + reduction + 33-cycle divide
// Online: pass 0 is last read data + max reduction + sum combine + 33-cycle divide.
constexpr std::uint64_t kOnlinePass0Extra = 36;

/// The two modes of psm_softmax (its online_i input).
enum class Mode { kThreePass, kOnline };
constexpr Mode kModes[] = {Mode::kThreePass, Mode::kOnline};

std::string mode_name(Mode m) { return m == Mode::kOnline ? "online" : "3-pass"; }

// ---------------------------------------------------------------------------------------------
// psm_iexp: combinational twin of iexp_q10
// ---------------------------------------------------------------------------------------------

/// Drives x through the Verilated psm_iexp and returns exp_o.
std::uint32_t rtl_iexp(Vpsm_iexp& top, std::int32_t x) {
  top.x_q10_i = static_cast<std::uint32_t>(x);
  top.eval();
  return top.exp_o;
}

TEST(IexpRtl, ExhaustiveFromMinus2To22ToZero) {
  // Covers every input Softmax can produce ([-2^20, 0]) and the underflow to 0 below
  // -32 * ln2 = -22688, with a wide margin.
  Vpsm_iexp top;
  std::int64_t bad = 1;  // no mismatch yet
  std::size_t checked = 0;
  for (std::int64_t x = -(std::int64_t{1} << 22); x <= 0 && bad == 1; ++x) {
    const auto x32 = static_cast<std::int32_t>(x);
    if (rtl_iexp(top, x32) != passim::iexp_q10(x32)) {
      bad = x;
    }
    ++checked;
  }
  ASSERT_EQ(bad, 1) << "first bad x_q10 " << bad << ": rtl "
                    << rtl_iexp(top, static_cast<std::int32_t>(bad)) << ", golden "
                    << passim::iexp_q10(static_cast<std::int32_t>(bad));
  EXPECT_EQ(checked, (std::size_t{1} << 22) + 1);
}

TEST(IexpRtl, BoundariesAndRandomOverInt32) {
  Vpsm_iexp top;
  std::vector<std::int32_t> xs = {0,       -1,          -708,       -709,     -710,
                                  -22687,  -22688,      -22689,     -1 << 20, -(1 << 20) - 1,
                                  kI32Min, kI32Min + 1, -(1 << 30), -21979,   -21270};
  for (std::int32_t z = 0; z <= 33; ++z) {  // every shift and both ends of each interval
    xs.push_back(-z * passim::kExpLn2);
    xs.push_back(-z * passim::kExpLn2 - 1);
    xs.push_back(-z * passim::kExpLn2 + 1 > 0 ? 0 : -z * passim::kExpLn2 + 1);
  }
  const std::uint32_t seed = 20240611;
  auto rng = vec_seeded_rng(seed);
  for (int i = 0; i < 200000; ++i) {
    xs.push_back(vec_uniform<std::int32_t>(rng, kI32Min, 0));
  }
  for (const std::int32_t x : xs) {
    ASSERT_EQ(rtl_iexp(top, x), passim::iexp_q10(x)) << "x_q10 " << x << ", seed " << seed;
  }
}

// ---------------------------------------------------------------------------------------------
// psm_divider (Width = 64, as in psm_softmax)
// ---------------------------------------------------------------------------------------------

void divider_tick(Vpsm_divider& top) {
  top.clk_i = 0;
  top.eval();
  top.clk_i = 1;
  top.eval();
}

/// Runs one division; checks the documented latency (done_o in cycle Width / 2 + 1: two
/// quotient bits per cycle).
std::uint64_t rtl_divide(Vpsm_divider& top, std::uint64_t dividend, std::uint64_t divisor) {
  top.dividend_i = dividend;
  top.divisor_i = divisor;
  top.start_i = 1;
  divider_tick(top);
  top.start_i = 0;
  int cycles = 1;
  for (; cycles < 200; ++cycles) {
    top.clk_i = 0;
    top.eval();
    if (top.done_o) {
      break;
    }
    divider_tick(top);
  }
  EXPECT_EQ(cycles, 33) << "psm_divider latency";
  return top.quotient_o;
}

TEST(DividerRtl, MatchesUnsignedDivision) {
  Vpsm_divider top;
  top.rst_i = 1;
  for (int i = 0; i < 3; ++i) {
    divider_tick(top);
  }
  top.rst_i = 0;
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  constexpr std::uint64_t kSoftmaxDividend = std::uint64_t{passim::kProbOne} << 32;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> cases = {
      {0, 1},    {1, 1},    {kMax, 1}, {kMax, kMax}, {kMax - 1, kMax}, {kMax, std::uint64_t{1} << 63},
      {5, 7},    {7, 7},    {kSoftmaxDividend, static_cast<std::uint64_t>(passim::kExpOne)},
      {std::uint64_t{1} << 59, std::uint64_t{1} << 30}};
  const std::uint32_t seed = 6464;
  auto rng = vec_seeded_rng(seed);
  const auto random_bits = [&rng](int max_bits) {
    const int bits = vec_uniform<int>(rng, 1, max_bits);
    const std::uint64_t r = (std::uint64_t{rng()} << 32) | rng();
    return bits == 64 ? r | (std::uint64_t{1} << 63)
                      : (r & ((std::uint64_t{1} << bits) - 1)) | (std::uint64_t{1} << (bits - 1));
  };
  for (int i = 0; i < 3000; ++i) {
    // Exact multiples and their neighbours hit the "remainder == divisor" step.
    const std::uint64_t d = random_bits(40);
    const std::uint64_t q = random_bits(24);  // q * d + 1 < 2^64
    cases.emplace_back(q * d, d);
    cases.emplace_back(q * d - 1, d);
    cases.emplace_back(q * d + 1, d);
    cases.emplace_back(random_bits(64), random_bits(64));
    cases.emplace_back(kSoftmaxDividend, random_bits(40));
  }
  for (const auto& [dividend, divisor] : cases) {
    ASSERT_EQ(rtl_divide(top, dividend, divisor), dividend / divisor)
        << dividend << " / " << divisor << ", seed " << seed;
  }
}

// ---------------------------------------------------------------------------------------------
// psm_softmax
// ---------------------------------------------------------------------------------------------

template <typename Top, std::size_t L>
struct SoftmaxModel {
  using Model = Top;
  static constexpr std::size_t kLanes = L;
};

template <typename P>
class SoftmaxRtl : public ::testing::Test {
 protected:
  static constexpr std::size_t kLanes = P::kLanes;

  SoftmaxRtl() {
    VecScratchpad mem(1, kLanes, 0);
    VecHarness<typename P::Model>(top_, mem).reset();
  }

  /// Runs `x` from word `src` to word `dst` on the RTL (without a reset since the previous
  /// row) and checks: the output row against softmax_i16, or softmax_online_i16 with
  /// lanes = Lanes (all 32 bits of each lane), that nothing else in the scratchpad changed,
  /// three passes (online: two) that each read the whole row once, writes only in the last
  /// pass, and the documented cycle count of each pass.
  void check_row(const std::vector<std::int32_t>& x, std::uint32_t seed, std::uint32_t src = 16,
                 std::uint32_t dst = 40000, Mode mode = Mode::kThreePass) {
    const std::size_t n = x.size();
    const std::uint32_t words = vec_words(n, kLanes);
    const bool online = mode == Mode::kOnline;
    ASSERT_GE(n, 1u);
    ASSERT_LE(n, kMaxLen);

    std::vector<std::uint32_t> e(n);
    std::vector<std::int16_t> golden16(n);
    if (online) {
      passim::kernels::softmax_online_i16(x, kLanes, golden16);
    } else {
      passim::kernels::softmax_i16(x, e, golden16);
    }
    const std::vector<std::int32_t> golden(golden16.begin(), golden16.end());

    VecScratchpad mem(kScratchWords, kLanes, seed);
    mem.write_row<std::int32_t>(src, x);
    std::vector<std::uint32_t> expected_mem = mem.raw();
    for (std::size_t i = 0; i < n; ++i) {
      expected_mem[(dst + i / kLanes) * kLanes + i % kLanes] =
          static_cast<std::uint32_t>(golden[i]);
    }

    top_.src_addr_i = static_cast<std::uint16_t>(src);
    top_.dst_addr_i = static_cast<std::uint16_t>(dst);
    top_.len_i = static_cast<std::uint16_t>(n);
    top_.online_i = online ? 1 : 0;
    const VecRunStats s = VecHarness<typename P::Model>(top_, mem).run(4 * words + 200);
    ASSERT_TRUE(s.finished) << "no done_o; n " << n << ", seed " << seed << "; " << s.summary();

    const std::vector<std::int32_t> out = mem.read_row(dst, n);
    const std::size_t bad = vec_first_mismatch(out, golden);
    ASSERT_EQ(out, golden) << describe(x, bad, seed) << (online ? ", online" : "") << ": rtl "
                           << out[bad] << ", golden " << golden[bad];
    const std::size_t bad_word = vec_first_mismatch(mem.raw(), expected_mem);
    ASSERT_EQ(mem.raw(), expected_mem)
        << "scratchpad changed outside the output row at word " << bad_word / kLanes << " lane "
        << bad_word % kLanes << "; n " << n << ", seed " << seed;

    EXPECT_EQ(s.done_pulses, 1) << s.summary();
    EXPECT_EQ(s.idle_requests, 0);
    const std::size_t passes = online ? 2 : 3;
    if (online) {
      EXPECT_EQ(s.pass_cycles[0], words + kOnlinePass0Extra) << "n " << n << "; " << s.summary();
      EXPECT_EQ(s.pass_cycles[1], 2 * std::uint64_t{words}) << "n " << n << "; " << s.summary();
    } else {
      EXPECT_EQ(s.pass_cycles[0], words + kPass0Extra) << "n " << n << "; " << s.summary();
      EXPECT_EQ(s.pass_cycles[1], words + kPass1Extra) << "n " << n << "; " << s.summary();
      EXPECT_EQ(s.pass_cycles[2], 2 * std::uint64_t{words}) << "n " << n << "; " << s.summary();
    }
    for (std::size_t pass = passes; pass < VecRunStats::kPasses; ++pass) {
      EXPECT_EQ(s.pass_cycles[pass], 0u) << "pass " << pass << "; " << s.summary();
      EXPECT_EQ(passim::sim::count_requests(s.reads[pass]), 0u) << "reads in pass " << pass;
    }
    EXPECT_EQ(s.latency, s.busy_cycles() + 1) << s.summary();
    for (std::size_t pass = 0; pass < passes; ++pass) {
      EXPECT_EQ(passim::sim::count_requests(s.reads[pass]), words) << "reads in pass " << pass;
      passim::sim::expect_reads_whole_row(s, pass, src, n, kLanes, "input");
    }
    passim::sim::expect_writes_whole_row(s, passes - 1, dst, n, kLanes);
    last_stats_ = s;
  }

  void check_online(const std::vector<std::int32_t>& x, std::uint32_t seed,
                    std::uint32_t src = 16, std::uint32_t dst = 40000) {
    check_row(x, seed, src, dst, Mode::kOnline);
  }

  /// The failure message: seed, length, lanes, the first bad index and its inputs.
  static std::string describe(const std::vector<std::int32_t>& x, std::size_t bad,
                              std::uint32_t seed) {
    std::ostringstream msg;
    std::int32_t m = x[0];
    for (const auto v : x) {
      m = std::max(m, v);
    }
    msg << "seed " << seed << ", n " << x.size() << ", lanes " << kLanes << ", row max " << m
        << ", first bad index " << bad;
    if (bad < x.size()) {
      msg << " (x " << x[bad] << ", x - max " << std::int64_t{x[bad]} - m << ")";
    }
    return msg.str();
  }

  typename P::Model top_;
  VecRunStats last_stats_;
};

using SoftmaxModels =
    ::testing::Types<SoftmaxModel<Vpsm_softmax_l2, 2>, SoftmaxModel<Vpsm_softmax_l4, 4>>;
class LaneNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return "Lanes" + std::to_string(T::kLanes);
  }
};
TYPED_TEST_SUITE(SoftmaxRtl, SoftmaxModels, LaneNames);

/// A row of n logits uniform in [lo, hi].
std::vector<std::int32_t> random_row(std::mt19937& rng, std::size_t n, std::int64_t lo,
                                     std::int64_t hi) {
  std::vector<std::int32_t> x(n);
  for (auto& v : x) {
    v = vec_uniform<std::int32_t>(rng, lo, hi);
  }
  return x;
}

// The row families below run in both modes: against softmax_i16 (3 passes) and against
// softmax_online_i16 with lanes = Lanes (2 passes).

TYPED_TEST(SoftmaxRtl, RandomRows) {
  const std::uint32_t seed = 1234;
  // Logit spreads: typical attention scores (+-8.0 in Q.10), wider, and the whole int32 range.
  const std::int64_t spreads[] = {1 << 13, 1 << 16, 1 << 22, std::int64_t{1} << 31};
  for (const Mode mode : kModes) {
    auto rng = vec_seeded_rng(seed);
    for (int row = 0; row < 40; ++row) {
      const auto n = vec_uniform<std::size_t>(rng, 1, 300);
      const std::int64_t spread = spreads[row % 4];
      const std::int64_t lo = std::max<std::int64_t>(-spread, kI32Min);
      const std::int64_t hi = std::min<std::int64_t>(spread, kI32Max);
      SCOPED_TRACE(mode_name(mode) + ", row " + std::to_string(row));
      this->check_row(random_row(rng, n, lo, hi), seed + static_cast<std::uint32_t>(row), 16,
                      40000, mode);
      if (this->HasFatalFailure()) {
        return;
      }
    }
  }
}

TYPED_TEST(SoftmaxRtl, AllEqualRows) {
  for (const Mode mode : kModes) {
    for (const std::size_t n : {1u, 2u, 3u, 5u, 8u, 63u, 511u, 512u}) {
      for (const std::int32_t v : {0, -5, 1 << 20, kI32Min, kI32Max}) {
        SCOPED_TRACE(mode_name(mode) + ", n " + std::to_string(n) + ", value " +
                     std::to_string(v));
        this->check_row(std::vector<std::int32_t>(n, v), 7, 16, 40000, mode);
        if (this->HasFatalFailure()) {
          return;
        }
      }
    }
  }
}

TYPED_TEST(SoftmaxRtl, LengthOneIsKProbOne) {
  for (const Mode mode : kModes) {
    for (const std::int32_t v : {0, 5, -7, 1 << 20, kI32Min, kI32Max}) {
      SCOPED_TRACE(mode_name(mode) + ", value " + std::to_string(v));
      this->check_row({v}, 11, 16, 40000, mode);
      if (this->HasFatalFailure()) {
        return;
      }
    }
  }
}

TYPED_TEST(SoftmaxRtl, EveryLengthUpToFourWords) {
  // Odd lengths and every tail-word fill (lengths not a multiple of Lanes).
  const std::uint32_t seed = 99;
  for (const Mode mode : kModes) {
    auto rng = vec_seeded_rng(seed);
    for (std::size_t n = 1; n <= 4 * TestFixture::kLanes + 1; ++n) {
      SCOPED_TRACE(mode_name(mode) + ", n " + std::to_string(n));
      this->check_row(random_row(rng, n, -(1 << 14), 1 << 14),
                      seed + static_cast<std::uint32_t>(n), 16, 40000, mode);
      if (this->HasFatalFailure()) {
        return;
      }
    }
  }
}

TYPED_TEST(SoftmaxRtl, ContextLengthAndLongerRows) {
  const std::uint32_t seed = 512;
  for (const Mode mode : kModes) {
    auto rng = vec_seeded_rng(seed);
    for (const std::size_t n : {511u, 512u, 513u, 1000u, 2048u, 4099u}) {
      SCOPED_TRACE(mode_name(mode) + ", n " + std::to_string(n));
      this->check_row(random_row(rng, n, -(8 << 10), 8 << 10),
                      seed + static_cast<std::uint32_t>(n), 16, 40000, mode);
      if (this->HasFatalFailure()) {
        return;
      }
    }
    const auto s = this->last_stats_;
    std::printf("[  CYCLES  ] %s, Lanes %zu, n 4099: %s\n", mode_name(mode).c_str(),
                TestFixture::kLanes, s.summary().c_str());
  }
}

TYPED_TEST(SoftmaxRtl, LongestRowLenWidthMax) {
  const std::uint32_t seed = 65535;
  auto rng = vec_seeded_rng(seed);
  // The sum reaches 65535 * kExpOne ~ 2^37.5 when the row is flat: a flat row and a random one.
  this->check_row(std::vector<std::int32_t>(kMaxLen, 3), seed, 0, 32768);
  ASSERT_FALSE(this->HasFatalFailure());
  this->check_row(random_row(rng, kMaxLen, -(1 << 12), 1 << 12), seed, 0, 32768);
}

TYPED_TEST(SoftmaxRtl, Int32ExtremesAndClampBoundaries) {
  const std::uint32_t seed = 31;
  auto rng = vec_seeded_rng(seed);
  this->check_row({kI32Min, kI32Max}, seed);
  this->check_row({kI32Max, kI32Min, 0, kI32Max - 1, kI32Min + 1}, seed);
  this->check_row({kI32Min, kI32Min + 1, kI32Min, kI32Min}, seed);
  ASSERT_FALSE(this->HasFatalFailure());
  // Rows around the clamp at x - m = -2^20 and the exp underflow at x - m = -32 * ln2.
  for (const std::int32_t m : {kI32Max, 0, kI32Min + (1 << 21)}) {
    const std::int64_t offsets[] = {
        0,      -1,     -(1 << 20) + 1, -(1 << 20), -(1 << 20) - 1, -22687,
        -22688, -22689, -709,           -710,       -21979,         -(std::int64_t{1} << 31)};
    std::vector<std::int32_t> x;
    for (const auto off : offsets) {
      x.push_back(static_cast<std::int32_t>(std::max<std::int64_t>(kI32Min, m + off)));
    }
    SCOPED_TRACE("max " + std::to_string(m));
    this->check_row(x, seed);
    ASSERT_FALSE(this->HasFatalFailure());
  }
  // Random rows drawn from the extremes only.
  const std::int32_t picks[] = {kI32Min, kI32Min + 1, -1, 0, 1, kI32Max - 1, kI32Max};
  for (int row = 0; row < 20; ++row) {
    std::vector<std::int32_t> x(vec_uniform<std::size_t>(rng, 1, 40));
    for (auto& v : x) {
      v = picks[vec_uniform<std::size_t>(rng, 0, 6)];
    }
    SCOPED_TRACE("extreme row " + std::to_string(row));
    this->check_row(x, seed + static_cast<std::uint32_t>(row));
    ASSERT_FALSE(this->HasFatalFailure());
  }
}

TYPED_TEST(SoftmaxRtl, InPlaceRow) {
  // dst == src: the last pass writes each word right after reading it, so in-place is allowed.
  const std::uint32_t seed = 5;
  for (const Mode mode : kModes) {
    auto rng = vec_seeded_rng(seed);
    SCOPED_TRACE(mode_name(mode));
    this->check_row(random_row(rng, 77, -(1 << 13), 1 << 13), seed, 100, 100, mode);
  }
}

// ---------------------------------------------------------------------------------------------
// psm_softmax, online mode (online_i = 1) against softmax_online_i16(x, Lanes)
// ---------------------------------------------------------------------------------------------

// Increasing rows rescale a lane's sum at every element; decreasing rows never do (only the
// lane combine rescales); the cluster row is the worst case of docs/numerics.md 4.4.
TYPED_TEST(SoftmaxRtl, OnlineIncreasingAndDecreasingRows) {
  const std::uint32_t seed = 142;
  auto rng = vec_seeded_rng(seed);
  for (const std::size_t n : {2u, 7u, 64u, 512u}) {
    for (const std::int32_t slope : {1, 37, 142, 709, 1000, 3000}) {
      std::vector<std::int32_t> up(n);
      for (std::size_t i = 0; i < n; ++i) {
        up[i] = std::int32_t(i) * slope - (1 << 20);
      }
      std::vector<std::int32_t> down(up.rbegin(), up.rend());
      SCOPED_TRACE("n " + std::to_string(n) + ", slope " + std::to_string(slope));
      this->check_online(up, seed);
      this->check_online(down, seed);
      ASSERT_FALSE(this->HasFatalFailure());
    }
    auto sorted = random_row(rng, n, -(16 << 10), 16 << 10);
    std::sort(sorted.begin(), sorted.end());
    this->check_online(sorted, seed + static_cast<std::uint32_t>(n));
    ASSERT_FALSE(this->HasFatalFailure());
  }
  std::vector<std::int32_t> cluster(427, 0);  // k 427, j 46, s 64, g 3734
  for (std::int32_t j = 1; j <= 46; ++j) {
    cluster.push_back(j * 64);
  }
  cluster.push_back(46 * 64 + 3734);
  this->check_online(cluster, seed);
}

TYPED_TEST(SoftmaxRtl, OnlineLongestRowLenWidthMax) {
  const std::uint32_t seed = 65534;
  auto rng = vec_seeded_rng(seed);
  // A flat row makes the largest lane sums (65535 * kExpOne / Lanes); an increasing one
  // rescales at every element.
  this->check_online(std::vector<std::int32_t>(kMaxLen, 3), seed, 0, 32768);
  ASSERT_FALSE(this->HasFatalFailure());
  std::vector<std::int32_t> up(kMaxLen);
  for (std::size_t i = 0; i < kMaxLen; ++i) {
    up[i] = std::int32_t(i) * 3 - 100000;
  }
  this->check_online(up, seed, 0, 32768);
  ASSERT_FALSE(this->HasFatalFailure());
  this->check_online(random_row(rng, kMaxLen, -(1 << 12), 1 << 12), seed, 0, 32768);
}

TYPED_TEST(SoftmaxRtl, OnlineInt32ExtremesAndClampBoundaries) {
  const std::uint32_t seed = 32;
  auto rng = vec_seeded_rng(seed);
  this->check_online({kI32Min, kI32Max}, seed);
  this->check_online({kI32Max, kI32Min, 0, kI32Max - 1, kI32Min + 1}, seed);
  this->check_online({kI32Min, kI32Min + 1, kI32Min, kI32Min}, seed);
  ASSERT_FALSE(this->HasFatalFailure());
  // Rises and lane maxima around the clamp at -2^20 and the exp underflow at -32 * ln2.
  for (const std::int32_t m : {kI32Max, 0, kI32Min + (1 << 21)}) {
    const std::int64_t offsets[] = {-(std::int64_t{1} << 31), -(1 << 20) - 1, -(1 << 20),
                                    -(1 << 20) + 1, -22689, -22688, -22687, -21979, -710, -709,
                                    -1, 0};
    std::vector<std::int32_t> x;
    for (const auto off : offsets) {  // increasing: every element rises by a boundary step
      x.push_back(static_cast<std::int32_t>(std::max<std::int64_t>(kI32Min, m + off)));
    }
    SCOPED_TRACE("max " + std::to_string(m));
    this->check_online(x, seed);
    std::reverse(x.begin(), x.end());
    this->check_online(x, seed);
    ASSERT_FALSE(this->HasFatalFailure());
  }
  const std::int32_t picks[] = {kI32Min, kI32Min + 1, -1, 0, 1, kI32Max - 1, kI32Max};
  for (int row = 0; row < 20; ++row) {
    std::vector<std::int32_t> x(vec_uniform<std::size_t>(rng, 1, 40));
    for (auto& v : x) {
      v = picks[vec_uniform<std::size_t>(rng, 0, 6)];
    }
    SCOPED_TRACE("extreme row " + std::to_string(row));
    this->check_online(x, seed + static_cast<std::uint32_t>(row));
    ASSERT_FALSE(this->HasFatalFailure());
  }
}

// The mode is sampled with start_i: rows of both modes back to back, without a reset.
TYPED_TEST(SoftmaxRtl, ModesAlternateWithoutReset) {
  const std::uint32_t seed = 23;
  auto rng = vec_seeded_rng(seed);
  for (int row = 0; row < 12; ++row) {
    auto x = random_row(rng, vec_uniform<std::size_t>(rng, 1, 90), -(1 << 14), 1 << 14);
    if (row % 3 == 0) {
      std::sort(x.begin(), x.end());
    }
    SCOPED_TRACE("row " + std::to_string(row));
    this->check_row(x, seed, 16, 40000, row % 2 == 0 ? Mode::kOnline : Mode::kThreePass);
    ASSERT_FALSE(this->HasFatalFailure());
  }
}

}  // namespace
