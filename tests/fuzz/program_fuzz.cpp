// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the program checks of `CpuDevice`, the accelerator's golden twin. The input is a
// program of 128-bit instructions (16 bytes each, a trailing partial one dropped; at most the
// `tiny` program memory, 256 instructions). It runs on a `tiny` device whose DRAM holds fixed
// pseudo-random bytes, and must end in a clean run or the documented error: a
// `passim::DeviceError` with one of the hardware's error codes (docs/isa.md "Errors"). Any
// other exception escapes and is a finding. The scratchpads bound every instruction's work,
// so an input runs in milliseconds.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "passim/device/cpu_device.hpp"
#include "passim/device/instr_check.hpp"
#include "passim/hw/spec.hpp"

namespace {

constexpr std::uint64_t kDramBytes = std::uint64_t{1} << 18;
constexpr std::size_t kInstrBytes = 16;

/// The DRAM contents before the program: the same bytes for every input (an LCG).
const std::vector<std::uint8_t>& dram_image() {
  static const std::vector<std::uint8_t> image = [] {
    std::vector<std::uint8_t> bytes(kDramBytes);
    std::uint32_t state = 12345;
    for (std::uint8_t& b : bytes) {
      state = state * 1664525u + 1013904223u;
      b = static_cast<std::uint8_t>(state >> 24);
    }
    return bytes;
  }();
  return image;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const passim::hw::HwConfig& cfg = passim::hw::kTiny;
  const std::size_t n = size / kInstrBytes;
  if (n == 0 || n > cfg.prog_depth) {
    return 0;
  }
  passim::CpuDevice device(cfg, kDramBytes);
  device.write_dram(0, dram_image());
  // The program goes where the compiler puts it: after everything else, in the last
  // prog_depth instructions of DRAM.
  const std::uint64_t prog_addr = kDramBytes - cfg.prog_depth * kInstrBytes;
  device.write_dram(prog_addr, {data, n * kInstrBytes});
  try {
    (void)device.run(prog_addr, std::uint32_t(n));
  } catch (const passim::DeviceError& e) {
    // The documented rejection of an invalid program: a code the hardware has.
    if (e.code() == passim::hw::ErrorCode::kNone || e.code() == passim::hw::ErrorCode::kWatchdog) {
      __builtin_trap();
    }
  }
  return 0;
}
