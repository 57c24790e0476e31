// SPDX-License-Identifier: Apache-2.0
// Host-side register protocol of a run (docs/isa.md "Host registers").
#include "passim/sim/host.hpp"

#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "passim/device/instr_check.hpp"
#include "passim/sim/sim_device.hpp"

namespace passim::sim {

namespace reg = hw::reg;

namespace {

std::uint32_t field(std::uint32_t word, hw::Field f) {
  return (word >> f.lsb) & ((f.width >= 32) ? ~0u : ((1u << f.width) - 1u));
}

std::string_view error_name(std::uint32_t code) {
  switch (static_cast<hw::ErrorCode>(code)) {
    case hw::ErrorCode::kNone:
      return "none";
    case hw::ErrorCode::kBadOpcode:
      return "bad_opcode (unknown opcode, or no END)";
    case hw::ErrorCode::kBadOperand:
      return "bad_operand (a size is 0 or too large, a bad field)";
    case hw::ErrorCode::kSpadRange:
      return "spad_range (an operand runs past its memory)";
    case hw::ErrorCode::kProgLen:
      return "prog_len (PROG_LEN is 0 or exceeds the program memory)";
    case hw::ErrorCode::kProgAlign:
      return "prog_align (PROG_ADDR is not 16-byte aligned)";
    case hw::ErrorCode::kBus:
      return "bus (the memory port returned an error)";
    case hw::ErrorCode::kWatchdog:
      return "watchdog (the run took more than WATCHDOG cycles)";
  }
  return "unknown";
}

std::uint64_t read_counter(AccelModel& m, MemPort& port, std::uint32_t sel) {
  m.write_reg(reg::kCntSel, sel, port);
  const std::uint64_t lo = m.read_reg(reg::kCntLo, port);
  const std::uint64_t hi = m.read_reg(reg::kCntHi, port);
  return lo | (hi << 32);
}

}  // namespace

void start_program(AccelModel& m, MemPort& port, std::uint64_t prog_addr, std::uint32_t len,
                   std::uint32_t watchdog) {
  if (prog_addr > 0xFFFF'FFFFu) {
    throw std::runtime_error(
        fmt::format("program address {:#x} beyond the 32-bit DRAM port", prog_addr));
  }
  m.write_reg(reg::kProgAddr, static_cast<std::uint32_t>(prog_addr), port);
  m.write_reg(reg::kProgLen, len, port);
  m.write_reg(reg::kWatchdog, watchdog, port);
  (void)m.take_records();  // records belong to the run they come from
  m.write_reg(reg::kCtrl, (1u << hw::reg::kCtrlStart.lsb) | (1u << hw::reg::kCtrlClearCounters.lsb),
              port);
}

RunStats read_counters(AccelModel& m, MemPort& port) {
  RunStats s;
  s.has_cycles = true;
  s.counters.resize(hw::kNumCounters);
  for (std::uint32_t i = 0; i < hw::kNumCounters; ++i) {
    s.counters[i] = read_counter(m, port, i);
  }
  s.instructions = s.counters[static_cast<std::size_t>(hw::Counter::kInstret)];
  s.records = m.take_records();
  return s;
}

RunStats finish_program(AccelModel& m, MemPort& port,
                        const std::function<std::string(std::uint32_t)>& describe) {
  const std::uint32_t status = m.read_reg(reg::kStatus, port);
  const std::uint32_t err = field(status, hw::reg::kStatusError);
  if (err != 0) {
    const std::uint32_t info = m.read_reg(reg::kErrorInfo, port);
    const auto code = static_cast<hw::ErrorCode>(err);
    const bool at_start = code == hw::ErrorCode::kProgLen || code == hw::ErrorCode::kProgAlign;
    throw DeviceError(code, info,
                      fmt::format("STATUS.error {} = {}{}", err, error_name(err),
                                  at_start || !describe ? std::string() : " " + describe(info)));
  }
  if (field(status, hw::reg::kStatusDone) == 0) {
    throw std::runtime_error("run ended without STATUS.done");
  }
  return read_counters(m, port);
}

[[noreturn]] void abandon_program(AccelModel& m, MemPort& port, std::uint64_t max_cycles,
                                  const std::function<std::string(std::uint32_t)>& describe,
                                  bool interrupted) {
  const std::uint64_t cycle = m.cycle();
  const unsigned busy = m.unit_busy();
  const std::uint32_t pc = m.pc();
  std::string units;
  for (const auto& [bit, name] : {std::pair{0u, "dma"}, {1u, "matmul"}, {2u, "vector"}}) {
    if ((busy >> bit) & 1u) {
      const std::uint32_t at = m.unit_pc(bit);
      units += fmt::format("{}{} running instruction {}{}", units.empty() ? "" : "; ", name, at,
                           describe ? " " + describe(at) : "");
    }
  }
  if (units.empty()) {
    units = "no unit, only the controller (fetching the program or issuing)";
  }
  // Stop everything first: the soft reset ends STATUS.busy, which freezes every cycle counter
  // (it does not clear them). Read while the run went on, the counters read later would hold
  // more cycles than `total` read first (a stall count above the total).
  m.write_reg(reg::kCtrl, 1u << hw::reg::kCtrlSoftReset.lsb, port);
  port.drop_responses();
  RunStats partial = read_counters(m, port);
  if (interrupted) {
    throw SimInterrupted(fmt::format("interrupted at cycle {}; still busy: {}; controller at "
                                     "instruction {}{}", cycle, units, pc,
                                     describe ? " " + describe(pc) : ""),
                         std::move(partial));
  }
  throw SimTimeout(fmt::format("simulation watchdog: the run did not end within {} cycle{}; "
                               "still busy: {}; controller at instruction {}{}",
                               max_cycles, max_cycles == 1 ? "" : "s", units, pc,
                               describe ? " " + describe(pc) : ""),
                   std::move(partial));
}

RunStats run_in_loop(AccelModel& m, MemPort& port, const HostRun& r) {
  const std::uint64_t limit = r.max_cycles != 0 ? r.max_cycles : (std::uint64_t{1} << 40);
  start_program(m, port, r.prog_addr, r.len, r.watchdog);
  const std::uint64_t start = m.cycle();
  while (m.run_busy()) {
    const std::uint64_t used = m.cycle() - start;
    if (used >= limit) {
      abandon_program(m, port, limit, r.describe);
    }
    m.run(limit - used, port);
  }
  return finish_program(m, port, r.describe);
}

std::string describe_instruction(const hw::Instr& in, std::uint32_t index, int head_layer) {
  const auto op = static_cast<hw::Opcode>(hw::get_field(in, hw::fields::kOpcode));
  const auto layer = hw::get_field(in, hw::fields::kLayer);
  if (head_layer >= 0 && layer == static_cast<std::uint32_t>(head_layer)) {
    return fmt::format("({} #{}, head)", hw::opcode_name(op), index);
  }
  return fmt::format("({} #{}, layer {})", hw::opcode_name(op), index, layer);
}

}  // namespace passim::sim
