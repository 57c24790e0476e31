// SPDX-License-Identifier: Apache-2.0
// rtl/rmsnorm/psm_rmsnorm.sv (Lanes = 2), rtl/common/psm_rsqrt.sv and rtl/common/psm_isqrt.sv
// against their golden twins passim::kernels::rmsnorm_i8(), passim::rsqrt_requant() and
// passim::isqrt_u64(), compared exactly.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "Vpsm_isqrt.h"
#include "Vpsm_rmsnorm_l2.h"
#include "Vpsm_rsqrt.h"
#include "passim/fixed_point.hpp"
#include "passim/kernels/rmsnorm.hpp"
#include "vec_harness.hpp"

namespace {

using passim::sim::vec_first_mismatch;
using passim::sim::vec_seeded_rng;
using passim::sim::vec_uniform;
using passim::sim::vec_words;
using passim::sim::VecHarness;
using passim::sim::VecRunStats;
using passim::sim::VecScratchpad;

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr std::size_t kScratchWords = std::size_t{1} << 16;  // AddrWidth = 16 (the default)

/// One clock cycle of a Verilated unit with clk_i.
template <typename M>
void tick(M& top) {
  top.clk_i = 0;
  top.eval();
  top.clk_i = 1;
  top.eval();
}

template <typename M>
void reset(M& top) {
  top.rst_i = 1;
  top.start_i = 0;
  for (int i = 0; i < 3; ++i) {
    tick(top);
  }
  top.rst_i = 0;
}

/// A random value of a random bit width in [1, max_bits], so every magnitude is exercised.
std::uint64_t random_bits(std::mt19937& rng, int max_bits) {
  const int bits = vec_uniform<int>(rng, 1, max_bits);
  const std::uint64_t r = (std::uint64_t{rng()} << 32) | rng();
  const std::uint64_t top_bit = std::uint64_t{1} << (bits - 1);
  return top_bit | (r & (top_bit - 1));
}

// ---------------------------------------------------------------------------------------------
// psm_isqrt
// ---------------------------------------------------------------------------------------------

/// Runs one square root; returns the root and checks the documented 33-cycle latency.
std::uint32_t rtl_isqrt(Vpsm_isqrt& top, std::uint64_t x) {
  top.radicand_i = x;
  top.start_i = 1;
  tick(top);
  top.start_i = 0;
  int cycles = 1;
  for (; cycles < 100; ++cycles) {
    top.clk_i = 0;
    top.eval();
    if (top.done_o) {
      break;
    }
    tick(top);
  }
  EXPECT_EQ(cycles, 33) << "psm_isqrt latency for x " << x;
  return top.root_o;
}

TEST(IsqrtRtl, MatchesIsqrtU64) {
  Vpsm_isqrt top;
  reset(top);
  constexpr std::uint64_t kMaxSquare = std::uint64_t{0xFFFFFFFF} * 0xFFFFFFFF;
  std::vector<std::uint64_t> xs = {0, 1, 2, 3, 4, 5, 8, 9, 15, 16, 17, kU64Max, kU64Max - 1};
  for (const std::uint64_t x : {kMaxSquare - 1, kMaxSquare, kMaxSquare + 1}) {
    xs.push_back(x);
  }
  for (int b = 0; b < 64; ++b) {
    xs.push_back(std::uint64_t{1} << b);
  }
  const std::uint32_t seed = 4242;
  auto rng = vec_seeded_rng(seed);
  for (int i = 0; i < 3000; ++i) {
    const std::uint64_t r = random_bits(rng, 32);  // a root of every width
    const std::uint64_t sq = r * r;
    xs.push_back(sq);
    xs.push_back(sq - 1);
    xs.push_back(sq + 1);
    xs.push_back(random_bits(rng, 64));
  }
  for (const std::uint64_t x : xs) {
    ASSERT_EQ(rtl_isqrt(top, x), passim::isqrt_u64(x)) << "x " << x << ", seed " << seed;
  }
}

// ---------------------------------------------------------------------------------------------
// psm_rsqrt
// ---------------------------------------------------------------------------------------------

struct RsqrtResult {
  passim::Requant r;
  int cycles = 0;  // from the start_i cycle to the done_o cycle
};

RsqrtResult rtl_rsqrt(Vpsm_rsqrt& top, std::uint64_t x, int extra_shift) {
  top.x_i = x;
  top.extra_shift_i = static_cast<std::uint8_t>(extra_shift);
  top.start_i = 1;
  tick(top);
  top.start_i = 0;
  RsqrtResult res;
  for (res.cycles = 1; res.cycles < 400; ++res.cycles) {
    top.clk_i = 0;
    top.eval();
    if (top.done_o) {
      break;
    }
    tick(top);
  }
  res.r = {static_cast<std::int32_t>(top.mult_o), static_cast<std::int32_t>(top.shift_o)};
  tick(top);
  return res;
}

TEST(RsqrtRtl, MatchesRsqrtRequant) {
  Vpsm_rsqrt top;
  reset(top);
  // Small values, and for every bit width: the power of two, one above, and all ones.
  std::vector<std::uint64_t> xs = {1, 2, 3, 4, 5, 7, 8, 9};
  for (int b = 0; b < 62; ++b) {
    xs.push_back(std::uint64_t{1} << b);
    xs.push_back((std::uint64_t{1} << b) + 1);
    xs.push_back((std::uint64_t{2} << b) - 1);
  }
  const std::uint32_t seed = 777;
  auto rng = vec_seeded_rng(seed);
  for (int i = 0; i < 2000; ++i) {
    xs.push_back(random_bits(rng, 62));
  }
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const std::uint64_t x = xs[i];
    const int k = (62 - static_cast<int>(std::bit_width(x))) / 2;
    // extra_shift in [0, 13] (RMSNorm's range) as long as the shift stays <= 63.
    const int extra = static_cast<int>(i % 14) > 4 + k ? 4 + k : static_cast<int>(i % 14);
    const passim::Requant want = passim::rsqrt_requant(x, extra);
    const RsqrtResult got = rtl_rsqrt(top, x, extra);
    ASSERT_EQ(got.r.mult, want.mult) << "x " << x << ", extra " << extra << ", seed " << seed;
    ASSERT_EQ(got.r.shift, want.shift) << "x " << x << ", extra " << extra << ", seed " << seed;
    ASSERT_EQ(got.cycles, 65 + k) << "latency, x " << x;
  }
}

