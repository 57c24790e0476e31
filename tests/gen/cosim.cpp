// SPDX-License-Identifier: Apache-2.0
// One generated program on CpuDevice and on the device under test, every observable compared.
#include "cosim.hpp"

#include <exception>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "passim/device/instr_check.hpp"

namespace passim::gen {

namespace f = hw::fields;

namespace {

/// A run's stats, or the DeviceError it raised, or another exception's message.
struct Outcome {
  std::optional<RunStats> stats;
  std::optional<DeviceError> error;
  std::string other;  ///< an exception that is not a DeviceError
};

Outcome run_one(Device& d, const GenCase& c) {
  Outcome o;
  try {
    if (!c.image.empty()) {
      d.write_dram(c.write_addr, {reinterpret_cast<const std::uint8_t*>(c.image.data()),
                                  c.image.size() * sizeof(hw::Instr)});
    }
    o.stats = d.run(c.prog_addr, c.len);
  } catch (const DeviceError& e) {
    o.error = e;
  } catch (const std::exception& e) {
    o.other = std::string(d.name()) + " threw: " + e.what();
  }
  return o;
}

std::string describe(const Outcome& o) {
  if (o.error) {
    return fmt::format("{} at instruction {} ({})", error_code_name(o.error->code()),
                       o.error->index(), o.error->what());
  }
  return o.stats ? "a clean run" : o.other;
}

std::string compare_dram(const Device& ref, const Device& dut, std::uint64_t bytes) {
  std::vector<std::uint8_t> a(bytes), b(bytes);
  ref.read_dram(0, a);
  dut.read_dram(0, b);
  if (a == b) {
    return "";
  }
  std::size_t first = 0, n = 0;
  while (a[first] == b[first]) {
    ++first;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    n += a[i] != b[i] ? 1 : 0;
  }
  return fmt::format("DRAM differs in {} bytes; first at {:#x}: CpuDevice {:#04x}, device {:#04x}",
                     n, first, a[first], b[first]);
}

/// The errors of an invalid case: equal on both devices, and the one the generator broke.
std::string compare_errors(const GenCase& c, const Outcome& r, const Outcome& d) {
  if (!r.error || !d.error) {
    return fmt::format("{}: expected {} at instruction {}; CpuDevice: {}; device: {}",
                       c.corruption, error_code_name(c.expected), c.expected_index, describe(r),
                       describe(d));
  }
  if (r.error->code() != d.error->code() || r.error->index() != d.error->index() ||
      r.error->code() != c.expected || r.error->index() != c.expected_index) {
    return fmt::format("{}: expected {} at instruction {}; CpuDevice: {}; device: {}",
                       c.corruption, error_code_name(c.expected), c.expected_index, describe(r),
                       describe(d));
  }
  return "";
}

}  // namespace

std::string check_counters(const std::vector<hw::Instr>& prog, const RunStats& ref,
                           const RunStats& dut, const hw::HwConfig& cfg) {
  const auto at = [](const RunStats& s, hw::Counter k) { return s.counters.at(std::size_t(k)); };
  std::vector<hw::Counter> modelled = {hw::Counter::kInstret, hw::Counter::kSaturated};
  for (auto k = std::size_t(hw::Counter::kPassesMatmul);
       k <= std::size_t(hw::Counter::kPassesControl); ++k) {
    modelled.push_back(static_cast<hw::Counter>(k));
  }
  for (const hw::Counter k : modelled) {
    if (at(ref, k) != at(dut, k)) {
      std::string per_record;  // where the device counted: "index:count" of each record
      for (const InstrRecord& r : dut.records) {
        per_record += fmt::format(" {}:{}", r.index,
                                  k == hw::Counter::kSaturated ? r.saturated : r.passes);
      }
      return fmt::format("counter {}: CpuDevice {}, device {} (device records:{})",
                         std::size_t(k), at(ref, k), at(dut, k), per_record);
    }
  }
  if (!dut.has_cycles) {
    return "";
  }
  // One record per unit instruction, from its unit, with the ISA's passes.
  std::vector<int> seen(prog.size(), 0);
  std::vector<std::uint64_t> passes(7, 0);
  std::uint64_t saturated = 0;
  for (const InstrRecord& r : dut.records) {
    if (r.index >= prog.size()) {
      return fmt::format("a record of instruction {}, beyond the program", r.index);
    }
    const hw::Instr& in = prog[r.index];
    const auto op = static_cast<hw::Opcode>(hw::get_field(in, f::kOpcode));
    if (unsigned(hw::unit_of(op)) != r.unit + 1u || r.cycles == 0 || r.stall_cycles > r.cycles ||
        r.passes != instr_passes(in, cfg)) {
      return fmt::format("record of instruction {} ({}): unit {}, cycles {}, stalls {}, passes {} "
                         "(expected {})", r.index, hw::opcode_name(op), r.unit, r.cycles,
                         r.stall_cycles, r.passes, instr_passes(in, cfg));
    }
    ++seen[r.index];
    passes.at(hw::get_field(in, f::kOpClass)) += r.passes;
    saturated += r.saturated;
  }
  for (std::size_t i = 0; i < prog.size(); ++i) {
    const auto op = static_cast<hw::Opcode>(hw::get_field(prog[i], f::kOpcode));
    const int want = hw::unit_of(op) != hw::Unit::kControl ? 1 : 0;
    if (seen[i] != want) {
      return fmt::format("instruction {} ({}) has {} records, expected {}", i,
                         hw::opcode_name(op), seen[i], want);
    }
  }
  for (std::size_t c = 0; c < passes.size(); ++c) {
    const auto k = static_cast<hw::Counter>(std::size_t(hw::Counter::kPassesMatmul) + c);
    if (passes[c] != at(dut, k)) {
      return fmt::format("record passes of class {}: {}, counter {}", c, passes[c], at(dut, k));
    }
  }
  if (saturated != at(dut, hw::Counter::kSaturated)) {
    return fmt::format("record saturated {}, counter {}", saturated,
                       at(dut, hw::Counter::kSaturated));
  }
  return "";
}

std::string listing(const std::vector<hw::Instr>& prog) {
  std::string s;
  for (std::size_t i = 0; i < prog.size(); ++i) {
    const hw::Instr& in = prog[i];
    const auto op = static_cast<hw::Opcode>(hw::get_field(in, f::kOpcode));
    s += fmt::format("  {:4} {:<10} class {} {:08x} {:08x} {:08x} {:08x}\n", i,
                     hw::opcode_name(op), hw::get_field(in, f::kOpClass), in[0], in[1], in[2],
                     in[3]);
  }
  return s;
}

CaseResult run_case(Device& ref, Device& dut, const GenCase& c, std::uint64_t compare_bytes) {
  CaseResult res;
  const Outcome r = run_one(ref, c);
  const Outcome d = run_one(dut, c);
  if (!r.other.empty() || !d.other.empty()) {
    res.mismatch = !r.other.empty() ? r.other : d.other;
    return res;
  }
  if (c.invalid) {
    res.mismatch = compare_errors(c, r, d);
    res.errored = res.mismatch.empty();
    return res;
  }
  if (!r.stats || !d.stats) {
    res.mismatch = fmt::format("valid program: CpuDevice: {}; device: {}", describe(r),
                               describe(d));
    return res;
  }
  res.mismatch = compare_dram(ref, dut, compare_bytes);
  if (res.mismatch.empty()) {
    res.mismatch = check_counters(c.image, *r.stats, *d.stats, dut.hw());
  }
  res.retired = d.stats->counters.at(std::size_t(hw::Counter::kInstret));
  return res;
}

}  // namespace passim::gen
