// SPDX-License-Identifier: Apache-2.0
// RtlDevice: what SimDevice and LoopDevice share (the model, the options, the DRAM bytes).
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/sim/host.hpp"
#include "passim/sim/sim_device.hpp"

namespace passim::sim {

namespace {

/// Throws std::out_of_range unless [addr, addr + n) lies inside `size` bytes.
void check_range(const char* what, std::uint64_t addr, std::size_t n, std::size_t size) {
  if (addr > size || n > size - addr) {
    throw std::out_of_range(
        fmt::format("DRAM {} of {} bytes at {:#x} outside {} bytes", what, n, addr, size));
  }
}

/// Throws std::invalid_argument naming the field when `value` is NaN or outside [lo, hi].
void check_option(const char* field, double value, double lo, double hi, const char* unit) {
  if (!(value >= lo && value <= hi)) {  // NaN fails both comparisons
    throw std::invalid_argument(
        fmt::format("SimOptions.{}: expected {:g} to {:g} {}, found {}", field, lo, hi, unit,
                    value));
  }
}

/// `opts` once every field that sets a time or a size is inside its range; a zero bandwidth
/// or a NaN latency would stop SystemC's time from advancing.
const SimOptions& checked(const SimOptions& opts) {
  check_option("dram_bytes", static_cast<double>(opts.dram_bytes), 1, 1ull << 40, "bytes");
  check_option("clock_mhz", opts.clock_mhz, 1e-3, 1e4, "MHz");
  check_option("dram_latency_ns", opts.dram_latency_ns, 0, 1e12, "ns");
  check_option("dram_bytes_per_ns", opts.dram_bytes_per_ns, 1e-3, 1e6, "bytes per ns");
  check_option("quantum_ns", opts.quantum_ns, 1e-3, 1e12, "ns");
  return opts;
}

}  // namespace

RtlDevice::RtlDevice(std::unique_ptr<AccelModel> model, const SimOptions& opts)
    : model_(std::move(model)), opts_(checked(opts)), dram_(opts.dram_bytes, 0) {
  if (!model_) {
    throw std::invalid_argument("SimDevice/LoopDevice: no accelerator model");
  }
}

RtlDevice::~RtlDevice() = default;

const hw::HwConfig& RtlDevice::hw() const noexcept { return model_->config(); }

std::uint64_t RtlDevice::dram_bytes() const noexcept { return dram_.size(); }

void RtlDevice::write_dram(std::uint64_t addr, std::span<const std::uint8_t> bytes) {
  check_range("write", addr, bytes.size(), dram_.size());
  std::copy(bytes.begin(), bytes.end(), dram_.begin() + static_cast<std::ptrdiff_t>(addr));
}

void RtlDevice::read_dram(std::uint64_t addr, std::span<std::uint8_t> bytes) const {
  check_range("read", addr, bytes.size(), dram_.size());
  std::copy_n(dram_.begin() + static_cast<std::ptrdiff_t>(addr), bytes.size(), bytes.begin());
}

std::uint64_t RtlDevice::cycles() const noexcept { return model_->cycle(); }

void RtlDevice::close_trace() { model_->close_trace(); }

std::string RtlDevice::describe(std::uint64_t prog_addr, std::uint32_t index) const {
  hw::Instr in{};
  const std::uint64_t at = prog_addr + std::uint64_t{index} * 16;
  if (at + 16 <= dram_.size()) {
    std::memcpy(in.data(), dram_.data() + at, 16);
  }
  return describe_instruction(in, index, opts_.head_layer);
}

}  // namespace passim::sim