// ---------------------------------------------------------------------------------------------
// psm_rmsnorm
// ---------------------------------------------------------------------------------------------

struct NormCase {
  std::vector<std::int16_t> x;
  std::vector<std::int16_t> gain;
  int gain_frac_bits = 0;
  std::uint64_t eps = 0;
};

class RmsNormRtl : public ::testing::Test {
 protected:
  static constexpr std::size_t kLanes = 2;
  static constexpr std::uint64_t kPass0Extra = 2;  // last read data + reduction (+ rsqrt)

  RmsNormRtl() {
    VecScratchpad mem(1, kLanes, 0);
    VecHarness<Vpsm_rmsnorm_l2>(top_, mem).reset();
  }

  /// Runs one row (without a reset since the previous row) and checks: the output against
  /// rmsnorm_i8 (all 32 bits of each lane), that nothing else changed, two passes that read
  /// the whole row (and, in pass 1, the whole gain row) once, writes only in pass 1, and the
  /// documented cycles per pass.
  void check_row(const NormCase& c, std::uint32_t seed, std::uint32_t src = 8,
                 std::uint32_t gain = 20000, std::uint32_t dst = 45000) {
    const std::size_t n = c.x.size();
    const std::uint32_t words = vec_words(n, kLanes);
    ASSERT_EQ(c.gain.size(), n);

    std::vector<std::int8_t> golden8(n);
    passim::kernels::rmsnorm_i8(c.x, {c.gain, c.gain_frac_bits, c.eps}, golden8);
    const std::vector<std::int32_t> golden(golden8.begin(), golden8.end());
    std::uint64_t ss = c.eps;
    for (const auto v : c.x) {
      ss += static_cast<std::uint64_t>(std::int32_t{v} * std::int32_t{v});
    }
    ss = std::max<std::uint64_t>(ss, 1);
    const int k = (62 - static_cast<int>(std::bit_width(ss))) / 2;

    VecScratchpad mem(kScratchWords, kLanes, seed);
    mem.write_row<std::int16_t>(src, c.x);
    mem.write_row<std::int16_t>(gain, c.gain);
    std::vector<std::uint32_t> expected_mem = mem.raw();
    for (std::size_t i = 0; i < n; ++i) {
      expected_mem[(dst + i / kLanes) * kLanes + i % kLanes] =
          static_cast<std::uint32_t>(golden[i]);
    }

    top_.src_addr_i = static_cast<std::uint16_t>(src);
    top_.gain_addr_i = static_cast<std::uint16_t>(gain);
    top_.dst_addr_i = static_cast<std::uint16_t>(dst);
    top_.len_i = static_cast<std::uint16_t>(n);
    top_.eps_i = c.eps;
    top_.gain_frac_bits_i = static_cast<std::uint8_t>(c.gain_frac_bits);
    const VecRunStats s = VecHarness<Vpsm_rmsnorm_l2>(top_, mem).run(4 * words + 300);
    ASSERT_TRUE(s.finished) << "no done_o; n " << n << ", seed " << seed << "; " << s.summary();

    const std::vector<std::int32_t> out = mem.read_row(dst, n);
    const std::size_t bad = vec_first_mismatch(out, golden);
    ASSERT_EQ(out, golden) << describe(c, bad, seed) << ": rtl " << out[bad] << ", golden "
                           << golden[bad];
    const std::size_t bad_word = vec_first_mismatch(mem.raw(), expected_mem);
    ASSERT_EQ(mem.raw(), expected_mem)
        << "scratchpad changed outside the output row at word " << bad_word / kLanes << " lane "
        << bad_word % kLanes << "; n " << n << ", seed " << seed;

    EXPECT_EQ(s.done_pulses, 1) << s.summary();
    EXPECT_EQ(s.idle_requests, 0);
    EXPECT_EQ(s.pass_cycles[0], words + kPass0Extra + 65 + static_cast<std::uint64_t>(k))
        << "n " << n << ", ss " << ss << "; " << s.summary();
    EXPECT_EQ(s.pass_cycles[1], 3 * std::uint64_t{words}) << "n " << n << "; " << s.summary();
    EXPECT_EQ(s.pass_cycles[2] + s.pass_cycles[3], 0u) << s.summary();
    EXPECT_EQ(s.latency, s.busy_cycles() + 1) << s.summary();
    EXPECT_EQ(passim::sim::count_requests(s.reads[0]), words) << "reads in pass 0";
    passim::sim::expect_reads_whole_row(s, 0, src, n, kLanes, "input");
    if (src != gain) {
      EXPECT_EQ(passim::sim::count_requests(s.reads[1]), 2 * std::uint64_t{words})
          << "reads in pass 1";
      passim::sim::expect_reads_whole_row(s, 1, src, n, kLanes, "input");
      passim::sim::expect_reads_whole_row(s, 1, gain, n, kLanes, "gain");
    }
    passim::sim::expect_writes_whole_row(s, 1, dst, n, kLanes);
    last_stats_ = s;
  }

