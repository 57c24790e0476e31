// SPDX-License-Identifier: Apache-2.0
/// \file The reference executor of the accelerator ISA (docs/isa.md): every instruction runs on
/// the golden kernels, with no timing. Each part names its RTL twin.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "passim/device/device.hpp"
#include "passim/device/instr_check.hpp"
#include "passim/fixed_point.hpp"
#include "passim/hw/spec.hpp"

namespace passim {

class CpuDevice;

/// Watches CpuDevice::run() one instruction at a time: what a timing model built on the
/// reference executor needs (ModelDevice, device/model_device.hpp).
class InstrObserver {
 public:
  virtual ~InstrObserver() = default;
  /// Before instruction `index` (checked; END included) runs; `dev` holds the memories as the
  /// instruction finds them.
  virtual void before(const hw::Instr& in, std::uint32_t index, const CpuDevice& dev) = 0;
  /// After it ran (not called for END): `saturated` = the results it clamped (its share of
  /// the `saturated` counter).
  virtual void after(const hw::Instr& in, std::uint32_t index, std::uint64_t saturated) = 0;
};

/// Executes programs instruction by instruction with the golden kernels of runtime/src/kernels
/// (the ISA's reference semantics, docs/isa.md): the same kernels as the integer backend, so
/// every piece of arithmetic exists once. No timing: `run` reports no cycles.
class CpuDevice final : public Device {
 public:
  CpuDevice(const hw::HwConfig& cfg, std::uint64_t dram_bytes);

  [[nodiscard]] std::string_view name() const noexcept override { return "cpu-isa"; }
  [[nodiscard]] const hw::HwConfig& hw() const noexcept override { return cfg_; }
  [[nodiscard]] std::uint64_t dram_bytes() const noexcept override { return dram_.size(); }
  void write_dram(std::uint64_t addr, std::span<const std::uint8_t> bytes) override;
  void read_dram(std::uint64_t addr, std::span<std::uint8_t> bytes) const override;
  /// Runs the program as the hardware does (docs/isa.md "Errors"): throws DeviceError with
  /// the code and instruction index the hardware reports for an invalid program.
  RunStats run(std::uint64_t prog_addr, std::uint32_t len) override;

  /// Calls `observer` (not owned; null = none) around every instruction of later runs.
  void set_observer(InstrObserver* observer) noexcept { observer_ = observer; }
  /// The vector scratchpad, (vector_depth, L) row-major: lane l of word w at w * L + l.
  [[nodiscard]] std::span<const std::int32_t> vector_memory() const noexcept { return vector_; }
  /// The parameter memory, one 64-bit entry per word.
  [[nodiscard]] std::span<const std::uint64_t> param_memory() const noexcept { return param_; }

 private:
  /// The operands every vector opcode shares (docs/isa.md), decoded once.
  struct VectorArgs {
    hw::Opcode op;
    std::size_t src, src2, dst, param, len, rows;
    std::size_t stride;  ///< words of one row: ceil(len / L)
    std::uint32_t index;  ///< the instruction's index, for errors
  };

