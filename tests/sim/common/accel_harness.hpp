// SPDX-License-Identifier: Apache-2.0
/// \file Whole-accelerator test helpers: a lockstep runner that executes every program (built
/// with passim::ProgramBuilder, as the compiler builds them) on the reference CpuDevice and on
/// the device under test and compares the whole DRAM afterwards, byte for byte, and checks the
/// hardware's per-instruction records against the program and the counters.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "passim/compiler/program.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/device.hpp"
#include "passim/fixed_point.hpp"
#include "passim/hw/spec.hpp"

namespace passim::sim::test {

namespace f = hw::fields;

/// Little-endian bytes of a vector of integers.
template <typename T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<std::uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

/// A run's trace records summed per op class (`hw::OpClass` order).
struct RecordSums {
  std::array<std::uint64_t, 6> cycles{}, stall_cycles{}, passes{};
  std::uint64_t saturated = 0;  ///< of every record
};

/// Checks the trace records of a run of `prog` that ended with END: exactly one record per
/// DMA, matmul and vector instruction (BARRIER, END and NOP have none), from that
/// instruction's unit, so `records.size() == instructions - (BARRIER + END + NOP)`. Units
/// do not overlap in these programs (BARRIERs), so per class the record cycles add up to
/// `cycles_<class>` (control excepted: its cycles have no unit) and the record passes to
/// `passes_<class>`. With `cfg`, each record's passes must also be `instr_passes` of its
/// instruction (the ISA's passes column). Returns the sums.
inline RecordSums check_records(const std::vector<hw::Instr>& prog, const RunStats& s,
                                const std::string& what, const hw::HwConfig* cfg = nullptr) {
  RecordSums sums;
  std::vector<int> seen(prog.size(), 0);
  for (const InstrRecord& r : s.records) {
    if (r.index >= prog.size()) {
      ADD_FAILURE() << what << ": record of instruction " << r.index << " beyond the program";
      continue;
    }
    const auto op = static_cast<hw::Opcode>(hw::get_field(prog[r.index], f::kOpcode));
    EXPECT_EQ(unsigned(hw::unit_of(op)), r.unit + 1u)
        << what << ": instruction " << r.index << " " << hw::opcode_name(op);
    EXPECT_GT(r.cycles, 0u) << what << ": instruction " << r.index;
    EXPECT_LE(r.stall_cycles, r.cycles) << what << ": instruction " << r.index;
    if (cfg != nullptr) {
      EXPECT_EQ(r.passes, instr_passes(prog[r.index], *cfg))
          << what << ": passes of instruction " << r.index << " " << hw::opcode_name(op);
    }
    ++seen[r.index];
    sums.saturated += r.saturated;
    const auto cls = hw::get_field(prog[r.index], f::kOpClass);
    if (cls < sums.cycles.size()) {
      sums.cycles[cls] += r.cycles;
      sums.stall_cycles[cls] += r.stall_cycles;
      sums.passes[cls] += r.passes;
    }
  }
  std::uint64_t control = 0;
  for (std::size_t i = 0; i < prog.size(); ++i) {
    const auto op = static_cast<hw::Opcode>(hw::get_field(prog[i], f::kOpcode));
    const bool has_unit = hw::unit_of(op) != hw::Unit::kControl;
    control += has_unit ? 0 : 1;
    EXPECT_EQ(seen[i], has_unit ? 1 : 0)
        << what << ": records of instruction " << i << " " << hw::opcode_name(op);
  }
  EXPECT_EQ(s.records.size(), s.instructions - control) << what;
  const auto ctl = std::size_t(hw::OpClass::kControl);
  for (std::size_t c = 0; c < sums.cycles.size(); ++c) {
    if (c != ctl) {
      EXPECT_EQ(sums.cycles[c], s.counters.at(std::size_t(hw::Counter::kCyclesMatmul) + c))
          << what << ": record cycles of class " << c;
    }
    EXPECT_EQ(sums.passes[c], s.counters.at(std::size_t(hw::Counter::kPassesMatmul) + c))
        << what << ": record passes of class " << c;
  }
  EXPECT_EQ(sums.saturated, s.counters.at(std::size_t(hw::Counter::kSaturated)))
      << what << ": record saturated results";
  return sums;
}

/// The counters CpuDevice models (instret, passes_<class>, saturated) are equal on `ref` and
/// on the device under test.
inline void expect_same_modelled_counters(const RunStats& ref, const RunStats& dut,
                                          const std::string& what) {
  std::vector<std::size_t> modelled = {std::size_t(hw::Counter::kInstret),
                                       std::size_t(hw::Counter::kSaturated)};
  for (auto k = std::size_t(hw::Counter::kPassesMatmul);
       k < std::size_t(hw::Counter::kMemStall); ++k) {
    modelled.push_back(k);
  }
  for (const std::size_t k : modelled) {
    EXPECT_EQ(ref.counters.at(k), dut.counters.at(k))
        << what << ": counter " << k << " differs from CpuDevice";
  }
}

/// Instructions of opcode `op` in `programs`.
inline std::size_t count_opcode(const std::vector<std::vector<hw::Instr>>& programs,
                                hw::Opcode op) {
  std::size_t n = 0;
  for (const auto& prog : programs) {
    for (const hw::Instr& in : prog) {
      n += static_cast<hw::Opcode>(hw::get_field(in, hw::fields::kOpcode)) == op;
    }
  }
  return n;
}

/// The class cycle counters add up to the total plus the DMA cycles hidden behind compute (a
/// hidden cycle counts in the dma class and in the class of the op it ran under), and the DMA
/// engine's busy cycles are exactly its hidden and exposed ones (docs/isa.md).
inline void expect_classes_add_up(const RunStats& s, const std::string& what) {
  const auto c = [&](hw::Counter k) { return s.counters.at(std::size_t(k)); };
  std::uint64_t classes = 0;
  for (auto k = std::size_t(hw::Counter::kCyclesMatmul);
       k <= std::size_t(hw::Counter::kCyclesControl); ++k) {
    classes += s.counters.at(k);
  }
  EXPECT_EQ(classes, c(hw::Counter::kTotalCycles) + c(hw::Counter::kDmaHidden)) << what;
  EXPECT_EQ(c(hw::Counter::kDmaHidden) + c(hw::Counter::kDmaExposed), c(hw::Counter::kBusyDma))
      << what;
}

/// Index of the first instruction of `prog` with opcode `op` (prog.size() when none).
inline std::uint32_t index_of(const std::vector<hw::Instr>& prog, hw::Opcode op) {
  std::uint32_t i = 0;
  while (i < prog.size() && hw::get_field(prog[i], f::kOpcode) != std::uint32_t(op)) {
    ++i;
  }
  return i;
}

/// The record of instruction `index` (fails the test and returns zeros when there is none).
inline InstrRecord record_of(const RunStats& s, std::uint32_t index) {
  for (const InstrRecord& r : s.records) {
    if (r.index == index) {
      return r;
    }
  }
  ADD_FAILURE() << "no record of instruction " << index;
  return {};
}

/// Runs programs on CpuDevice and on `dut` and compares their DRAMs after each run; on a
/// device with counters, checks its records too (check_records).
class Lockstep {
 public:
  Lockstep(Device& dut, std::uint64_t dram_bytes)
      : dut_(dut), ref_(dut.hw(), dram_bytes), bytes_(dram_bytes) {
    EXPECT_GE(dut.dram_bytes(), dram_bytes);
  }

