// SPDX-License-Identifier: Apache-2.0
// What every Device does the same way: write a program, run it, tell the observers.
#include "passim/device/device.hpp"

namespace passim {

RunStats Device::run_program(std::uint64_t prog_addr, std::span<const hw::Instr> program) {
  write_dram(prog_addr, {reinterpret_cast<const std::uint8_t*>(program.data()),
                         program.size() * sizeof(hw::Instr)});
  RunStats stats = run(prog_addr, std::uint32_t(program.size()));
  stats.phase = phase_;
  for (RunObserver* o : observers_) {
    o->on_run(program, stats);
  }
  return stats;
}

}  // namespace passim
