// SPDX-License-Identifier: Apache-2.0
// Accelerator programs: named operands to instruction fields (docs/isa.md).
#include "passim/compiler/program.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

namespace passim {

namespace f = hw::fields;
using hw::Opcode;

namespace {

/// Sets an operand field; a value wider than the field is an error, never a silent wrap.
void put(hw::Instr& in, hw::Field f, std::uint64_t value, const char* what) {
  if ((value >> f.width) != 0) {
    throw std::invalid_argument(fmt::format("{}: expected at most {}, found {}", what,
                                            (std::uint64_t{1} << f.width) - 1, value));
  }
  hw::set_field(in, f, std::uint32_t(value));
}

}  // namespace

bool ProgramBuilder::needs_barrier(hw::Unit unit, const Span* tile_load) const {
  // Another unit's instruction in flight blocks, unless this is a tile load and that one is a
  // MATMUL reading none of the words the load writes.
  const auto overlap = [](const Span& a, const Span& b) {
    return a.mem == b.mem && a.lo < b.hi && b.lo < a.hi;
  };
  return std::any_of(in_flight_.begin(), in_flight_.end(), [&](const InFlight& op) {
    if (op.unit == unit) {
      return false;  // a unit runs its instructions in order
    }
    return tile_load == nullptr || !op.matmul || overlap(*tile_load, op.weight) ||
           overlap(*tile_load, op.param);
  });
}

void ProgramBuilder::emit(const hw::Instr& in, const Span* tile_load, const InFlight* op) {
  const hw::Unit unit = hw::unit_of(static_cast<Opcode>(hw::get_field(in, f::kOpcode)));
  const bool barrier = cfg_ == nullptr ? !body_.empty() && unit != last_unit_
                                       : needs_barrier(unit, tile_load);
  if (barrier) {
    body_.push_back(hw::make_instr(Opcode::kBarrier, hw::get_field(in, f::kLayer)));
    in_flight_.clear();
  }
  last_unit_ = unit;
  if (cfg_ != nullptr) {
    InFlight other;
    other.unit = unit;
    in_flight_.push_back(op != nullptr ? *op : other);
  }
  body_.push_back(in);
}

std::size_t ProgramBuilder::stream_slot(hw::Mem mem, std::size_t words, std::size_t depth) {
  if (words == 0 || words > depth) {
    throw std::invalid_argument(fmt::format(
        "stream slot in memory {}: expected 1 to {} words, found {}", int(mem), depth, words));
  }
  if (words > depth / 2) {
    return 0;  // two do not fit side by side: this one waits for the last (a BARRIER)
  }
  std::size_t& half = half_[std::size_t(mem)];
  const std::size_t at = half * (depth / 2);
  half ^= 1;
  return at;
}

void ProgramBuilder::dma(Opcode op, const DmaOp& d) {
  // DMA_LOAD and DMA_STORE share one field layout; only DMA_STORE has `requant`.
  hw::Instr in = hw::make_instr(op, layer_);
  if (d.requant) {
    hw::set_field(in, f::dma_store::kRequant, 1);
  }
  put(in, f::dma_load::kMem, std::uint64_t(d.mem), "DMA mem");
  put(in, f::dma_load::kElemSize, d.elem_log2, "DMA elem_size");
  put(in, f::dma_load::kDramAddr, d.dram, "DMA dram_addr");
  put(in, f::dma_load::kSpadAddr, d.spad, "DMA spad_addr");
  put(in, f::dma_load::kRows, d.rows, "DMA rows");
  put(in, f::dma_load::kRowLen, d.row_len, "DMA row_len");
  put(in, f::dma_load::kDramStride, d.stride, "DMA dram_stride");
  // A load into the weight scratchpad or the parameter memory may overlap a MATMUL.
  const bool tile =
      op == Opcode::kDmaLoad && (d.mem == hw::Mem::kWeight || d.mem == hw::Mem::kParam);
  if (cfg_ == nullptr || !tile) {
    emit(in);
    return;
  }
  const std::size_t per_word = d.mem == hw::Mem::kWeight ? cfg_->array_cols : 1;
  const Span writes{.mem = d.mem, .lo = d.spad,
                    .hi = d.spad + d.rows * ((d.row_len + per_word - 1) / per_word)};
  emit(in, &writes);
}

void ProgramBuilder::load(const DmaOp& op) { dma(Opcode::kDmaLoad, op); }

void ProgramBuilder::store(const DmaOp& op) { dma(Opcode::kDmaStore, op); }

namespace {

/// The opcode a MatmulOp asks for: MATMUL_ACT with digit groups, MATMUL_HEADS with a head
/// size, else MATMUL. Throws std::invalid_argument for a mix of their layout fields.
Opcode matmul_opcode(const MatmulOp& op) {
  if (op.digits != 0 && (op.head_size != 0 || op.dst_stride != 0)) {
    throw std::invalid_argument(fmt::format(
        "MATMUL_ACT: expected no head_size or dst_stride (its rows are packed), found {} and {}",
        op.head_size, op.dst_stride));
  }
  if (op.digits == 0 && op.transpose) {
    throw std::invalid_argument("MATMUL: transpose needs digits (MATMUL_ACT), found digits 0");
  }
  if (op.head_size != 0 && op.dst_stride != 0) {
    throw std::invalid_argument(fmt::format(
        "MATMUL_HEADS: expected no dst_stride (its rows are packed), found {}", op.dst_stride));
  }
  return op.digits != 0 ? Opcode::kMatmulAct
         : op.head_size != 0 ? Opcode::kMatmulHeads
                             : Opcode::kMatmul;
}

}  // namespace

void ProgramBuilder::matmul(const MatmulOp& op) {
  const Opcode code = matmul_opcode(op);
  hw::Instr in = hw::make_instr(code, layer_);
  put(in, f::matmul::kOutBits, op.requant ? op.out_bits : 0u, "MATMUL out_bits");
  if (code == Opcode::kMatmulAct) {
    put(in, f::matmul_act::kDigits, op.digits, "MATMUL_ACT digits");
    put(in, f::matmul_act::kTranspose, op.transpose ? 1u : 0u, "MATMUL_ACT transpose");
  } else if (code == Opcode::kMatmulHeads) {
    put(in, f::matmul_heads::kHeadSize, op.head_size, "MATMUL_HEADS head_size");
  } else {
    put(in, f::matmul::kDstStride, op.dst_stride, "MATMUL dst_stride");
  }
  put(in, f::matmul::kAAddr, op.a_addr, "MATMUL a_addr");
  put(in, f::matmul::kWAddr, op.w_addr, "MATMUL w_addr");
  put(in, f::matmul::kDstAddr, op.dst, "MATMUL dst_addr");
  put(in, f::matmul::kRqAddr, op.rq_addr, "MATMUL rq_addr");
  put(in, f::matmul::kM, op.m, "MATMUL m");
  put(in, f::matmul::kK, op.k, "MATMUL k");
  put(in, f::matmul::kN, op.n, "MATMUL n");
  if (cfg_ == nullptr) {
    emit(in);
    return;
  }
  // W^T row kk (of every digit group) at w_addr + kk * ceil(n / C); column c's step at
  // rq_addr + c (docs/isa.md).
  const std::size_t groups = std::max<std::size_t>(op.digits, 1);
  const std::size_t w_words =
      groups * op.k * ((op.n + cfg_->array_cols - 1) / cfg_->array_cols);
  const InFlight reads{.unit = hw::Unit::kMatmul, .matmul = true,
                       .weight = {.mem = hw::Mem::kWeight, .lo = op.w_addr,
                                  .hi = op.w_addr + w_words},
                       .param = {.mem = hw::Mem::kParam, .lo = op.rq_addr,
                                 .hi = op.requant ? op.rq_addr + op.n : op.rq_addr}};
  emit(in, nullptr, &reads);
}

void ProgramBuilder::vector(const VectorOp& op) {
  // Every vector opcode uses RMSNORM's operand fields (SOFTMAX a subset of them).
  hw::Instr in = hw::make_instr(op.op, layer_);
  put(in, f::rmsnorm::kSrcAddr, op.src, "vector src_addr");
  put(in, f::rmsnorm::kSrc2Addr, op.src2, "vector src2_addr");
  put(in, f::rmsnorm::kDstAddr, op.dst, "vector dst_addr");
  put(in, f::rmsnorm::kParamAddr, op.param, "vector param_addr");
  put(in, f::rmsnorm::kLen, op.len, "vector len");
  put(in, f::rmsnorm::kRows, op.rows, "vector rows");
  if (op.op == Opcode::kRmsnorm || op.op == Opcode::kLayernorm) {
    put(in, f::rmsnorm::kGainFracBits, op.gain_frac_bits, "vector gain_frac_bits");
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