  // rtl/top/psm_controller.sv: fetch and dispatch.
  void execute(const hw::Instr& in, std::uint32_t index);
  // rtl/top/psm_dma.sv: DMA_LOAD, DMA_STORE.
  void dma(const hw::Instr& in, bool load, std::uint32_t index);
  /// Fails unless `rows` (>= 1) rows of `row_bytes`, `stride` bytes apart from DRAM byte
  /// `addr`, all lie inside the DRAM (checked before the first row moves).
  void check_dram_rows(std::uint64_t addr, std::size_t rows, std::size_t row_bytes,
                       std::uint64_t stride, std::uint32_t index) const;
  /// Elements per word and words of a DMA-reachable memory.
  struct Geometry {
    std::size_t per_word, depth;
  };
  [[nodiscard]] Geometry geometry(hw::Mem mem, std::uint32_t index) const;
  /// Element `i` of a memory (words laid out one after the other), sign-extended.
  [[nodiscard]] std::int64_t slot(hw::Mem mem, std::size_t i) const;
  void set_slot(hw::Mem mem, std::size_t i, std::int64_t v);
  // rtl/matmul/psm_matmul.sv: MATMUL, MATMUL_HEADS and MATMUL_ACT with the requantiser on
  // the accumulator read path; matmul_out() writes the result rows as the matmul stage does.
  void matmul(const hw::Instr& in, std::uint32_t index);
  void matmul_out(const hw::Instr& in, std::span<std::int32_t> acc, std::uint32_t index);
  // rtl/top/psm_vector_unit.sv: decodes the shared operands, then one unit per opcode.
  void vector_unit(const hw::Instr& in, hw::Opcode op, std::uint32_t index);
  void softmax(const VectorArgs& a, bool online);              // psm_softmax
  void rmsnorm(const VectorArgs& a, int gain_frac_bits);       // psm_rmsnorm
  void layernorm(const VectorArgs& a, int gain_frac_bits);     // psm_layernorm, LAYERNORM
  void batchnorm(const VectorArgs& a);                         // psm_layernorm, BATCHNORM
  void silu(const VectorArgs& a);                              // psm_silu
  void gelu(const VectorArgs& a);                              // psm_gelu
  void rope(const VectorArgs& a);                              // psm_rope
  void eltwise(const VectorArgs& a);                           // psm_eltwise: ADD, MUL, EMBED
  void attn_score(const VectorArgs& a);                        // psm_attn, ATTN_SCORE
  void attn_value(const VectorArgs& a);                        // psm_attn, ATTN_VALUE
  /// The KV-cache rows of ATTN_SCORE and ATTN_VALUE: `rows` rows of `len` from src2.
  [[nodiscard]] std::vector<std::int16_t> cache_rows(const VectorArgs& a) const;

  /// Throws DeviceError(code, index, what). Every check that check_instr() makes comes
  /// first; the calls left are for the DRAM (`bus`) and for internal consistency.
  [[noreturn]] static void fail(std::uint32_t index, const std::string& what,
                                hw::ErrorCode code = hw::ErrorCode::kBadOperand);
  /// The program as the controller copies it before the run: checks PROG_LEN (prog_len),
  /// PROG_ADDR (prog_align) and that every instruction lies inside DRAM (bus, naming the
  /// first instruction that does not).
  [[nodiscard]] std::vector<hw::Instr> fetch(std::uint64_t prog_addr, std::uint32_t len) const;
  [[nodiscard]] std::uint64_t param_u64(std::size_t entry, std::uint32_t index) const;
  /// The Requant step in param entry `entry`, bias 0: every unit but MATMUL ignores the bias.
  [[nodiscard]] Requant param_rq(std::size_t entry, std::uint32_t index) const;
  /// The same with its signed bias (bits [63:38]): the MATMUL read-out.
  [[nodiscard]] Requant param_rq_biased(std::size_t entry, std::uint32_t index) const;
  /// The low 16 bits of `n` lanes of a vector-scratchpad row from word `addr` on.
  [[nodiscard]] std::vector<std::int16_t> row16(std::size_t addr, std::size_t n,
                                                std::uint32_t index) const;
  /// Reads `n` lane values of a vector-scratchpad row starting at word `addr`.
  [[nodiscard]] std::vector<std::int32_t> vec_row(std::size_t addr, std::size_t n,
                                                  std::uint32_t index) const;
  /// Writes `v`, sign-extended to the 32-bit lanes, from word `addr` on.
  template <typename T>
  void write_row(std::size_t addr, std::span<const T> v, std::uint32_t index);
  [[nodiscard]] std::size_t vec_words(std::size_t n) const noexcept {
    return (n + cfg_.lanes - 1) / cfg_.lanes;
  }

  hw::HwConfig cfg_;
  std::vector<std::uint8_t> dram_;
  std::vector<std::int8_t> input_;     ///< (input_depth, R)
  std::vector<std::int8_t> weight_;    ///< (weight_depth, C)
  std::vector<std::int32_t> vector_;   ///< (vector_depth, L)
  std::vector<std::uint64_t> param_;   ///< (param_depth)
  InstrObserver* observer_ = nullptr;
};

}  // namespace passim
