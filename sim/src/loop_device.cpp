// SPDX-License-Identifier: Apache-2.0
// LoopDevice: the Verilated accelerator in a plain C++ cycle loop with a fixed-latency DRAM.
#include <cmath>
#include <cstring>

#include "passim/sim/host.hpp"
#include "passim/sim/sim_device.hpp"

namespace passim::sim {

namespace {

/// DRAM with a fixed latency: the response to a beat of cycle c is presented in cycle
/// c + latency (at least one beat per cycle).
class FixedLatencyDram final : public MemPort {
 public:
  /// Serves the bytes of `mem` (owned by the caller, outliving the port).
  FixedLatencyDram(std::vector<std::uint8_t>& mem, std::uint64_t latency)
      : MemPort(16), mem_(mem), latency_(latency) {}

  void request(const MemBeatRequest& r, std::uint64_t cycle) override {
    MemBeatResponse rsp;
    if (std::uint64_t{r.addr} + 8 > mem_.size()) {
      rsp.error = true;
    } else if (r.write) {
      for (unsigned i = 0; i < 8; ++i) {
        if ((r.wstrb >> i) & 1u) {
          mem_[r.addr + i] = static_cast<std::uint8_t>(r.wdata >> (8 * i));
        }
      }
    } else {
      std::memcpy(&rsp.rdata, mem_.data() + r.addr, 8);  // little-endian host
    }
    schedule(cycle, cycle + latency_, rsp);
  }

 private:
  std::vector<std::uint8_t>& mem_;
  std::uint64_t latency_;
};

}  // namespace

struct LoopDevice::Impl {
  Impl(std::vector<std::uint8_t>& mem, const SimOptions& o)
      : dram(mem, latency_cycles(o)) {}
  static std::uint64_t latency_cycles(const SimOptions& o) {
    return static_cast<std::uint64_t>(std::llround(o.dram_latency_ns * o.clock_mhz / 1000.0));
  }
  FixedLatencyDram dram;
};

LoopDevice::LoopDevice(std::unique_ptr<AccelModel> model, const SimOptions& opts)
    : RtlDevice(std::move(model), opts), impl_(std::make_unique<Impl>(dram(), options())) {
  if (!options().trace_path.empty()) {
    this->model().open_trace(options().trace_path, options().clock_mhz,
                             options().trace_window);
  }
  this->model().reset(4, impl_->dram);
}

LoopDevice::~LoopDevice() = default;

RunStats LoopDevice::run(std::uint64_t prog_addr, std::uint32_t len) {
  const auto describe = [this, prog_addr](std::uint32_t index) {
    return RtlDevice::describe(prog_addr, index);
  };
  return run_in_loop(model(), impl_->dram,
                     {.prog_addr = prog_addr, .len = len, .watchdog = options().rtl_watchdog,
                      .max_cycles = options().max_cycles, .describe = describe});
}

}  // namespace passim::sim
