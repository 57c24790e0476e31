// SPDX-License-Identifier: Apache-2.0
/// \file The accelerator as the runtime sees it: a DRAM, a program, a run.
/// `CpuDevice` executes programs with the golden kernels; the Verilated accelerator
/// (`passim::sim::SimDevice`, in sim/) implements the same interface.
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
};

/// What a run reports. Cycle numbers come only from hardware counters and the hardware's
/// trace: a device without them (CpuDevice) leaves `has_cycles` false and `counters` and
/// `records` empty.
struct RunStats {
  bool has_cycles = false;
  std::vector<std::uint64_t> counters;  ///< indexed like passim::hw counter indices
  std::uint64_t instructions = 0;       ///< instructions executed
  /// One record per DMA, matmul and vector instruction of this run, in the order they
  /// ended (instructions on different units may end out of program order).
  std::vector<InstrRecord> records;
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
  /// Throws std::runtime_error naming the instruction index on an invalid instruction.
  virtual RunStats run(std::uint64_t prog_addr, std::uint32_t len) = 0;
};

/// The passes instruction `in` makes on a `cfg` accelerator, as its `passes_<class>` counter
/// and its trace record count them (docs/isa.md, the opcodes' "passes" column): DMA one per
/// row, MATMUL one per weight tile (ceil(k / R) * ceil(n / C)), SOFTMAX 3 per row (2 with
/// `online`), RMSNORM 2, LAYERNORM 3, BATCHNORM, GELU and the other row opcodes 1 per row,
/// ATTN_SCORE / ATTN_VALUE one per cached position; BARRIER, END and NOP 0.
[[nodiscard]] std::uint64_t instr_passes(const hw::Instr& in, const hw::HwConfig& cfg) noexcept;

/// Executes programs instruction by instruction with the golden kernels of
/// runtime/src/kernels (the ISA's reference semantics, docs/isa.md). No timing.
class CpuDevice final : public Device {
 public:
  CpuDevice(const hw::HwConfig& cfg, std::uint64_t dram_bytes);

  [[nodiscard]] std::string_view name() const noexcept override { return "cpu-isa"; }
  [[nodiscard]] const hw::HwConfig& hw() const noexcept override { return cfg_; }
  [[nodiscard]] std::uint64_t dram_bytes() const noexcept override { return dram_.size(); }
  void write_dram(std::uint64_t addr, std::span<const std::uint8_t> bytes) override;
  void read_dram(std::uint64_t addr, std::span<std::uint8_t> bytes) const override;
  RunStats run(std::uint64_t prog_addr, std::uint32_t len) override;

 private:
  void execute(const hw::Instr& in, std::uint32_t index);
  void dma(const hw::Instr& in, bool load, std::uint32_t index);
  void matmul(const hw::Instr& in, std::uint32_t index);
  void vector_op(const hw::Instr& in, hw::Opcode op, std::uint32_t index);
  [[nodiscard]] std::uint64_t param_u64(std::size_t entry, std::uint32_t index) const;
  /// The Requant step in param entry `entry`, bias 0: every unit but MATMUL ignores the bias.
  [[nodiscard]] Requant param_rq(std::size_t entry, std::uint32_t index) const;
  /// The same with its signed bias (bits [63:38]): the MATMUL read-out.
  [[nodiscard]] Requant param_rq_biased(std::size_t entry, std::uint32_t index) const;
  /// Reads `n` lane values of a vector-scratchpad row starting at word `addr`.
  [[nodiscard]] std::vector<std::int32_t> vec_row(std::size_t addr, std::size_t n,
                                                  std::uint32_t index) const;
  void write_vec_row(std::size_t addr, std::span<const std::int32_t> v, std::uint32_t index);
  [[nodiscard]] std::size_t vec_words(std::size_t n) const noexcept {
    return (n + cfg_.lanes - 1) / cfg_.lanes;
  }

  hw::HwConfig cfg_;
  std::vector<std::uint8_t> dram_;
  std::vector<std::int8_t> input_;     ///< (input_depth, R)
  std::vector<std::int8_t> weight_;    ///< (weight_depth, C)
  std::vector<std::int32_t> vector_;   ///< (vector_depth, L)
  std::vector<std::uint64_t> param_;   ///< (param_depth)
};

}  // namespace passim
