// SPDX-License-Identifier: Apache-2.0
// Accelerator programs: named operands to instruction fields (docs/isa.md).
#include "passim/compiler/program.hpp"

#include <algorithm>
#include <iterator>

namespace passim {

namespace f = hw::fields;
using hw::Opcode;

void ProgramBuilder::emit(const hw::Instr& in) {
  const hw::Unit unit = hw::unit_of(static_cast<Opcode>(hw::get_field(in, f::kOpcode)));
  if (!body_.empty() && unit != last_unit_) {
    body_.push_back(hw::make_instr(Opcode::kBarrier, hw::get_field(in, f::kLayer)));
  }
  last_unit_ = unit;
  body_.push_back(in);
}

void ProgramBuilder::dma(Opcode op, const DmaOp& d) {
  // DMA_LOAD and DMA_STORE share one field layout; only DMA_STORE has `requant`.
  hw::Instr in = hw::make_instr(op, layer_);
  if (d.requant) {
    hw::set_field(in, f::dma_store::kRequant, 1);
  }
  hw::set_field(in, f::dma_load::kMem, std::uint32_t(d.mem));
  hw::set_field(in, f::dma_load::kElemSize, d.elem_log2);
  hw::set_field(in, f::dma_load::kDramAddr, std::uint32_t(d.dram));
  hw::set_field(in, f::dma_load::kSpadAddr, std::uint32_t(d.spad));
  hw::set_field(in, f::dma_load::kRows, std::uint32_t(d.rows));
  hw::set_field(in, f::dma_load::kRowLen, std::uint32_t(d.row_len));
  hw::set_field(in, f::dma_load::kDramStride, std::uint32_t(d.stride));
  emit(in);
}

void ProgramBuilder::load(const DmaOp& op) { dma(Opcode::kDmaLoad, op); }

void ProgramBuilder::store(const DmaOp& op) { dma(Opcode::kDmaStore, op); }

void ProgramBuilder::matmul(const MatmulOp& op) {
  hw::Instr in = hw::make_instr(Opcode::kMatmul, layer_);
  hw::set_field(in, f::matmul::kOutBits, op.requant ? op.out_bits : 0u);
  hw::set_field(in, f::matmul::kDstStride, std::uint32_t(op.dst_stride));
  hw::set_field(in, f::matmul::kAAddr, std::uint32_t(op.a_addr));
  hw::set_field(in, f::matmul::kWAddr, std::uint32_t(op.w_addr));
  hw::set_field(in, f::matmul::kDstAddr, std::uint32_t(op.dst));
  hw::set_field(in, f::matmul::kRqAddr, std::uint32_t(op.rq_addr));
  hw::set_field(in, f::matmul::kM, std::uint32_t(op.m));
  hw::set_field(in, f::matmul::kK, std::uint32_t(op.k));
  hw::set_field(in, f::matmul::kN, std::uint32_t(op.n));
  emit(in);
}

void ProgramBuilder::vector(const VectorOp& op) {
  // Every vector opcode uses RMSNORM's operand fields (SOFTMAX a subset of them).
  hw::Instr in = hw::make_instr(op.op, layer_);
  hw::set_field(in, f::rmsnorm::kSrcAddr, std::uint32_t(op.src));
  hw::set_field(in, f::rmsnorm::kSrc2Addr, std::uint32_t(op.src2));
  hw::set_field(in, f::rmsnorm::kDstAddr, std::uint32_t(op.dst));
  hw::set_field(in, f::rmsnorm::kParamAddr, std::uint32_t(op.param));
  hw::set_field(in, f::rmsnorm::kLen, std::uint32_t(op.len));
  hw::set_field(in, f::rmsnorm::kRows, std::uint32_t(op.rows));
  if (op.op == Opcode::kRmsnorm || op.op == Opcode::kLayernorm) {
    hw::set_field(in, f::rmsnorm::kGainFracBits, op.gain_frac_bits);
  }
  if (op.op == Opcode::kSoftmax) {
    hw::set_field(in, f::softmax::kOnline, op.online ? 1u : 0u);
  }
  emit(in);
}

std::vector<std::vector<hw::Instr>> ProgramBuilder::programs() const {
  std::vector<std::vector<hw::Instr>> out;
  const std::size_t per = prog_depth_ - 1;  // room for END
  for (std::size_t i = 0; i < body_.size(); i += per) {
    const std::size_t end = i + std::min(per, body_.size() - i);
    std::vector<hw::Instr> p(body_.begin() + std::ptrdiff_t(i), body_.begin() + std::ptrdiff_t(end));
    p.push_back(hw::make_instr(Opcode::kEnd, 0));
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<hw::Instr> ProgramBuilder::program() const {
  std::vector<hw::Instr> p = body_;
  p.push_back(hw::make_instr(Opcode::kEnd, 0));
  return p;
}

std::uint64_t encode_param(Requant rq) noexcept {
  const std::uint64_t bias_mask = (std::uint64_t{1} << kRequantBiasBits) - 1;
  return std::uint64_t(std::uint32_t(rq.mult)) | (std::uint64_t(std::uint32_t(rq.shift)) << 32) |
         ((std::uint64_t(std::int64_t{rq.bias}) & bias_mask) << 38);
}

Requant decode_param(std::uint64_t p) noexcept {
  // The bias is the top 26 bits, sign-extended by an arithmetic shift (C++20 two's complement).
  return {static_cast<std::int32_t>(p & 0x7FFF'FFFFu), static_cast<std::int32_t>((p >> 32) & 63),
          static_cast<std::int32_t>(static_cast<std::int64_t>(p) >> 38)};
}

}  // namespace passim
