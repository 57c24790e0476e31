// SPDX-License-Identifier: Apache-2.0
/// \file Whole-accelerator test helpers: a program builder that inserts a BARRIER whenever the
/// issuing unit changes (like ModelCompiler's emitter), and a lockstep runner that executes
/// every program on the reference CpuDevice and on the device under test and compares the
/// whole DRAM afterwards, byte for byte, and checks the hardware's per-instruction records
/// against the program and the counters.
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

#include "passim/device/cpu_device.hpp"
#include "passim/device/device.hpp"
#include "passim/fixed_point.hpp"
#include "passim/hw/spec.hpp"

namespace passim::sim::test {

namespace f = hw::fields;

/// A Device that forwards everything to `dut`; tests override `run` to check each run's
/// counters and records on the way.
class ForwardingDevice : public Device {
 public:
  explicit ForwardingDevice(Device& dut) : dut_(dut) {}
  [[nodiscard]] std::string_view name() const noexcept override { return dut_.name(); }
  [[nodiscard]] const hw::HwConfig& hw() const noexcept override { return dut_.hw(); }
  [[nodiscard]] std::uint64_t dram_bytes() const noexcept override { return dut_.dram_bytes(); }
  void write_dram(std::uint64_t a, std::span<const std::uint8_t> b) override {
    dut_.write_dram(a, b);
  }
  void read_dram(std::uint64_t a, std::span<std::uint8_t> b) const override {
    dut_.read_dram(a, b);
  }
  RunStats run(std::uint64_t prog_addr, std::uint32_t len) override {
    return dut_.run(prog_addr, len);
  }

 protected:
  /// The program of a run, read back from DRAM.
  [[nodiscard]] std::vector<hw::Instr> program(std::uint64_t prog_addr, std::uint32_t len) const {
    std::vector<hw::Instr> prog(len);
    dut_.read_dram(prog_addr, {reinterpret_cast<std::uint8_t*>(prog.data()), len * 16u});
    return prog;
  }
  Device& dut_;
};

/// Builds one program; `finish()` appends END.
class ProgramBuilder {
 public:
  /// A raw instruction (no BARRIER insertion).
  void raw(const hw::Instr& in) { body_.push_back(in); }

  void dma(bool load, hw::Mem mem, int log2_size, std::uint32_t dram, std::uint32_t spad,
           std::uint32_t rows, std::uint32_t row_len, std::uint32_t stride,
           std::uint32_t layer = 0) {
    hw::Instr in = hw::make_instr(load ? hw::Opcode::kDmaLoad : hw::Opcode::kDmaStore, layer);
    hw::set_field(in, f::dma_load::kMem, std::uint32_t(mem));
    hw::set_field(in, f::dma_load::kElemSize, std::uint32_t(log2_size));
    hw::set_field(in, f::dma_load::kDramAddr, dram);
    hw::set_field(in, f::dma_load::kSpadAddr, spad);
    hw::set_field(in, f::dma_load::kRows, rows);
    hw::set_field(in, f::dma_load::kRowLen, row_len);
    hw::set_field(in, f::dma_load::kDramStride, stride);
    emit(in);
  }

  /// DMA_STORE with `requant`: each element becomes requantize(lane, param[0], 8 << log2_size).
  void store_requant(hw::Mem mem, int log2_size, std::uint32_t dram, std::uint32_t spad,
                     std::uint32_t rows, std::uint32_t row_len, std::uint32_t stride,
                     std::uint32_t layer = 0) {
    hw::Instr in = hw::make_instr(hw::Opcode::kDmaStore, layer);
    hw::set_field(in, f::dma_store::kMem, std::uint32_t(mem));
    hw::set_field(in, f::dma_store::kElemSize, std::uint32_t(log2_size));
    hw::set_field(in, f::dma_store::kRequant, 1);
    hw::set_field(in, f::dma_store::kDramAddr, dram);
    hw::set_field(in, f::dma_store::kSpadAddr, spad);
    hw::set_field(in, f::dma_store::kRows, rows);
    hw::set_field(in, f::dma_store::kRowLen, row_len);
    hw::set_field(in, f::dma_store::kDramStride, stride);
    emit(in);
  }

