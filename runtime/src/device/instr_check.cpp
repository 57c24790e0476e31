// SPDX-License-Identifier: Apache-2.0
// The operand check of one instruction, the C++ twin of rtl/top/psm_instr_check.sv: the same
// checks in the same order of precedence, so CpuDevice and the hardware report the same
// STATUS.error for every instruction (docs/isa.md "Errors").
#include "passim/device/instr_check.hpp"

#include <bit>
#include <string>

#include <fmt/format.h>

#include "passim/device/device.hpp"

namespace passim {

namespace f = hw::fields;
using hw::ErrorCode;
using hw::get_field;
using hw::Opcode;

std::string_view error_code_name(hw::ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kNone: return "none";
    case ErrorCode::kBadOpcode: return "bad_opcode";
    case ErrorCode::kBadOperand: return "bad_operand";
    case ErrorCode::kSpadRange: return "spad_range";
    case ErrorCode::kProgLen: return "prog_len";
    case ErrorCode::kProgAlign: return "prog_align";
    case ErrorCode::kBus: return "bus";
    case ErrorCode::kWatchdog: return "watchdog";
  }
  return "unknown";
}

DeviceError::DeviceError(hw::ErrorCode code, std::uint32_t index, const std::string& detail)
    : std::runtime_error(fmt::format(
          "{}: {} ({})",
          code == ErrorCode::kProgLen || code == ErrorCode::kProgAlign
              ? std::string("program")
              : fmt::format("program instruction {}", index),
          error_code_name(code), detail)),
      code_(code),
      index_(index) {}

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

/// "base + words <= depth": the operand's words lie inside a memory of `depth` words.
bool fits(std::uint64_t base, std::uint64_t words, std::uint64_t depth) {
  return base + words <= depth;
}

InstrCheck bad(std::string detail) { return {ErrorCode::kBadOperand, std::move(detail)}; }
InstrCheck range(std::string detail) { return {ErrorCode::kSpadRange, std::move(detail)}; }

/// Words of psm_matmul's private output buffer (rtl/top/psm_cfg_pkg.sv `make`): the next power
/// of two of every result the vector scratchpad can hold, plus acc_depth.
std::uint64_t mm_out_depth(const hw::HwConfig& c) {
  return std::bit_ceil(std::uint64_t(c.vector_depth * c.lanes / c.array_cols + c.acc_depth));
}

/// DMA_LOAD / DMA_STORE (one layout): elem_size per memory, rows and row_len >= 1, requant
/// only from the vector scratchpad; then rows * ceil(row_len / E) words from spad_addr.
InstrCheck check_dma(const hw::Instr& in, Opcode op, const hw::HwConfig& c) {
  const auto mem = get_field(in, f::dma_load::kMem);
  const auto esize = get_field(in, f::dma_load::kElemSize);
  const std::uint64_t rows = get_field(in, f::dma_load::kRows);
  const std::uint64_t row_len = get_field(in, f::dma_load::kRowLen);
  const char* name = op == Opcode::kDmaLoad ? "DMA_LOAD" : "DMA_STORE";
  struct Geometry {
    const char* mem, *esizes;
    std::uint64_t per_word, depth;
    bool esize_ok;
  };
  Geometry g{};
  switch (static_cast<hw::Mem>(mem)) {
    case hw::Mem::kInput: g = {"input", "0", c.array_rows, c.input_depth, esize == 0}; break;
    case hw::Mem::kWeight: g = {"weight", "0", c.array_cols, c.weight_depth, esize == 0}; break;
    case hw::Mem::kVector: g = {"vector", "0..2", c.lanes, c.vector_depth, esize != 3}; break;
    case hw::Mem::kParam: g = {"param", "3", 1, c.param_depth, esize == 3}; break;
    default: return bad(fmt::format("{} mem: expected 0..3, found {}", name, mem));
  }
  if (!g.esize_ok) {
    return bad(fmt::format("{} elem_size: expected {} for mem {}, found {}", name, g.esizes,
                           g.mem, esize));
  }
  if (rows == 0 || row_len == 0) {
    return bad(fmt::format("{} rows and row_len: expected >= 1, found {} and {}", name, rows,
                           row_len));
  }
  if (op == Opcode::kDmaStore && get_field(in, f::dma_store::kRequant) != 0 &&
      static_cast<hw::Mem>(mem) != hw::Mem::kVector) {
    return bad(fmt::format("DMA_STORE requant: expected mem vector, found mem {}", g.mem));
  }
  const std::uint64_t spad = get_field(in, f::dma_load::kSpadAddr);
  const std::uint64_t words = rows * ceil_div(row_len, g.per_word);
  if (!fits(spad, words, g.depth)) {
    return range(fmt::format("{} spad_addr {} + {} rows of {} words: expected <= {} words of "
                             "mem {}, found {}", name, spad, rows, words / rows, g.depth, g.mem,
                             spad + words));
  }
  return {};
}

