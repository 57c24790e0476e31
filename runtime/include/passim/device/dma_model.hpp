// SPDX-License-Identifier: Apache-2.0
/// \file The DMA engine (rtl/dma/psm_dma.sv) and the DRAM behind the memory port as the SystemC
/// system model times it (sim/src/dram_target.cpp, sim/src/sim_device.cpp), for the cycle model of
/// `ModelDevice` (docs/cycle-model.md, "The DMA and the DRAM").
#pragma once

#include <cstdint>
#include <deque>
#include <functional>

#include "passim/hw/spec.hpp"

namespace passim {

/// The memory system's timing: the accelerator's clock and the DRAM's latency and bandwidth. These
/// defaults are the simulator's (`passim::sim::SimOptions` takes them from here).
struct DramTiming {
  double clock_mhz = 100.0;   ///< accelerator clock, MHz
  double latency_ns = 50.0;   ///< from the end of a transfer to its response, ns
  double bytes_per_ns = 1.6;  ///< DRAM bandwidth, bytes per ns (transfers are serialised)
};

/// The default DRAM size of the devices, bytes (64 MiB).
inline constexpr std::uint64_t kDefaultDramBytes = std::uint64_t{64} << 20;

/// The DRAM as the memory port sees it: each 8-byte beat occupies the DRAM channel for 8 /
/// bytes_per_ns (after the previous beat's transfer), its response is due `latency` after the
/// transfer ends, in the first clock cycle at or after that time, and responses come back in order,
/// at most one per cycle (sim::MemPort::schedule). Times are integer picoseconds, rounded as
/// SystemC's sc_time rounds them (1 ps resolution).
class DramPort {
 public:
  explicit DramPort(const DramTiming& t);
  /// A beat accepted in cycle `cycle` (run-relative): returns the cycle in which the design sees
  /// its response (mem_rsp_valid after psm_accel's port register), >= cycle + 1.
  std::uint64_t request(std::uint64_t cycle);
  /// A new run: the channel is idle (every earlier response has been received).
  void reset() noexcept;

 private:
  std::uint64_t period_ps_, xfer_ps_, latency_ps_;
  std::uint64_t busy_until_ps_ = 0;
  std::uint64_t last_due_ = 0;
  bool any_ = false;
};

/// Whether a DMA request to a scratchpad is granted in a cycle (its arbiter gives the other units
/// priority: rtl/top/psm_accel.sv).
using SpadGrant = std::function<bool(hw::Mem mem, std::uint64_t cycle)>;

/// One DMA instruction's record: busy cycles and, among them, cycles waiting on the memory port
/// (psm_dma's stall_o).
struct DmaCycles {
  std::uint64_t cycles = 0;
  std::uint64_t stall = 0;
};

/// Times the DMA_LOAD or DMA_STORE `in` started (start_i) in cycle `start` on a `cfg` accelerator,
/// its beats on `port`. Mirrors psm_dma's counters cycle by cycle (the byte buffer, the response
/// FIFO, the outstanding requests, the two beat walks, the packer or the word reader and the
/// requantiser pipeline); data is not moved (CpuDevice does that).
[[nodiscard]] DmaCycles dma_cycles(const hw::Instr& in, const hw::HwConfig& cfg,
                                   std::uint64_t start, DramPort& port, const SpadGrant& grant);

/// The program fetch of a run of `len` instructions (psm_controller.sv, StFetch): 2 * len beats, at
/// most 8 outstanding. Returns the cycle of the last response (the run's cycle 0 is the first
/// StFetch cycle) and adds the cycles without a request or a response to `stall` (the `mem_stall`
/// counter).
[[nodiscard]] std::uint64_t fetch_cycles(std::uint32_t len, DramPort& port, std::uint64_t& stall);

}  // namespace passim