  struct Matmul {
    std::uint32_t m = 1, k = 1, n = 1;
    std::uint32_t a_addr = 0, w_addr = 0, dst_addr = 0, rq_addr = 0;
    std::uint32_t out_bits = 8;
    bool requant_en = true;
  };
  void matmul(const Matmul& mm, std::uint32_t layer = 0) {
    hw::Instr in = hw::make_instr(hw::Opcode::kMatmul, layer);
    hw::set_field(in, f::matmul::kOutBits, mm.out_bits);
    hw::set_field(in, f::matmul::kRequantEn, mm.requant_en ? 1 : 0);
    hw::set_field(in, f::matmul::kAAddr, mm.a_addr);
    hw::set_field(in, f::matmul::kWAddr, mm.w_addr);
    hw::set_field(in, f::matmul::kDstAddr, mm.dst_addr);
    hw::set_field(in, f::matmul::kRqAddr, mm.rq_addr);
    hw::set_field(in, f::matmul::kM, mm.m);
    hw::set_field(in, f::matmul::kK, mm.k);
    hw::set_field(in, f::matmul::kN, mm.n);
    emit(in);
  }

  /// A vector opcode (they share one operand layout).
  void vec(hw::Opcode op, std::uint32_t src, std::uint32_t src2, std::uint32_t dst,
           std::uint32_t param, std::uint32_t len, std::uint32_t rows, std::uint32_t frac = 0,
           std::uint32_t layer = 0) {
    hw::Instr in = hw::make_instr(op, layer);
    hw::set_field(in, f::rmsnorm::kSrcAddr, src);
    hw::set_field(in, f::rmsnorm::kSrc2Addr, src2);
    hw::set_field(in, f::rmsnorm::kDstAddr, dst);
    hw::set_field(in, f::rmsnorm::kParamAddr, param);
    hw::set_field(in, f::rmsnorm::kLen, len);
    hw::set_field(in, f::rmsnorm::kRows, rows);
    if (op == hw::Opcode::kRmsnorm || op == hw::Opcode::kLayernorm) {
      hw::set_field(in, f::rmsnorm::kGainFracBits, frac);
    }
    emit(in);
  }

  [[nodiscard]] std::vector<hw::Instr> finish() const {
    std::vector<hw::Instr> p = body_;
    p.push_back(hw::make_instr(hw::Opcode::kEnd, 0));
    return p;
  }
  [[nodiscard]] std::size_t size() const noexcept { return body_.size(); }

 private:
  void emit(const hw::Instr& in) {
    const auto unit = hw::unit_of(static_cast<hw::Opcode>(hw::get_field(in, f::kOpcode)));
    if (!body_.empty() && unit != last_unit_) {
      body_.push_back(hw::make_instr(hw::Opcode::kBarrier, hw::get_field(in, f::kLayer)));
    }
    last_unit_ = unit;
    body_.push_back(in);
  }

  std::vector<hw::Instr> body_;
  hw::Unit last_unit_ = hw::Unit::kControl;
};

/// Little-endian bytes of a vector of integers.
template <typename T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<std::uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

/// A Requant step as a parameter-memory entry: mult [31:0], shift [37:32], the signed bias
/// in [63:38] (docs/isa.md).
inline std::uint64_t param_entry(Requant rq) {
  const std::uint64_t bias_mask = (std::uint64_t{1} << kRequantBiasBits) - 1;
  return std::uint64_t(std::uint32_t(rq.mult)) | (std::uint64_t(std::uint32_t(rq.shift)) << 32) |
         ((std::uint64_t(std::int64_t{rq.bias}) & bias_mask) << 38);
}

/// A run's trace records summed per op class (`hw::OpClass` order).
struct RecordSums {
  std::array<std::uint64_t, 6> cycles{}, stall_cycles{}, passes{};
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
  return sums;
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
    write(prog_addr(), {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
    (void)ref_.run(prog_addr(), std::uint32_t(prog.size()));
    const RunStats s = dut_.run(prog_addr(), std::uint32_t(prog.size()));
    expect_same_dram(what);
    if (s.has_cycles) {
      (void)check_records(prog, s, what, &dut_.hw());
    }
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

 private:
  Device& dut_;
  CpuDevice ref_;
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