/// What makes a MATMUL, MATMUL_HEADS or MATMUL_ACT result layout (matmul_result) invalid:
/// MATMUL_ACT digits of 0, a MATMUL_HEADS head_size of 0, a MATMUL dst_stride shorter than a
/// row. Empty when it is valid.
std::string matmul_layout_error(const hw::Instr& in, const MatmulResult& res) {
  const auto op = static_cast<hw::Opcode>(get_field(in, f::kOpcode));
  if (op == hw::Opcode::kMatmulAct && res.digits == 0) {
    return "MATMUL_ACT digits: expected 1..3, found 0";
  }
  if (op == hw::Opcode::kMatmulHeads && res.group == 0) {
    return "MATMUL_HEADS head_size: expected >= 1, found 0";
  }
  if (op == hw::Opcode::kMatmul && res.stride < res.row_words) {
    return fmt::format("MATMUL dst_stride: expected 0 or >= ceil(n / L) = {}, found {}",
                       res.row_words, res.stride);
  }
  return {};
}

/// MATMUL, MATMUL_HEADS, MATMUL_ACT: sizes, out_bits, the result's layout and the private
/// output buffer; then a, W^T (G digit groups each for MATMUL_ACT), the result rows and (with
/// out_bits) the n Requant steps.
InstrCheck check_matmul(const hw::Instr& in, const hw::HwConfig& c) {
  const std::uint64_t m = get_field(in, f::matmul::kM), k = get_field(in, f::matmul::kK);
  const std::uint64_t n = get_field(in, f::matmul::kN);
  const std::uint64_t out_bits = get_field(in, f::matmul::kOutBits);
  const auto op = static_cast<hw::Opcode>(get_field(in, f::kOpcode));
  const std::string_view name = hw::opcode_name(op);
  const MatmulResult res = matmul_result(in, c.lanes);
  const std::uint64_t g = res.digits;
  if (m == 0 || k == 0 || n == 0 || m > c.acc_depth || n > c.param_depth) {
    return bad(fmt::format("{} m, k, n: expected 1..{}, >= 1, 1..{}, found {}, {}, {}",
                           name, c.acc_depth, c.param_depth, m, k, n));
  }
  if (out_bits == 1 || out_bits > 32) {
    return bad(fmt::format("{} out_bits: expected 0 or 2..32, found {}", name, out_bits));
  }
  if (const std::string error = matmul_layout_error(in, res); !error.empty()) {
    return bad(error);
  }
  const std::uint64_t kt = ceil_div(k, c.array_rows), nt_w = ceil_div(n, c.array_cols);
  if (m * nt_w > mm_out_depth(c)) {
    return bad(fmt::format("{} m * ceil(n / C): expected <= {} (the output buffer), "
                           "found {}", name, mm_out_depth(c), m * nt_w));
  }
  const auto a = get_field(in, f::matmul::kAAddr), w = get_field(in, f::matmul::kWAddr);
  const auto dst = get_field(in, f::matmul::kDstAddr), rq = get_field(in, f::matmul::kRqAddr);
  if (!fits(a, m * g * kt, c.input_depth) || !fits(w, g * k * nt_w, c.weight_depth) ||
      !fits(dst, res.span(), c.vector_depth) ||
      (out_bits != 0 && !fits(rq, n, c.param_depth))) {
    return range(fmt::format("{} operands: a {}+{} of {}, W^T {}+{} of {}, dst {}+{} of {}, "
                             "rq {}+{} of {} words", name, a, m * g * kt, c.input_depth, w,
                             g * k * nt_w, c.weight_depth, dst, res.span(), c.vector_depth, rq,
                             out_bits != 0 ? n : 0, c.param_depth));
  }
  return {};
}

