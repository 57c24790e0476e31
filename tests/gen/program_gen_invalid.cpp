// SPDX-License-Identifier: Apache-2.0
// Invalid programs: a short valid program with exactly one thing broken, and the error
// (docs/isa.md "Errors") and instruction index that the hardware reports for it.
#include <algorithm>

#include "program_gen.hpp"

namespace passim::gen {

namespace f = hw::fields;
using hw::ErrorCode;
using hw::get_field;
using hw::Opcode;
using hw::set_field;

namespace {

/// One way to break an instruction: its description, the error it must raise, the edit.
struct Break {
  std::string what;
  ErrorCode code;
  hw::Field field;
  std::uint32_t value;
};

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

/// The ways to break a DMA instruction that a `cfg` accelerator rejects.
std::vector<Break> dma_breaks(const hw::Instr& in, const hw::HwConfig& cfg, std::uint64_t dram,
                              bool store) {
  const auto mem = static_cast<hw::Mem>(get_field(in, f::dma_load::kMem));
  const std::uint64_t rows = get_field(in, f::dma_load::kRows);
  const std::uint64_t row_len = get_field(in, f::dma_load::kRowLen);
  std::uint64_t per_word = 1, depth = cfg.param_depth;
  std::uint32_t bad_esize = 0;
  switch (mem) {
    case hw::Mem::kInput: per_word = cfg.array_rows, depth = cfg.input_depth, bad_esize = 1; break;
    case hw::Mem::kWeight:
      per_word = cfg.array_cols, depth = cfg.weight_depth, bad_esize = 2;
      break;
    case hw::Mem::kVector: per_word = cfg.lanes, depth = cfg.vector_depth, bad_esize = 3; break;
    default: break;
  }
  const auto spad = std::uint32_t(depth - rows * ceil_div(row_len, per_word) + 1);
  std::vector<Break> b = {
      {"DMA rows 0", ErrorCode::kBadOperand, f::dma_load::kRows, 0},
      {"DMA row_len 0", ErrorCode::kBadOperand, f::dma_load::kRowLen, 0},
      {"DMA elem_size for its mem", ErrorCode::kBadOperand, f::dma_load::kElemSize, bad_esize},
      {"DMA mem 4..7", ErrorCode::kBadOperand, f::dma_load::kMem, 4 + std::uint32_t(row_len % 4)},
      {"DMA spad_addr past its memory", ErrorCode::kSpadRange, f::dma_load::kSpadAddr, spad},
      {"DMA dram_addr past the DRAM", ErrorCode::kBus, f::dma_load::kDramAddr,
       std::uint32_t(dram + (row_len % 64))},
  };
  if (store && mem != hw::Mem::kVector) {
    b.push_back({"DMA_STORE requant from a memory other than vector", ErrorCode::kBadOperand,
                 f::dma_store::kRequant, 1});
  }
  return b;
}

std::vector<Break> matmul_breaks(const hw::Instr& in, const hw::HwConfig& cfg) {
  const std::uint64_t n = get_field(in, f::matmul::kN);
  std::vector<Break> b = {
      {"MATMUL m 0", ErrorCode::kBadOperand, f::matmul::kM, 0},
      {"MATMUL k 0", ErrorCode::kBadOperand, f::matmul::kK, 0},
      {"MATMUL n 0", ErrorCode::kBadOperand, f::matmul::kN, 0},
      {"MATMUL out_bits 1", ErrorCode::kBadOperand, f::matmul::kOutBits, 1},
      {"MATMUL out_bits above 32", ErrorCode::kBadOperand, f::matmul::kOutBits,
       33 + std::uint32_t(n % 31)},
      {"MATMUL a_addr past the input scratchpad", ErrorCode::kSpadRange, f::matmul::kAAddr,
       std::uint32_t(cfg.input_depth)},
  };
  if (cfg.acc_depth < 1023) {
    b.push_back({"MATMUL m above acc_depth", ErrorCode::kBadOperand, f::matmul::kM,
                 std::uint32_t(cfg.acc_depth + 1)});
  }
  if (cfg.param_depth < 2047) {
    b.push_back({"MATMUL n above param_depth", ErrorCode::kBadOperand, f::matmul::kN,
                 std::uint32_t(cfg.param_depth + 1)});
  }
  if (get_field(in, f::kOpcode) == std::uint32_t(Opcode::kMatmulHeads)) {
    b.push_back({"MATMUL_HEADS head_size 0", ErrorCode::kBadOperand,
                 f::matmul_heads::kHeadSize, 0});
  } else if (get_field(in, f::kOpcode) == std::uint32_t(Opcode::kMatmulAct)) {
    b.push_back({"MATMUL_ACT digits 0", ErrorCode::kBadOperand, f::matmul_act::kDigits, 0});
  } else if (ceil_div(n, cfg.lanes) >= 2) {
    b.push_back({"MATMUL dst_stride below ceil(n / L)", ErrorCode::kBadOperand,
                 f::matmul::kDstStride, 1});
  }
  return b;
}

std::vector<Break> vector_breaks(const hw::Instr& in, Opcode op, const hw::HwConfig& cfg) {
  std::vector<Break> b = {
      {"vector len 0", ErrorCode::kBadOperand, f::rmsnorm::kLen, 0},
      {"vector rows 0", ErrorCode::kBadOperand, f::rmsnorm::kRows, 0},
      {"vector src_addr past the scratchpad", ErrorCode::kSpadRange, f::rmsnorm::kSrcAddr,
       std::uint32_t(cfg.vector_depth)},
  };
  if (op == Opcode::kRmsnorm || op == Opcode::kLayernorm) {
    b.push_back({"norm gain_frac_bits above 13", ErrorCode::kBadOperand,
                 f::rmsnorm::kGainFracBits, 14 + (get_field(in, f::rmsnorm::kLen) % 2)});
  }
  if (op == Opcode::kRope) {
    b.push_back({"ROPE odd len", ErrorCode::kBadOperand, f::rope::kLen,
                 get_field(in, f::rope::kLen) - 1});
  }
  return b;
}

/// An opcode that is not in the ISA.
std::uint32_t unknown_opcode(std::uint32_t r) {
  const std::vector<Opcode>& ops = all_opcodes();
  for (std::uint32_t v = r % 256;; v = (v + 1) % 256) {
    if (std::none_of(ops.begin(), ops.end(), [v](Opcode o) { return std::uint32_t(o) == v; })) {
      return v;
    }
  }
}

}  // namespace

GenCase ProgramGen::next_invalid() {
  GenCase c = next_valid(6);
  c.invalid = true;
  if (chance(0.25)) {
    corrupt_program(c);
  } else {
    corrupt_field(c);
  }
  return c;
}

void ProgramGen::corrupt_field(GenCase& c) {
  const auto i = std::uint32_t(pick(0, c.len - 1));
  hw::Instr& in = c.image[i];
  const auto op = static_cast<Opcode>(get_field(in, f::kOpcode));
  std::vector<Break> breaks = {
      {"unknown opcode", ErrorCode::kBadOpcode, f::kOpcode,
       unknown_opcode(std::uint32_t(pick(0, 255)))},
      {"op_class above control", ErrorCode::kBadOperand, f::kOpClass, std::uint32_t(pick(7, 15))},
  };
  std::vector<Break> more;
  switch (hw::unit_of(op)) {
    case hw::Unit::kDma:
      more = dma_breaks(in, cfg_, layout_.bytes, op == Opcode::kDmaStore);
      break;
    case hw::Unit::kMatmul: more = matmul_breaks(in, cfg_); break;
    case hw::Unit::kVector: more = vector_breaks(in, op, cfg_); break;
    default: break;
  }
  breaks.insert(breaks.end(), more.begin(), more.end());
  const Break& b = breaks[pick(0, breaks.size() - 1)];
  set_field(in, b.field, b.value);
  c.expected = b.code;
  c.expected_index = i;
  c.corruption = b.what + " in instruction " + std::to_string(i) + " (" +
                 std::string(hw::opcode_name(op)) + ")";
}

void ProgramGen::corrupt_program(GenCase& c) {
  switch (pick(0, 4)) {
    case 0:
      c.len = 0;
      c.expected = ErrorCode::kProgLen;
      c.corruption = "PROG_LEN 0";
      break;
    case 1:
      c.len = std::uint32_t(cfg_.prog_depth + pick(1, 100));
      c.expected = ErrorCode::kProgLen;
      c.corruption = "PROG_LEN above prog_depth";
      break;
    case 2:
      c.prog_addr += pick(1, 15);
      c.expected = ErrorCode::kProgAlign;
      c.corruption = "PROG_ADDR not 16-byte aligned";
      break;
    case 3: {  // only the first j instructions lie inside DRAM
      const auto j = std::uint32_t(pick(0, c.len - 1));
      c.image.resize(j);
      c.write_addr = c.prog_addr = layout_.bytes - 16 * std::uint64_t{j};
      c.expected = ErrorCode::kBus;
      c.expected_index = j;
      c.corruption = "program fetch past the DRAM at instruction " + std::to_string(j);
      break;
    }
    default:
      c.image.back() = hw::make_instr(Opcode::kNop, 0);
      c.expected = ErrorCode::kBadOpcode;
      c.expected_index = c.len;
      c.corruption = "no END: the run passes PROG_LEN";
      break;
  }
}

}  // namespace passim::gen