  /// The program area: the top of the compared DRAM.
  [[nodiscard]] std::uint64_t prog_addr() const noexcept {
    return (bytes_ - 16 * dut_.hw().prog_depth) & ~std::uint64_t{15};
  }

  void write(std::uint64_t addr, std::span<const std::uint8_t> b) {
    ref_.write_dram(addr, b);
    dut_.write_dram(addr, b);
  }

  /// Runs on both; returns the device's stats. Any difference in DRAM fails the test with
  /// the first differing byte.
  RunStats run(const std::vector<hw::Instr>& prog, const std::string& what) {
    const RunStats r = ref_.run_program(prog_addr(), prog);
    const RunStats s = dut_.run_program(prog_addr(), prog);
    expect_same_dram(what);
    if (s.has_cycles) {
      (void)check_records(prog, s, what, &dut_.hw());
      expect_same_modelled_counters(r, s, what);
    }
    last_ref_ = r;
    return s;
  }

  void expect_same_dram(const std::string& what) {
    std::vector<std::uint8_t> a(bytes_), b(bytes_);
    ref_.read_dram(0, a);
    dut_.read_dram(0, b);
    if (a != b) {
      std::size_t i = 0;
      while (a[i] == b[i]) {
        ++i;
      }
      std::size_t n = 0;
      for (std::size_t j = 0; j < a.size(); ++j) {
        n += a[j] != b[j] ? 1 : 0;
      }
      ADD_FAILURE() << what << ": DRAM differs from CpuDevice in " << n << " bytes; first at "
                    << "0x" << std::hex << i << ": expected 0x" << int(a[i]) << ", got 0x"
                    << int(b[i]) << std::dec;
    }
  }

  [[nodiscard]] CpuDevice& reference() noexcept { return ref_; }
  /// CpuDevice's stats of the last run.
  [[nodiscard]] const RunStats& reference_stats() const noexcept { return last_ref_; }

 private:
  Device& dut_;
  CpuDevice ref_;
  RunStats last_ref_;
  std::uint64_t bytes_;
};

/// Uniform random integers of type T in [lo, hi].
template <typename T>
std::vector<T> random_values(std::mt19937& rng, std::size_t n, long long lo, long long hi) {
  std::uniform_int_distribution<long long> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) {
    x = static_cast<T>(d(rng));
  }
  return v;
}

}  // namespace passim::sim::test