/// What a vector opcode touches besides `rows` rows of `len` at src and dst: false when an
/// operand leaves its memory (psm_instr_check's `vec_range_ok`).
bool vector_fits(const hw::Instr& in, Opcode op, const hw::HwConfig& c) {
  const std::uint64_t len = get_field(in, f::rmsnorm::kLen);
  const std::uint64_t rows = get_field(in, f::rmsnorm::kRows);
  const std::uint64_t src = get_field(in, f::rmsnorm::kSrcAddr);
  const std::uint64_t src2 = get_field(in, f::rmsnorm::kSrc2Addr);
  const std::uint64_t dst = get_field(in, f::rmsnorm::kDstAddr);
  const std::uint64_t prm = get_field(in, f::rmsnorm::kParamAddr);
  const std::uint64_t vd = c.vector_depth, pd = c.param_depth;
  const std::uint64_t w_len = ceil_div(len, c.lanes), w_rows = ceil_div(rows, c.lanes);
  const bool io = fits(src, rows * w_len, vd) && fits(dst, rows * w_len, vd);
  switch (op) {
    case Opcode::kSoftmax: return io;
    case Opcode::kAdd: return io && fits(src2, rows * w_len, vd);
    case Opcode::kMul: return io && fits(src2, rows * w_len, vd) && fits(prm, len, pd);
    case Opcode::kEmbed: return io && fits(prm, rows, pd);
    case Opcode::kSilu:
    case Opcode::kGelu: return io && fits(prm, 2, pd);
    case Opcode::kRmsnorm: return io && fits(src2, w_len, vd) && fits(prm, 1, pd);
    case Opcode::kLayernorm:
    case Opcode::kBatchnorm: return io && fits(src2, 2 * w_len, vd) && fits(prm, 1, pd);
    case Opcode::kRope: return io && fits(src2, 2 * ceil_div(len / 2, c.lanes), vd);
    case Opcode::kAttnScore:
      return fits(src, w_len, vd) && fits(src2, rows * w_len, vd) && fits(dst, w_rows, vd) &&
             fits(prm, 1, pd);
    case Opcode::kAttnValue:
      return fits(src, w_rows, vd) && fits(src2, rows * w_len, vd) && fits(dst, w_len, vd) &&
             fits(prm, 1, pd);
    default: return true;
  }
}

/// The vector opcodes (one operand layout): len and rows >= 1, gain_frac_bits, ROPE's length;
/// then every row and parameter entry the opcode touches.
InstrCheck check_vector(const hw::Instr& in, Opcode op, const hw::HwConfig& c) {
  const auto len = get_field(in, f::rmsnorm::kLen), rows = get_field(in, f::rmsnorm::kRows);
  const auto frac = get_field(in, f::rmsnorm::kGainFracBits);
  const std::string_view name = hw::opcode_name(op);
  if (len == 0 || rows == 0) {
    return bad(fmt::format("{} len and rows: expected >= 1, found {} and {}", name, len, rows));
  }
  if ((op == Opcode::kRmsnorm || op == Opcode::kLayernorm) && frac > 13) {
    return bad(fmt::format("{} gain_frac_bits: expected 0..13, found {}", name, frac));
  }
  if (op == Opcode::kRope && (len % 2 != 0 || len < 2)) {
    return bad(fmt::format("ROPE len: expected even and >= 2, found {}", len));
  }
  if (!vector_fits(in, op, c)) {
    return range(fmt::format("{} (src {}, src2 {}, dst {}, param {}, len {}, rows {}): an operand "
                             "leaves the {}-word vector scratchpad or the {}-entry param memory",
                             name, get_field(in, f::rmsnorm::kSrcAddr),
                             get_field(in, f::rmsnorm::kSrc2Addr),
                             get_field(in, f::rmsnorm::kDstAddr),
                             get_field(in, f::rmsnorm::kParamAddr), len, rows, c.vector_depth,
                             c.param_depth));
  }
  return {};
}

}  // namespace

InstrCheck check_instr(const hw::Instr& in, const hw::HwConfig& cfg) {
  const auto raw = get_field(in, f::kOpcode);
  const auto op = static_cast<Opcode>(raw);
  InstrCheck r;
  switch (hw::unit_of(op)) {
    case hw::Unit::kDma: r = check_dma(in, op, cfg); break;
    case hw::Unit::kMatmul: r = check_matmul(in, cfg); break;
    case hw::Unit::kVector: r = check_vector(in, op, cfg); break;
    default:
      if (op != Opcode::kNop && op != Opcode::kEnd && op != Opcode::kBarrier) {
        return {ErrorCode::kBadOpcode, fmt::format("opcode: expected one of the ISA's, found "
                                                   "{:#04x}", raw)};
      }
  }
  const auto op_class = get_field(in, f::kOpClass);
  if (r.ok() && op_class > std::uint32_t(hw::OpClass::kControl)) {
    return bad(fmt::format("op_class: expected 0..{}, found {}",
                           std::uint32_t(hw::OpClass::kControl), op_class));
  }
  return r;
}

}  // namespace passim
