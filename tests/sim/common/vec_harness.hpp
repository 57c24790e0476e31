// SPDX-License-Identifier: Apache-2.0
/// \file Drives a Verilated vector unit (start/busy/done/pass_o + scratchpad port,
/// docs/accelerator.md) against a `VecScratchpad`, and records what each pass did.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "vec_scratchpad.hpp"

namespace passim::sim {

/// What one command did, attributed to the value of pass_o in each busy cycle.
struct VecRunStats {
  static constexpr std::size_t kPasses = 4;                  // pass_o is 2 bits
  std::array<std::uint64_t, kPasses> pass_cycles{};          // busy cycles
  std::array<std::map<std::uint32_t, int>, kPasses> reads;   // word -> count
  std::array<std::map<std::uint32_t, int>, kPasses> writes;  // word -> count
  std::map<std::uint32_t, std::uint32_t> write_masks;        // word -> last mask
  std::uint64_t latency = 0;  // cycles from the start_i cycle to the done_o cycle
  int done_pulses = 0;
  int idle_requests = 0;  // requests while busy_o is low (must be 0)
  bool finished = false;

  [[nodiscard]] std::uint64_t busy_cycles() const {
    std::uint64_t n = 0;
    for (const auto c : pass_cycles) {
      n += c;
    }
    return n;
  }
  [[nodiscard]] std::string summary() const {
    std::ostringstream s;
    s << "latency " << latency << ", busy cycles per pass";
    for (const auto c : pass_cycles) {
      s << ' ' << c;
    }
    return s.str();
  }
};

/// Number of scratchpad words a row of n elements spans.
inline std::uint32_t vec_words(std::size_t n, std::size_t lanes) {
  return static_cast<std::uint32_t>((n + lanes - 1) / lanes);
}

/// The per-lane write mask of word w of an n-element row.
inline std::uint32_t vec_word_mask(std::size_t n, std::size_t lanes, std::size_t w) {
  std::uint32_t mask = 0;
  for (std::size_t l = 0; l < lanes; ++l) {
    if (w * lanes + l < n) {
      mask |= 1u << l;
    }
  }
  return mask;
}

/// A cycle-accurate driver for a Verilated unit `M` with the vector-unit ports.
/// Each `tick()` is one clock cycle: settle with clk low, sample the unit's request, raise
/// the clock, let the scratchpad react, and drive the read data for the next cycle.
template <typename M>
class VecHarness {
 public:
  VecHarness(M& top, VecScratchpad& mem) : top_(top), mem_(mem) {}

  void reset() {
    top_.rst_i = 1;
    top_.start_i = 0;
    for (int i = 0; i < 4; ++i) {
      tick(nullptr);
    }
    top_.rst_i = 0;
    tick(nullptr);
  }

  void tick(VecRunStats* stats) {
    top_.clk_i = 0;
    top_.eval();
    VecRequest r;
    r.req = top_.mem_req_o != 0;
    r.we = top_.mem_we_o != 0;
    r.addr = top_.mem_addr_o;
    r.wmask = top_.mem_wmask_o;
    r.wdata.resize(mem_.lanes());
    for (std::size_t l = 0; l < mem_.lanes(); ++l) {
      r.wdata[l] = vec_get_lane(top_.mem_wdata_o, l);
    }
    if (stats != nullptr) {
      record(*stats, r);
    }
    top_.clk_i = 1;
    top_.eval();
    const std::vector<std::uint32_t> rdata = mem_.clock(r);
    for (std::size_t l = 0; l < mem_.lanes(); ++l) {
      vec_set_lane(top_.mem_rdata_i, l, rdata[l]);
    }
  }

  /// Pulses start_i for one cycle (the command ports must already be set), then runs until
  /// done_o, at most `max_cycles` cycles, plus a few idle cycles to catch stray requests or
  /// a second done pulse.
  VecRunStats run(std::uint64_t max_cycles) {
    VecRunStats stats;
    top_.start_i = 1;
    tick(&stats);
    top_.start_i = 0;
    for (std::uint64_t c = 1; c <= max_cycles; ++c) {
      const bool done = sample_done();
      tick(&stats);
      if (done) {
        stats.latency = c;
        stats.finished = true;
        break;
      }
    }
    for (int i = 0; i < 4; ++i) {
      tick(&stats);
    }
    return stats;
  }

