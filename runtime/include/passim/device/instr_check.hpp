// SPDX-License-Identifier: Apache-2.0
/// \file The accelerator's errors as every Device reports them: `DeviceError` carries the
/// hardware's `STATUS.error` code (`hw::ErrorCode`, spec/passim.json) and `ERROR_INFO` (the
/// instruction index), and `check_instr` is the one operand check of an instruction, the C++
/// twin of rtl/top/psm_instr_check.sv (docs/isa.md "Errors").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "passim/hw/spec.hpp"

namespace passim {

/// "bad_opcode", "bad_operand", "spad_range", "prog_len", "prog_align", "bus", "watchdog"
/// ("none" for kNone, "unknown" for a value outside the enum): the names docs/isa.md uses.
[[nodiscard]] std::string_view error_code_name(hw::ErrorCode code) noexcept;

/// A run that stopped with an error, as the hardware reports it: `code()` is STATUS.error and
/// `index()` is ERROR_INFO (the instruction index; 0 for prog_len and prog_align, which are
/// found before any instruction). CpuDevice, SimDevice and LoopDevice throw it with the same
/// code and index for the same program; `what()` is
/// "program instruction <index>: <name> (<detail>)" ("program: <name> (<detail>)" for
/// prog_len and prog_align), and its detail may differ between devices.
class DeviceError : public std::runtime_error {
 public:
  DeviceError(hw::ErrorCode code, std::uint32_t index, const std::string& detail);
  [[nodiscard]] hw::ErrorCode code() const noexcept { return code_; }
  [[nodiscard]] std::uint32_t index() const noexcept { return index_; }

 private:
  hw::ErrorCode code_;
  std::uint32_t index_;
};

/// The result of check_instr: kNone, or the error and a message naming the field with the
/// expected and found values.
struct InstrCheck {
  hw::ErrorCode code = hw::ErrorCode::kNone;
  std::string detail;  ///< e.g. "DMA_LOAD elem_size: expected 0 for mem input, found 2"
  [[nodiscard]] bool ok() const noexcept { return code == hw::ErrorCode::kNone; }
};

/// Checks instruction `in` against the limits of a `cfg` accelerator exactly as the hardware
/// decodes it (rtl/top/psm_instr_check.sv), in its order of precedence:
///   1. bad_opcode: an opcode that is not in the ISA;
///   2. bad_operand: a size that is 0 or too large, a bad `mem`, `elem_size`, `out_bits`,
///      `gain_frac_bits` or ROPE length, DMA_STORE requant from a memory other than the vector
///      scratchpad, or an `op_class` above control (6);
///   3. spad_range: a scratchpad or param operand that runs past the end of its memory.
/// DRAM addresses are not checked here: a DMA outside DRAM is a `bus` error of the run.
/// Reserved bits and `layer` are not checked.
[[nodiscard]] InstrCheck check_instr(const hw::Instr& in, const hw::HwConfig& cfg);

}  // namespace passim
