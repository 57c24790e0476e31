// SPDX-License-Identifier: Apache-2.0
// LoopDevice: the Verilated accelerator in a plain C++ cycle loop with a fixed-latency DRAM.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/sim/host.hpp"
#include "passim/sim/sim_device.hpp"

namespace passim::sim {

namespace {

/// DRAM with a fixed latency: the response to a beat of cycle c is presented in cycle
/// c + latency (at least one beat per cycle).
class FixedLatencyDram final : public MemPort {
 public:
  FixedLatencyDram(std::uint64_t bytes, std::uint64_t latency)
      : MemPort(16), mem_(bytes, 0), latency_(latency) {}

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

  std::vector<std::uint8_t> mem_;

 private:
  std::uint64_t latency_;
};

}  // namespace

struct LoopDevice::Impl {
  Impl(std::unique_ptr<AccelModel> m, const SimOptions& o)
      : model(std::move(m)),
        opts(o),
        dram(o.dram_bytes,
             static_cast<std::uint64_t>(std::llround(o.dram_latency_ns * o.clock_mhz / 1000.0))) {
    if (!model) {
      throw std::invalid_argument("LoopDevice: no accelerator model");
    }
    if (!o.trace_path.empty()) {
      model->open_trace(o.trace_path);
    }
    model->reset(4, dram);
  }
  std::unique_ptr<AccelModel> model;
  SimOptions opts;
  FixedLatencyDram dram;
};

LoopDevice::LoopDevice(std::unique_ptr<AccelModel> model, const SimOptions& opts)
    : impl_(std::make_unique<Impl>(std::move(model), opts)) {}

LoopDevice::~LoopDevice() = default;

const hw::HwConfig& LoopDevice::hw() const noexcept { return impl_->model->config(); }

std::uint64_t LoopDevice::dram_bytes() const noexcept { return impl_->dram.mem_.size(); }

void LoopDevice::write_dram(std::uint64_t addr, std::span<const std::uint8_t> bytes) {
  auto& mem = impl_->dram.mem_;
  if (addr > mem.size() || bytes.size() > mem.size() - addr) {
    throw std::out_of_range(fmt::format("DRAM write of {} bytes at {:#x} outside {} bytes",
                                        bytes.size(), addr, mem.size()));
  }
  std::copy(bytes.begin(), bytes.end(), mem.begin() + static_cast<std::ptrdiff_t>(addr));
}

void LoopDevice::read_dram(std::uint64_t addr, std::span<std::uint8_t> bytes) const {
  const auto& mem = impl_->dram.mem_;
  if (addr > mem.size() || bytes.size() > mem.size() - addr) {
    throw std::out_of_range(fmt::format("DRAM read of {} bytes at {:#x} outside {} bytes",
                                        bytes.size(), addr, mem.size()));
  }
  std::copy_n(mem.begin() + static_cast<std::ptrdiff_t>(addr), bytes.size(), bytes.begin());
}

RunStats LoopDevice::run(std::uint64_t prog_addr, std::uint32_t len) {
  AccelModel& m = *impl_->model;
  MemPort& port = impl_->dram;
  const auto describe = [this, prog_addr](std::uint32_t index) {
    hw::Instr in{};
    const std::uint64_t at = prog_addr + std::uint64_t{index} * 16;
    if (at + 16 <= impl_->dram.mem_.size()) {
      std::memcpy(in.data(), impl_->dram.mem_.data() + at, 16);
    }
    return describe_instruction(in, index, impl_->opts.head_layer);
  };
  return run_in_loop(m, port,
                     {.prog_addr = prog_addr, .len = len, .watchdog = impl_->opts.rtl_watchdog,
                      .max_cycles = impl_->opts.max_cycles, .describe = describe});
}

std::uint64_t LoopDevice::cycles() const noexcept { return impl_->model->cycle(); }

void LoopDevice::close_trace() { impl_->model->close_trace(); }

}  // namespace passim::sim
