// SPDX-License-Identifier: Apache-2.0
/// \file Drives a Verilated single-pass vector unit (psm_silu, psm_rope, psm_eltwise, psm_attn):
/// start/busy/done/pass_o, the vector scratchpad port and, when the unit has one, the
/// parameter-memory port (prm_req_o / prm_addr_o / prm_rdata_i, data one cycle after the
/// request). Records every request so tests can check that each word is read once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "vec_scratchpad.hpp"

namespace passim::sim {

/// The parameter memory: 64-bit entries (docs/isa.md). A read request sampled at a clock edge
/// returns its entry on prm_rdata_i during the NEXT cycle; in other cycles the model drives
/// random garbage, so a unit that samples prm_rdata_i in the wrong cycle fails.
class EltParamMemory {
 public:
  EltParamMemory(std::vector<std::uint64_t> entries, std::uint32_t seed)
      : entries_(std::move(entries)), rng_(seed) {}

  [[nodiscard]] const std::vector<std::uint64_t>& entries() const { return entries_; }

  /// One clock edge; returns what the memory drives in the next cycle.
  std::uint64_t clock(bool req, std::uint32_t addr) {
    if (!req) {
      return (std::uint64_t{rng_()} << 32) | rng_();
    }
    if (addr >= entries_.size()) {
      throw std::out_of_range("parameter entry " + std::to_string(addr) +
                              " >= " + std::to_string(entries_.size()));
    }
    return entries_[addr];
  }

 private:
  std::vector<std::uint64_t> entries_;
  std::mt19937 rng_;
};

/// What one command did on the ports.
struct EltRunStats {
  std::map<std::uint32_t, int> reads;                  ///< scratchpad word -> read requests
  std::map<std::uint32_t, int> writes;                 ///< scratchpad word -> write requests
  std::map<std::uint32_t, std::uint32_t> write_masks;  ///< word -> mask of its last write
  std::map<std::uint32_t, int> param_reads;            ///< parameter entry -> read requests
  std::uint64_t busy_cycles = 0;                       ///< cycles with busy_o high
  std::uint64_t latency = 0;  ///< cycles from the start_i cycle to the done_o cycle
  int done_pulses = 0;
  int idle_requests = 0;   ///< scratchpad or parameter requests while busy_o is low
  int nonzero_passes = 0;  ///< busy cycles with pass_o != 0 (single-pass units: 0)
  bool finished = false;

  [[nodiscard]] std::string summary() const {
    std::ostringstream s;
    s << "latency " << latency << ", busy cycles " << busy_cycles << ", done pulses " << done_pulses
      << ", idle requests " << idle_requests;
    return s.str();
  }
};

/// Total requests in a word -> count map.
inline std::size_t elt_count(const std::map<std::uint32_t, int>& m) {
  std::size_t n = 0;
  for (const auto& [addr, count] : m) {
    n += static_cast<std::size_t>(count);
  }
  return n;
}

/// A cycle-accurate driver for a Verilated unit `M`. Each `tick()` is one clock cycle:
/// settle with clk low, sample the unit's requests, raise the clock, let the memories react
/// and drive their read data for the next cycle.
template <typename M>
class EltHarness {
 public:
  static constexpr bool kHasParamPort = requires(M & m) { m.prm_req_o; };

  EltHarness(M& top, VecScratchpad& mem, EltParamMemory* prm) : top_(top), mem_(mem), prm_(prm) {
    if (kHasParamPort && prm_ == nullptr) {
      throw std::invalid_argument("the unit has a parameter port: pass a parameter memory");
    }
  }

  void reset() {
    top_.rst_i = 1;
    top_.start_i = 0;
    for (int i = 0; i < 4; ++i) {
      tick(nullptr);
    }
    top_.rst_i = 0;
    tick(nullptr);
  }

  void tick(EltRunStats* stats) {
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
    bool prm_req = false;
    std::uint32_t prm_addr = 0;
    if constexpr (kHasParamPort) {
      prm_req = top_.prm_req_o != 0;
      prm_addr = top_.prm_addr_o;
    }
    if (stats != nullptr) {
      record(*stats, r, prm_req, prm_addr);
    }
    top_.clk_i = 1;
    top_.eval();
    const std::vector<std::uint32_t> rdata = mem_.clock(r);
    for (std::size_t l = 0; l < mem_.lanes(); ++l) {
      vec_set_lane(top_.mem_rdata_i, l, rdata[l]);
    }
    if constexpr (kHasParamPort) {
      top_.prm_rdata_i = prm_->clock(prm_req, prm_addr);
    }
  }

  /// Pulses start_i for one cycle (the command ports must already be set), then runs until
  /// done_o, at most `max_cycles` cycles, plus a few idle cycles to catch stray requests or
  /// a second done pulse. With `restart_at` > 0, start_i is pulsed again in that cycle (the
  /// unit is busy then and must ignore it).
  EltRunStats run(std::uint64_t max_cycles, std::uint64_t restart_at = 0) {
    EltRunStats stats;
    top_.start_i = 1;
    tick(&stats);
    top_.start_i = 0;
    for (std::uint64_t c = 1; c <= max_cycles; ++c) {
      top_.start_i = (c == restart_at) ? 1 : 0;
      const bool done = sample_done();
      tick(&stats);
      top_.start_i = 0;
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

  void record(EltRunStats& s, const VecRequest& r, bool prm_req, std::uint32_t prm_addr) {
    if (top_.done_o != 0) {
      ++s.done_pulses;
    }
    if (top_.busy_o == 0) {
      s.idle_requests += (r.req ? 1 : 0) + (prm_req ? 1 : 0);
      return;
    }
    ++s.busy_cycles;
    if (top_.pass_o != 0) {
      ++s.nonzero_passes;
    }
    if (r.req && !r.we) {
      ++s.reads[r.addr];
    }
    if (r.req && r.we) {
      ++s.writes[r.addr];
      s.write_masks[r.addr] = r.wmask;
    }
    if (prm_req) {
      ++s.param_reads[prm_addr];
    }
  }

  M& top_;
  VecScratchpad& mem_;
  EltParamMemory* prm_;
};

}  // namespace passim::sim