  static std::string describe(const NormCase& c, std::size_t bad, std::uint32_t seed) {
    std::ostringstream msg;
    msg << "seed " << seed << ", n " << c.x.size() << ", eps " << c.eps << ", gain_frac_bits "
        << c.gain_frac_bits << ", first bad index " << bad;
    if (bad < c.x.size()) {
      msg << " (x " << c.x[bad] << ", gain " << c.gain[bad] << ")";
    }
    return msg.str();
  }

  Vpsm_rmsnorm_l2 top_;
  VecRunStats last_stats_;
};

std::vector<std::int16_t> random_i16(std::mt19937& rng, std::size_t n, std::int64_t lo,
                                     std::int64_t hi) {
  std::vector<std::int16_t> v(n);
  for (auto& e : v) {
    e = vec_uniform<std::int16_t>(rng, lo, hi);
  }
  return v;
}

/// Gains like a real model's: g * sqrt(n) / s_out with |g| around 1, in Q.frac_bits; the
/// magnitude is capped so int16 holds it at frac_bits 13.
std::vector<std::int16_t> realistic_gain(std::mt19937& rng, std::size_t n, int frac_bits) {
  const std::int64_t one = std::int64_t{1} << frac_bits;
  const std::int64_t hi = std::min<std::int64_t>(32767, 48 * one);
  return random_i16(rng, n, -hi, hi);
}

TEST_F(RmsNormRtl, AllZeroRowWithAndWithoutEps) {
  for (const std::size_t n : {1u, 2u, 5u, 64u}) {
    for (const std::uint64_t eps :
         {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1} << 39}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", eps " + std::to_string(eps));
      NormCase c{std::vector<std::int16_t>(n, 0), std::vector<std::int16_t>(n, 4096), 12, eps};
      check_row(c, 3);
      ASSERT_FALSE(HasFatalFailure());
    }
  }
}

TEST_F(RmsNormRtl, ConstantRows) {
  for (const int v : {1, -1, 100, -100, 32767, -32768}) {
    for (const std::size_t n : {1u, 7u, 64u}) {
      SCOPED_TRACE("value " + std::to_string(v) + ", n " + std::to_string(n));
      // out = round(v / |v| * gain / 2^frac): +-32 with gain 32 * 2^8.
      NormCase c{std::vector<std::int16_t>(n, static_cast<std::int16_t>(v)),
                 std::vector<std::int16_t>(n, 32 << 8), 8, 0};
      check_row(c, 4);
      ASSERT_FALSE(HasFatalFailure());
    }
  }
}

