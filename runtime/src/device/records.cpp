// SPDX-License-Identifier: Apache-2.0
// Per-op records: the hardware's instruction records joined with their instructions.
#include "passim/device/records.hpp"

namespace passim {

namespace f = hw::fields;
using hw::Opcode;

Shape instr_shape(const hw::Instr& in) {
  switch (static_cast<Opcode>(hw::get_field(in, f::kOpcode))) {
    case Opcode::kNop:
    case Opcode::kEnd:
    case Opcode::kBarrier:
      return {};
    case Opcode::kDmaLoad:
    case Opcode::kDmaStore:  // DMA_STORE has DMA_LOAD's layout
      return {{"rows", hw::get_field(in, f::dma_load::kRows)},
              {"row_len", hw::get_field(in, f::dma_load::kRowLen)}};
    case Opcode::kMatmul:
    case Opcode::kMatmulHeads:
      return {{"m", hw::get_field(in, f::matmul::kM)},
              {"k", hw::get_field(in, f::matmul::kK)},
              {"n", hw::get_field(in, f::matmul::kN)}};
    case Opcode::kMatmulAct:
      return {{"m", hw::get_field(in, f::matmul::kM)},
              {"k", hw::get_field(in, f::matmul::kK)},
              {"n", hw::get_field(in, f::matmul::kN)},
              {"digits", hw::get_field(in, f::matmul_act::kDigits)},
              {"transpose", hw::get_field(in, f::matmul_act::kTranspose)}};
    default:  // the vector opcodes share RMSNORM's rows and len fields
      return {{"rows", hw::get_field(in, f::rmsnorm::kRows)},
              {"len", hw::get_field(in, f::rmsnorm::kLen)}};
  }
}

std::uint64_t instr_macs(const hw::Instr& in) {
  switch (static_cast<Opcode>(hw::get_field(in, f::kOpcode))) {
    case Opcode::kMatmul:
    case Opcode::kMatmulHeads:
    case Opcode::kMatmulAct:  // the array's int8 MACs: every digit group
      return std::uint64_t{hw::get_field(in, f::matmul::kM)} * hw::get_field(in, f::matmul::kK) *
             hw::get_field(in, f::matmul::kN) *
             matmul_result(in, 1).digits;  // (the digits do not depend on the lanes)
    case Opcode::kAttnScore:
    case Opcode::kAttnValue:
      return std::uint64_t{hw::get_field(in, f::attn_score::kRows)} *
             hw::get_field(in, f::attn_score::kLen);
    default:
      return 0;
  }
}

void OpRecordTable::add(std::span<const hw::Instr> prog, std::span<const InstrRecord> records,
                        Phase phase) {
  for (const InstrRecord& r : records) {
    if (r.index >= prog.size()) {
      continue;
    }
    const hw::Instr& in = prog[r.index];
    Shape shape = instr_shape(in);
    std::vector<std::uint32_t> dims;
    for (const auto& [name, v] : shape) {
      dims.push_back(v);
    }
    const std::uint32_t layer = hw::get_field(in, f::kLayer);
    const std::uint32_t op = hw::get_field(in, f::kOpcode);
    const std::uint32_t cls = hw::get_field(in, f::kOpClass);
    const bool dma = op == std::uint32_t(Opcode::kDmaLoad) || op == std::uint32_t(Opcode::kDmaStore);
    const DmaMoves moves = dma && classify_ ? classify_(in) : DmaMoves::kNone;
    auto [it, inserted] =
        index_.try_emplace(Key{phase, layer, op, moves, cls, std::move(dims)}, rows_.size());
    if (inserted) {
      OpRecord row;
      row.phase = phase;
      row.layer = layer;
      row.op = static_cast<Opcode>(op);
      row.moves = moves;
      row.op_class = cls;
      row.shape = std::move(shape);
      rows_.push_back(std::move(row));
    }
    OpRecord& row = rows_[it->second];
    row.count += 1;
    row.passes += r.passes;
    row.cycles += r.cycles;
    row.stall_cycles += r.stall_cycles;
    row.saturated += r.saturated;
    row.macs += instr_macs(in);
  }
}

}  // namespace passim
