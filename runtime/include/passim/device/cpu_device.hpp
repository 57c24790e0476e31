// SPDX-License-Identifier: Apache-2.0
/// \file The reference executor of the accelerator ISA (docs/isa.md): every instruction runs on
/// the golden kernels, with no timing.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "passim/device/device.hpp"
#include "passim/fixed_point.hpp"
#include "passim/hw/spec.hpp"

namespace passim {

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