TEST_F(RmsNormRtl, SaturatesToInt8) {
  const std::uint32_t seed = 127;
  auto rng = vec_seeded_rng(seed);
  // Gains far above 127 * 2^frac / (|x| / rms) push most outputs to -128 or 127.
  for (int frac = 0; frac <= 13; frac += 13) {
    NormCase c{random_i16(rng, 33, -32768, 32767), random_i16(rng, 33, -32768, 32767), frac, 0};
    check_row(c, seed);
    ASSERT_FALSE(HasFatalFailure());
  }
  NormCase c{{32767, -32768, 1, -1}, {32767, 32767, -32768, -32768}, 0, 0};
  check_row(c, seed);
}

TEST_F(RmsNormRtl, OddLengthsAndLengthOne) {
  const std::uint32_t seed = 17;
  auto rng = vec_seeded_rng(seed);
  for (std::size_t n = 1; n <= 11; ++n) {
    SCOPED_TRACE("n " + std::to_string(n));
    NormCase c{random_i16(rng, n, -3000, 3000), realistic_gain(rng, n, 10), 10, 5};
    check_row(c, seed + static_cast<std::uint32_t>(n));
    ASSERT_FALSE(HasFatalFailure());
  }
}

TEST_F(RmsNormRtl, RealisticGainsForEveryFracBits) {
  const std::uint32_t seed = 2024;
  auto rng = vec_seeded_rng(seed);
  for (int frac = 0; frac <= 13; ++frac) {
    for (int row = 0; row < 3; ++row) {
      const auto n = vec_uniform<std::size_t>(rng, 1, 200);
      const std::int64_t amp = std::int64_t{1} << vec_uniform<int>(rng, 2, 15);
      NormCase c{random_i16(rng, n, -amp, amp - 1), realistic_gain(rng, n, frac), frac,
                 vec_uniform<std::uint64_t>(rng, 0, 1 << 20)};
      SCOPED_TRACE("frac " + std::to_string(frac) + ", row " + std::to_string(row));
      check_row(c, seed + static_cast<std::uint32_t>(16 * frac + row));
      ASSERT_FALSE(HasFatalFailure());
    }
  }
}

TEST_F(RmsNormRtl, LargeEpsUpTo2To39) {
  const std::uint32_t seed = 39;
  auto rng = vec_seeded_rng(seed);
  for (const std::uint64_t eps : {std::uint64_t{1} << 30, std::uint64_t{1} << 36,
                                  (std::uint64_t{1} << 39) - 1, std::uint64_t{1} << 39}) {
    SCOPED_TRACE("eps " + std::to_string(eps));
    NormCase c{random_i16(rng, 64, -32768, 32767), realistic_gain(rng, 64, 13), 13, eps};
    check_row(c, seed);
    ASSERT_FALSE(HasFatalFailure());
  }
}

TEST_F(RmsNormRtl, ContextLengthAndLongerRows) {
  const std::uint32_t seed = 288;
  auto rng = vec_seeded_rng(seed);
  for (const std::size_t n : {288u, 512u, 513u, 1000u, 4097u}) {
    SCOPED_TRACE("n " + std::to_string(n));
    NormCase c{random_i16(rng, n, -32768, 32767), realistic_gain(rng, n, 12), 12, 12345};
    check_row(c, seed + static_cast<std::uint32_t>(n));
    ASSERT_FALSE(HasFatalFailure());
  }
  std::printf("[  CYCLES  ] Lanes %zu, n 4097: %s\n", kLanes, last_stats_.summary().c_str());
  // The longest row a 16-bit len_i allows, all at full scale: ss ~ 2^46, so k = 7 and
  // gain_frac_bits <= 11 keeps shift = 59 - k + frac <= 63 (rsqrt_requant's precondition).
  // Three such rows do not fit the 2^16-word scratchpad, so this one is normalised in place.
  NormCase c{std::vector<std::int16_t>(65535, -32768), realistic_gain(rng, 65535, 11), 11, 0};
  check_row(c, seed, 0, 32768, 0);
}

TEST_F(RmsNormRtl, InPlaceRow) {
  // dst == src: pass 1 overwrites word j only after reading it.
  const std::uint32_t seed = 8;
  auto rng = vec_seeded_rng(seed);
  NormCase c{random_i16(rng, 45, -20000, 20000), realistic_gain(rng, 45, 11), 11, 77};
  check_row(c, seed, 300, 600, 300);
}

}  // namespace
