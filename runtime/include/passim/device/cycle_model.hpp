// SPDX-License-Identifier: Apache-2.0
/// \file Closed forms of the accelerator's busy cycles per instruction (docs/cycle-model.md),
/// derived from the RTL: the matmul stage (rtl/top/psm_matmul_stage.sv on rtl/matmul/psm_matmul.sv)
/// and the vector unit (rtl/top/psm_vector_unit.sv on the row units of rtl/softmax, rtl/rmsnorm,
/// ...). The DMA and its memory are in device/dma_model.hpp. `ModelDevice`
/// (device/model_device.hpp) puts them on the controller's schedule.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "passim/hw/spec.hpp"

namespace passim::cycles {

/// ceil(a / b) for b >= 1.
[[nodiscard]] constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) noexcept {
  return (a + b - 1) / b;
}

/// Busy cycles of rtl/matmul/psm_matmul.sv for one command (docs/cycle-model.md):
/// (G * KT * NT - 1) * T + m + (R + C + 2) + 2 with KT = ceil(k / R), NT = ceil(n / C),
/// T = max(m, R, C) and G = `digits` digit groups (1 but for MATMUL_ACT).
[[nodiscard]] std::uint64_t matmul_array_cycles(const hw::HwConfig& cfg, std::uint64_t m,
                                                std::uint64_t k, std::uint64_t n,
                                                std::uint64_t digits) noexcept;

/// Cycles of the matmul stage's copy-out (StCopyOut of rtl/top/psm_matmul_stage.sv), the result
/// from psm_matmul's output buffer to the vector scratchpad, for a MATMUL, MATMUL_HEADS or
/// MATMUL_ACT `in`, with every vector write granted (the vector unit idle).
[[nodiscard]] std::uint64_t matmul_copy_out_cycles(const hw::Instr& in,
                                                   const hw::HwConfig& cfg) noexcept;

/// A half-open range of cycles [begin, end).
struct CycleSpan {
  std::uint64_t begin = 0, end = 0;
};

/// The cycles of the copy-out in which the matmul stage writes the vector scratchpad, as
/// offsets from its first cycle (StCopyOut): rows one per cycle from offset 2 (when the writes
/// pace it, ceil(n / C) <= words per row: C >= L, every built-in config; else none are given);
/// transposed, each block's column writes.
[[nodiscard]] std::vector<CycleSpan> matmul_copy_out_writes(const hw::Instr& in,
                                                            const hw::HwConfig& cfg);

/// Busy cycles of the matmul stage (rtl/top/psm_matmul_stage.sv) for `in`: the copy-in before the
/// run when the vector unit was busy at the start (`vector_busy`), one start cycle, psm_matmul's
/// busy cycles, then the copy-out. Every memory access is granted.
[[nodiscard]] std::uint64_t matmul_stage_cycles(const hw::Instr& in, const hw::HwConfig& cfg,
                                                bool vector_busy) noexcept;

/// Cycles, from the cycle after the matmul stage starts, in which it still copies the
/// requantisation steps in (its `copy_in_o`): the vector unit's instructions wait for them.
[[nodiscard]] std::uint64_t matmul_copy_in_cycles(const hw::Instr& in) noexcept;

/// Cycles the matmul stage copies steps in before psm_matmul starts (StCopyIn): only when the
/// vector unit was busy at the start (`vector_busy`), n + 2 (1 with out_bits = 0); else 0.
[[nodiscard]] std::uint64_t matmul_copy_in_before(const hw::Instr& in, bool vector_busy) noexcept;

/// Extra cycles of psm_rsqrt (rtl/common/psm_rsqrt.sv) for an input `x` >= 1: it normalises x by
/// two bits per cycle, k = (62 - bit_width(x)) / 2 (0 .. 30).
[[nodiscard]] std::uint64_t rsqrt_extra_cycles(std::uint64_t x) noexcept;

/// Busy cycles of the vector unit (rtl/top/psm_vector_unit.sv) for vector instruction `in`.
/// `rsqrt_extra` is the sum over the rows of rsqrt_extra_cycles() of each row's reciprocal square
/// root input (RMSNORM: sum of squares + eps; LAYERNORM: sum of squared deviations + eps; 0 for the
/// other opcodes): the only data-dependent term.
[[nodiscard]] std::uint64_t vector_cycles(const hw::Instr& in, const hw::HwConfig& cfg,
                                          std::uint64_t rsqrt_extra) noexcept;

/// The row unit's cycles for one row (or, ATTN_SCORE / ATTN_VALUE, the one command) of `in`, from
/// the cycle after its start to its last busy cycle, without the data-dependent rsqrt term (see
/// vector_cycles).
[[nodiscard]] std::uint64_t row_unit_cycles(const hw::Instr& in, const hw::HwConfig& cfg) noexcept;

}  // namespace passim::cycles
