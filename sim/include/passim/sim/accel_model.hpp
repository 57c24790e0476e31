// SPDX-License-Identifier: Apache-2.0
/// \file The Verilated accelerator (rtl/top/psm_accel.sv) as the simulation harness drives
/// it: a clock, the host registers and the memory port. One `AccelModel` per named
/// configuration is built from the same RTL (libraries `passim_accel_tiny`, `_small`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <limits>
#include <string>
#include <vector>

#include "passim/device/device.hpp"
#include "passim/hw/spec.hpp"

namespace passim::sim {

/// One 8-byte beat on the memory port (psm_accel `mem_req_*`).
struct MemBeatRequest {
  bool write = false;
  std::uint32_t addr = 0;   ///< byte address, 8-byte aligned
  std::uint64_t wdata = 0;  ///< little-endian: byte i in bits [8i+7:8i]
  std::uint8_t wstrb = 0;   ///< byte enables of a write
};

/// The response to a beat: read data, or a write acknowledgement (`mem_rsp_*`).
struct MemBeatResponse {
  std::uint64_t rdata = 0;
  bool error = false;  ///< the address is outside the memory (STATUS.error = bus)
};

/// The memory side of the accelerator's memory port. Requests are accepted while fewer than
/// `max_outstanding` responses are owed; responses come back in order, at most one per
/// cycle, each in the cycle the memory model scheduled it. The cycle loop only reads two
/// inline values per cycle and calls `request()` when a beat is accepted.
class MemPort {
 public:
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};

  explicit MemPort(std::size_t max_outstanding = 16) : max_outstanding_(max_outstanding) {}
  virtual ~MemPort() = default;
  MemPort(const MemPort&) = delete;
  MemPort& operator=(const MemPort&) = delete;

  /// A beat accepted at the clock edge that ends cycle `cycle`. The implementation performs
  /// the access and calls `schedule()` with the cycle its response is due.
  virtual void request(const MemBeatRequest& req, std::uint64_t cycle) = 0;

  /// Whether a request would be accepted in this cycle (`mem_req_ready_i`, which the model
  /// presents a cycle ahead to psm_accel's port register).
  [[nodiscard]] bool ready() const noexcept { return pending_.size() < max_outstanding_; }
  /// The cycle in which the design receives the oldest owed response (the model presents it on
  /// `mem_rsp_*` in the cycle before, to psm_accel's port register), or kNever.
  [[nodiscard]] std::uint64_t next_response_cycle() const noexcept {
    return pending_.empty() ? kNever : pending_.front().cycle;
  }
  /// Takes the oldest owed response (called in its cycle).
  MemBeatResponse pop_response() {
    const MemBeatResponse r = pending_.front().rsp;
    pending_.pop_front();
    return r;
  }
  /// Forgets every owed response (after CTRL.soft_reset).
  void drop_responses() noexcept { pending_.clear(); }
  [[nodiscard]] std::size_t outstanding() const noexcept { return pending_.size(); }

 protected:
  /// Owes `rsp` for a request of cycle `req_cycle`, presented at the earliest in `due`:
  /// never before the next cycle and never before (or with) an older response.
  void schedule(std::uint64_t req_cycle, std::uint64_t due, const MemBeatResponse& rsp) {
    std::uint64_t at = due > req_cycle ? due : req_cycle + 1;
    if (!pending_.empty() && at <= pending_.back().cycle) {
      at = pending_.back().cycle + 1;
    }
    pending_.push_back({at, rsp});
  }

 private:
  struct Pending {
    std::uint64_t cycle;
    MemBeatResponse rsp;
  };
  std::deque<Pending> pending_;
  std::size_t max_outstanding_;
};

/// Which cycles a waveform holds: first <= c < end, counted since the model was constructed
/// (the waveform's time axis divided by the clock period). Every signal is dumped: Verilator
/// 5.006's FST writer crashes when dumpvars() limits the signals to a scope (its enable bits
/// are read past the end of their vector), so the writer cannot be limited to one unit.
struct TraceWindow {
  std::uint64_t first = 0;
  std::uint64_t end = std::numeric_limits<std::uint64_t>::max();
};

/// The Verilated psm_accel of one configuration, stepped one clock cycle at a time.
/// Every call below advances the clock; none of them knows about SystemC.
class AccelModel {
 public:
  virtual ~AccelModel() = default;

  /// The configuration the RTL was built with.
  [[nodiscard]] virtual const hw::HwConfig& config() const noexcept = 0;
  /// Clock cycles since construction.
  [[nodiscard]] virtual std::uint64_t cycle() const noexcept = 0;

  /// Holds rst_i for `cycles` cycles, then releases it (one more cycle).
  virtual void reset(unsigned cycles, MemPort& port) = 0;
  /// One host register write (two cycles: psm_accel registers the access at its port; the
  /// write has taken effect on return).
  virtual void write_reg(std::uint32_t offset, std::uint32_t value, MemPort& port) = 0;
  /// One host register read (two cycles, as a write; a _LO read latches its _HI half).
  virtual std::uint32_t read_reg(std::uint32_t offset, MemPort& port) = 0;
  /// Runs up to `max_cycles` cycles; stops after the cycle in which STATUS.busy falls.
  /// Returns the cycles run.
  virtual std::uint64_t run(std::uint64_t max_cycles, MemPort& port) = 0;

  /// STATUS.busy, the busy units (bit 0 DMA, 1 matmul, 2 vector) and the instruction index.
  [[nodiscard]] virtual bool run_busy() const noexcept = 0;
  [[nodiscard]] virtual unsigned unit_busy() const noexcept = 0;
  [[nodiscard]] virtual std::uint32_t pc() const noexcept = 0;
  /// Index of the instruction unit `u` (0 DMA, 1 matmul, 2 vector) runs or ran last.
  [[nodiscard]] virtual std::uint32_t unit_pc(unsigned u) const noexcept = 0;

  /// The records of psm_accel's trace port (one per unit instruction, in the cycle it ended)
  /// collected since the last call, in the order they ended; the collection restarts empty.
  [[nodiscard]] virtual std::vector<InstrRecord> take_records() = 0;

  /// Starts FST tracing into `path` of the cycles in `window` (throws if the model was built
  /// without tracing support, the file cannot be opened, or the window is empty). The
  /// waveform's time is in picoseconds and one cycle lasts the period of `clock_mhz` (10 ns at
  /// 100 MHz), as in the SystemC model: cycle c's values are dumped at c * period (clock low)
  /// and c * period + period / 2 (after the rising edge). Closed by close_trace(), or
  /// unchecked by the destructor.
  virtual void open_trace(const std::string& path, double clock_mhz,
                          const TraceWindow& window) = 0;
  /// Ends the waveform (no-op without one): closes the file and reads it back. Throws
  /// std::runtime_error naming the file when it is incomplete (its file system filled up: the
  /// FST writer itself reports no write error).
  virtual void close_trace() = 0;
};

/// The tiny, small and base configurations (each links its own Verilated libraries).
/// `trace` selects the model Verilated with FST tracing support, which open_trace() needs; the
/// model without it is a few per cent faster (sim/CMakeLists.txt).
[[nodiscard]] std::unique_ptr<AccelModel> make_accel_model_tiny(bool trace = false);
[[nodiscard]] std::unique_ptr<AccelModel> make_accel_model_small(bool trace = false);
[[nodiscard]] std::unique_ptr<AccelModel> make_accel_model_base(bool trace = false);

}  // namespace passim::sim
