// SPDX-License-Identifier: Apache-2.0
/// \file The accelerator as the runtime sees it: a DRAM, a program, a run.
/// `CpuDevice` (device/cpu_device.hpp) executes programs with the golden kernels; the
/// Verilated accelerator (`passim::sim::SimDevice`, in sim/) implements the same interface.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "passim/fixed_point.hpp"
#include "passim/hw/spec.hpp"

namespace passim {

/// The hardware's record of one unit instruction (psm_accel's trace port, rtl/top/psm_trace.sv).
/// BARRIER, END and NOP have no unit and no record.
struct InstrRecord {
  std::uint32_t index = 0;         ///< instruction index in the program (0 = first)
  std::uint8_t unit = 0;           ///< 0 DMA, 1 matmul, 2 vector
  std::uint64_t cycles = 0;        ///< cycles the unit was busy with it
  std::uint64_t stall_cycles = 0;  ///< of those, cycles it waited (DMA: on the memory port)
  std::uint64_t passes = 0;        ///< passes it made (docs/isa.md "passes" column)
  std::uint64_t saturated = 0;     ///< results it clamped (the `saturated` counter's share)
};

/// Which part of a generation a program belongs to: the prompt's whole-sequence passes
/// (prefill), one position at a time (decode), or the one-time load of resident weights
/// before either (preload). The hardware does not know; the host tags its runs
/// (Device::set_phase) so that reports can split every class and record.
enum class Phase : std::uint8_t { kDecode = 0, kPrefill = 1, kPreload = 2 };

/// "decode", "prefill" or "preload".
[[nodiscard]] constexpr std::string_view phase_name(Phase p) noexcept {
  return p == Phase::kPrefill ? "prefill" : p == Phase::kPreload ? "preload" : "decode";
}

/// What a run reports. Cycle numbers come only from hardware counters and the hardware's
/// trace: a device without them (CpuDevice) leaves `has_cycles` false, `records` empty and
/// the cycle counters 0, and fills only the counters it models (instret, passes_<class>,
/// saturated).
struct RunStats {
  bool has_cycles = false;
  std::vector<std::uint64_t> counters;  ///< indexed like passim::hw counter indices
  std::uint64_t instructions = 0;       ///< instructions executed
  /// One record per DMA, matmul and vector instruction of this run, in the order they
  /// ended (instructions on different units may end out of program order).
  std::vector<InstrRecord> records;
  Phase phase = Phase::kDecode;  ///< the host's tag of the run (Device::set_phase)
};

/// Receives every program a Device runs with its stats: the report's per-instruction records
/// reach the tools this way.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  /// `program`: the instructions that ran (END included); `stats`: the run's counters and
  /// per-instruction records (RunStats::records index into `program`).
  virtual void on_run(std::span<const hw::Instr> program, const RunStats& stats) = 0;
};

/// An accelerator with its own DRAM, driven through programs (docs/isa.md).
class Device {
 public:
  virtual ~Device() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual const hw::HwConfig& hw() const noexcept = 0;
  /// Size of the device DRAM in bytes.
  [[nodiscard]] virtual std::uint64_t dram_bytes() const noexcept = 0;
  /// Host writes/reads of device DRAM. Throws std::out_of_range outside the DRAM.
  virtual void write_dram(std::uint64_t addr, std::span<const std::uint8_t> bytes) = 0;
  virtual void read_dram(std::uint64_t addr, std::span<std::uint8_t> bytes) const = 0;
  /// Runs `len` instructions stored at DRAM address `prog_addr` until END.
  /// Throws DeviceError (device/instr_check.hpp) with the hardware's error code and the
  /// instruction index on an invalid program (docs/isa.md "Errors").
  virtual RunStats run(std::uint64_t prog_addr, std::uint32_t len) = 0;

  /// Writes `program` to DRAM at `prog_addr`, runs it, and hands the program and its stats to
  /// every observer. Throws as write_dram() and run().
  RunStats run_program(std::uint64_t prog_addr, std::span<const hw::Instr> program);
  /// Adds an observer of every later run_program() (not owned; must outlive its use).
  void add_observer(RunObserver* observer) { observers_.push_back(observer); }
  /// The phase later run_program() calls are tagged with (RunStats::phase).
  void set_phase(Phase p) noexcept { phase_ = p; }
  [[nodiscard]] Phase phase() const noexcept { return phase_; }

 private:
  std::vector<RunObserver*> observers_;
  Phase phase_ = Phase::kDecode;
};

/// The passes instruction `in` makes on a `cfg` accelerator, as its `passes_<class>` counter
/// and its trace record count them (docs/isa.md, the opcodes' "passes" column): DMA one per
/// row, MATMUL one per weight tile (ceil(k / R) * ceil(n / C)), SOFTMAX 3 per row (2 with
/// `online`), RMSNORM 2, LAYERNORM 3, BATCHNORM, GELU and the other row opcodes 1 per row,
/// ATTN_SCORE / ATTN_VALUE one per cached position; BARRIER, END and NOP 0.
[[nodiscard]] std::uint64_t instr_passes(const hw::Instr& in, const hw::HwConfig& cfg) noexcept;

/// Where a MATMUL, MATMUL_HEADS or MATMUL_ACT puts its result in the vector scratchpad
/// (docs/isa.md): `rows` rows of `row_len` elements (MATMUL_ACT with transpose: n rows of m),
/// each row in groups of `group` elements that start a new word (MATMUL_HEADS: its heads; else
/// the whole row), row r from word dst_addr + r * `stride` on, taking `row_words` words.
/// `digits` is MATMUL_ACT's digit groups, 1 for the others. A head_size of 0 gives group 0 and
/// no words; check_instr refuses it, and a MATMUL dst_stride shorter than a row.
struct MatmulResult {
  std::uint64_t digits = 1;
  bool transposed = false;  ///< MATMUL_ACT with transpose: the rows are the result's columns
  std::uint64_t rows = 0, row_len = 0, group = 0;
  std::uint64_t stride = 0, row_words = 0;
  /// Words from the first row's start to the last row's end.
  [[nodiscard]] std::uint64_t span() const noexcept {
    return rows == 0 ? 0 : (rows - 1) * stride + row_words;
  }
};
[[nodiscard]] MatmulResult matmul_result(const hw::Instr& in, std::size_t lanes) noexcept;

}  // namespace passim