 private:
  bool sample_done() {
    top_.clk_i = 0;
    top_.eval();
    return top_.done_o != 0;
  }

  void record(VecRunStats& s, const VecRequest& r) {
    if (top_.done_o != 0) {
      ++s.done_pulses;
    }
    if (top_.busy_o == 0) {
      s.idle_requests += r.req ? 1 : 0;
      return;
    }
    const std::size_t pass = top_.pass_o & 3u;
    ++s.pass_cycles[pass];
    if (r.req && !r.we) {
      ++s.reads[pass][r.addr];
    }
    if (r.req && r.we) {
      ++s.writes[pass][r.addr];
      s.write_masks[r.addr] = r.wmask;
    }
  }

  M& top_;
  VecScratchpad& mem_;
};

/// Checks that pass `pass` read each word of the row at `base` (n elements) exactly once.
/// `row` names the row in the failure message.
inline void expect_reads_whole_row(const VecRunStats& s, std::size_t pass, std::uint32_t base,
                                   std::size_t n, std::size_t lanes, const std::string& row) {
  const std::uint32_t words = vec_words(n, lanes);
  for (std::uint32_t w = 0; w < words; ++w) {
    const auto it = s.reads[pass].find(base + w);
    const int count = it == s.reads[pass].end() ? 0 : it->second;
    EXPECT_EQ(count, 1) << "pass " << pass << " read word " << w << " of the " << row << " row "
                        << count << " times (n " << n << ")";
  }
}

/// Total read requests in one pass.
inline std::size_t count_requests(const std::map<std::uint32_t, int>& m) {
  std::size_t n = 0;
  for (const auto& [addr, count] : m) {
    n += static_cast<std::size_t>(count);
  }
  return n;
}

/// Checks that every word of the row at `base` was written exactly once in `pass` with the
/// tail mask, and that nothing else was written.
inline void expect_writes_whole_row(const VecRunStats& s, std::size_t pass, std::uint32_t base,
                                    std::size_t n, std::size_t lanes) {
  const std::uint32_t words = vec_words(n, lanes);
  EXPECT_EQ(count_requests(s.writes[pass]), words) << "writes in pass " << pass;
  for (std::size_t p = 0; p < VecRunStats::kPasses; ++p) {
    if (p != pass) {
      EXPECT_EQ(count_requests(s.writes[p]), 0u) << "writes in pass " << p;
    }
  }
  for (std::uint32_t w = 0; w < words; ++w) {
    const auto it = s.writes[pass].find(base + w);
    ASSERT_NE(it, s.writes[pass].end()) << "word " << w << " of the output never written";
    EXPECT_EQ(it->second, 1) << "word " << w << " of the output written " << it->second << " times";
    EXPECT_EQ(s.write_masks.at(base + w), vec_word_mask(n, lanes, w))
        << "write mask of word " << w << " (n " << n << ")";
  }
}

/// Prints the seed of a randomised test (and records it in the XML report).
inline std::mt19937 vec_seeded_rng(std::uint32_t seed) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf("[   SEED   ] %s.%s: std::mt19937 seed %u\n", info->test_suite_name(), info->name(),
              seed);
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return std::mt19937(seed);
}

/// A uniform integer in [lo, hi] converted to T (the caller keeps the range inside T).
template <typename T>
T vec_uniform(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
  return static_cast<T>(std::uniform_int_distribution<std::int64_t>(lo, hi)(rng));
}

/// Index of the first difference between two equally long vectors (size() if none).
template <typename A, typename B>
std::size_t vec_first_mismatch(const A& a, const B& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i]) {
      return i;
    }
  }
  return a.size() == b.size() ? a.size() : std::min(a.size(), b.size());
}

}  // namespace passim::sim
