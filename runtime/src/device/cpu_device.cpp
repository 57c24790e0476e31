// SPDX-License-Identifier: Apache-2.0
// Reference executor of the accelerator ISA (docs/isa.md) built from the golden kernels: the
// controller (rtl/top/psm_controller.sv), the DMA (rtl/top/psm_dma.sv) and the matmul unit
// (rtl/matmul/psm_matmul.sv). The vector unit's opcodes are in cpu_vector.cpp.
#include "passim/device/cpu_device.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/compiler/program.hpp"
#include "passim/device/instr_check.hpp"
#include "passim/kernels/matmul.hpp"

namespace passim {

namespace f = hw::fields;
using hw::get_field;

namespace {
std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }
}  // namespace

void CpuDevice::fail(std::uint32_t index, const std::string& what, hw::ErrorCode code) {
  throw DeviceError(code, index, what);
}

std::uint64_t instr_passes(const hw::Instr& in, const hw::HwConfig& cfg) noexcept {
  const auto op = static_cast<hw::Opcode>(get_field(in, f::kOpcode));
  const std::uint64_t rows = get_field(in, f::rmsnorm::kRows);  // every vector opcode
  switch (op) {
    case hw::Opcode::kDmaLoad:
    case hw::Opcode::kDmaStore:
      return get_field(in, f::dma_load::kRows);
    case hw::Opcode::kMatmul:
    case hw::Opcode::kMatmulHeads:
    case hw::Opcode::kMatmulAct:  // one pass per weight tile of every digit group
      return matmul_result(in, cfg.lanes).digits *
             ceil_div(get_field(in, f::matmul::kK), cfg.array_rows) *
             ceil_div(get_field(in, f::matmul::kN), cfg.array_cols);
    case hw::Opcode::kSoftmax:
      return (get_field(in, f::softmax::kOnline) != 0 ? 2 : 3) * rows;
    case hw::Opcode::kRmsnorm:
      return 2 * rows;
    case hw::Opcode::kLayernorm:
      return 3 * rows;
    case hw::Opcode::kBatchnorm:
    case hw::Opcode::kSilu:
    case hw::Opcode::kGelu:
    case hw::Opcode::kRope:
    case hw::Opcode::kAdd:
    case hw::Opcode::kMul:
    case hw::Opcode::kEmbed:
    case hw::Opcode::kAttnScore:  // one per cached position (`rows`)
    case hw::Opcode::kAttnValue:
      return rows;
    default:
      return 0;  // NOP, END, BARRIER
  }
}

MatmulResult matmul_result(const hw::Instr& in, std::size_t lanes) noexcept {
  const std::uint64_t m = get_field(in, f::matmul::kM), n = get_field(in, f::matmul::kN);
  const auto op = static_cast<hw::Opcode>(get_field(in, f::kOpcode));
  const std::uint64_t field = get_field(in, f::matmul::kDstStride);  // head_size when heads
  if (op == hw::Opcode::kMatmulAct) {  // packed rows, transposed: n rows of m
    const bool trans = get_field(in, f::matmul_act::kTranspose) != 0;
    const std::uint64_t rows = trans ? n : m, len = trans ? m : n;
    return {.digits = get_field(in, f::matmul_act::kDigits), .transposed = trans, .rows = rows,
            .row_len = len, .group = len, .stride = ceil_div(len, lanes),
            .row_words = ceil_div(len, lanes)};
  }
  if (op == hw::Opcode::kMatmulHeads) {  // packed rows of ceil(n / hs) heads of ceil(hs / L)
    const std::uint64_t words = field == 0 ? 0 : ceil_div(n, field) * ceil_div(field, lanes);
    return {.rows = m, .row_len = n, .group = field, .stride = words, .row_words = words};
  }
  const std::uint64_t row = ceil_div(n, lanes);
  return {.rows = m, .row_len = n, .group = n, .stride = field != 0 ? field : row,
          .row_words = row};
}

CpuDevice::CpuDevice(const hw::HwConfig& cfg, std::uint64_t dram_bytes)
    : cfg_(cfg),
      dram_(dram_bytes, 0),
      input_(cfg.input_depth * cfg.array_rows, 0),
      weight_(cfg.weight_depth * cfg.array_cols, 0),
      vector_(cfg.vector_depth * cfg.lanes, 0),
      param_(cfg.param_depth, 0) {}

void CpuDevice::write_dram(std::uint64_t addr, std::span<const std::uint8_t> bytes) {
  if (addr > dram_.size() || bytes.size() > dram_.size() - addr) {
    throw std::out_of_range(fmt::format("DRAM write of {} bytes at {:#x} outside {} bytes",
                                        bytes.size(), addr, dram_.size()));
  }
  std::copy(bytes.begin(), bytes.end(), dram_.begin() + std::ptrdiff_t(addr));
}

void CpuDevice::read_dram(std::uint64_t addr, std::span<std::uint8_t> bytes) const {
  if (addr > dram_.size() || bytes.size() > dram_.size() - addr) {
    throw std::out_of_range(fmt::format("DRAM read of {} bytes at {:#x} outside {} bytes",
                                        bytes.size(), addr, dram_.size()));
  }
  std::copy_n(dram_.begin() + std::ptrdiff_t(addr), bytes.size(), bytes.begin());
}

std::vector<hw::Instr> CpuDevice::fetch(std::uint64_t prog_addr, std::uint32_t len) const {
  // The controller checks PROG_LEN, then PROG_ADDR, then copies the whole program into its
  // program memory in 8-byte beats before the first instruction runs (psm_controller.sv):
  // a program that overwrites itself in DRAM still runs as it was at the start.
  if (len == 0 || len > cfg_.prog_depth) {
    throw DeviceError(hw::ErrorCode::kProgLen, 0,
                      fmt::format("PROG_LEN: expected 1..{} (the {} program memory), found {}",
                                  cfg_.prog_depth, cfg_.name, len));
  }
  if (prog_addr % 16 != 0) {
    throw DeviceError(hw::ErrorCode::kProgAlign, 0,
                      fmt::format("PROG_ADDR: expected a multiple of 16, found {:#x}", prog_addr));
  }
  std::vector<hw::Instr> prog(len);
  for (std::uint32_t i = 0; i < len; ++i) {
    const std::uint64_t addr = prog_addr + std::uint64_t{i} * sizeof(hw::Instr);
    if (addr + sizeof(hw::Instr) > dram_.size()) {  // the beat the memory port refuses
      throw DeviceError(hw::ErrorCode::kBus, i,
                        fmt::format("program fetch at DRAM byte {:#x}: past the {}-byte DRAM",
                                    addr, dram_.size()));
    }
    std::memcpy(prog[i].data(), dram_.data() + addr, sizeof(hw::Instr));
  }
  return prog;
}

RunStats CpuDevice::run(std::uint64_t prog_addr, std::uint32_t len) {
  const std::vector<hw::Instr> prog = fetch(prog_addr, len);
  // The counters without timing: instret, passes_<class> and saturated (docs/isa.md).
  RunStats stats;
  stats.counters.assign(hw::kNumCounters, 0);
  auto& cnt = stats.counters;
  const SaturationTally saturated;
  for (std::uint32_t i = 0; i < len; ++i) {
    const hw::Instr& in = prog[i];
    if (const InstrCheck c = check_instr(in, cfg_); !c.ok()) {  // psm_instr_check.sv
      throw DeviceError(c.code, i, c.detail);
    }
    ++stats.instructions;
    cnt[std::size_t(hw::Counter::kInstret)] = stats.instructions;
    if (observer_ != nullptr) {
      observer_->before(in, i, *this);
    }
    if (static_cast<hw::Opcode>(get_field(in, f::kOpcode)) == hw::Opcode::kEnd) {
      cnt[std::size_t(hw::Counter::kSaturated)] = saturated.count();
      return stats;
    }
    const std::uint64_t clamped = saturated.count();
    execute(in, i);
    if (observer_ != nullptr) {
      observer_->after(in, i, saturated.count() - clamped);
    }
    const std::size_t op_class = get_field(in, f::kOpClass);  // <= control: checked
    cnt[std::size_t(hw::Counter::kPassesMatmul) + op_class] += instr_passes(in, cfg_);
  }
  throw DeviceError(hw::ErrorCode::kBadOpcode, len,
                    fmt::format("ran past PROG_LEN = {} without END", len));
}

void CpuDevice::execute(const hw::Instr& in, std::uint32_t index) {
  const auto op = static_cast<hw::Opcode>(get_field(in, f::kOpcode));
  try {
    switch (hw::unit_of(op)) {
      case hw::Unit::kDma:
        return dma(in, op == hw::Opcode::kDmaLoad, index);
      case hw::Unit::kMatmul:
        return matmul(in, index);
      case hw::Unit::kVector:
        return vector_unit(in, op, index);
      default:
        if (op == hw::Opcode::kNop || op == hw::Opcode::kBarrier) {
          return;  // the units run in program order here: a BARRIER has nothing to wait for
        }
        fail(index, fmt::format("unknown opcode {:#x}", get_field(in, f::kOpcode)),
             hw::ErrorCode::kBadOpcode);
    }
  } catch (const std::invalid_argument& e) {
    // A kernel's precondition that the data broke (a norm's eps too large for its reciprocal
    // square root): the hardware has no check for it (docs/isa.md "Errors").
    fail(index, fmt::format("{}: {}", hw::opcode_name(op), e.what()));
  }
}

std::int64_t CpuDevice::slot(hw::Mem mem, std::size_t i) const {
  switch (mem) {
    case hw::Mem::kInput: return input_[i];
    case hw::Mem::kWeight: return weight_[i];
    case hw::Mem::kVector: return vector_[i];
    default: return std::int64_t(param_[i]);
  }
}

void CpuDevice::set_slot(hw::Mem mem, std::size_t i, std::int64_t v) {
  switch (mem) {  // each memory keeps the low bits its elements hold
    case hw::Mem::kInput: input_[i] = static_cast<std::int8_t>(v); break;
    case hw::Mem::kWeight: weight_[i] = static_cast<std::int8_t>(v); break;
    case hw::Mem::kVector: vector_[i] = static_cast<std::int32_t>(v); break;
    default: param_[i] = static_cast<std::uint64_t>(v); break;
  }
}

void CpuDevice::dma(const hw::Instr& in, bool load, std::uint32_t index) {
  // DMA_LOAD and DMA_STORE share one field layout. A row moves between DRAM and whole words
  // of the memory: loads sign-extend each element and zero the tail of the last word.
  const auto mem = static_cast<hw::Mem>(get_field(in, f::dma_load::kMem));
  const std::size_t esize = std::size_t{1} << get_field(in, f::dma_load::kElemSize);
  const std::uint64_t dram = get_field(in, f::dma_load::kDramAddr);
  const std::size_t spad = get_field(in, f::dma_load::kSpadAddr);
  const std::size_t rows = get_field(in, f::dma_load::kRows);
  const std::size_t row_len = get_field(in, f::dma_load::kRowLen);
  const std::uint64_t stride = get_field(in, f::dma_load::kDramStride);
  // check_instr passed: elem_size fits mem, rows and row_len >= 1, the scratchpad rows fit.
  // DMA_STORE `requant`: each element becomes requantize(lane, param[0], 8 << elem_size), the
  // entry's mult and shift only (docs/isa.md).
  const bool requant = !load && get_field(in, f::dma_store::kRequant) != 0;
  const Requant store_rq = requant ? param_rq(0, index) : Requant{};
  check_dram_rows(dram, rows, row_len * esize, stride, index);
  const std::size_t per_word = geometry(mem, index).per_word;
  const std::size_t words = ceil_div(row_len, per_word);
  std::vector<std::uint8_t> bytes(row_len * esize);
  const int sh = int(64 - 8 * esize);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t slot0 = (spad + r * words) * per_word;
    if (load) {
      read_dram(dram + r * stride, bytes);
      for (std::size_t i = 0; i < words * per_word; ++i) {
        std::uint64_t u = 0;  // little-endian, sign-extended
        if (i < row_len) {
          std::memcpy(&u, bytes.data() + i * esize, esize);
        }
        set_slot(mem, slot0 + i, esize == 8 ? std::int64_t(u) : (std::int64_t(u << sh) >> sh));
      }
      continue;
    }
    for (std::size_t i = 0; i < row_len; ++i) {
      std::int64_t v = slot(mem, slot0 + i);
      if (requant) {
        v = requantize_result(static_cast<std::int32_t>(v), store_rq, int(8 * esize));
      }
      std::memcpy(bytes.data() + i * esize, &v, esize);  // truncates (little-endian)
    }
    write_dram(dram + r * stride, bytes);
  }
}

void CpuDevice::check_dram_rows(std::uint64_t addr, std::size_t rows, std::size_t row_bytes,
                                std::uint64_t stride, std::uint32_t index) const {
  // rows >= 1, and every operand is at most 32 bits wide: the last row's end fits 64 bits.
  const std::uint64_t end = addr + (rows - 1) * stride + row_bytes;
  if (end > dram_.size()) {
    fail(index, fmt::format("DMA from DRAM byte {:#x} (rows {}, {} bytes each, {} bytes apart) "
                            "ends at byte {:#x}, past the {}-byte DRAM",
                            addr, rows, row_bytes, stride, end, dram_.size()),
         hw::ErrorCode::kBus);
  }
}

CpuDevice::Geometry CpuDevice::geometry(hw::Mem mem, std::uint32_t index) const {
  switch (mem) {
    case hw::Mem::kInput: return {cfg_.array_rows, cfg_.input_depth};
    case hw::Mem::kWeight: return {cfg_.array_cols, cfg_.weight_depth};
    case hw::Mem::kVector: return {cfg_.lanes, cfg_.vector_depth};
    case hw::Mem::kParam: return {1, cfg_.param_depth};
    default: fail(index, fmt::format("DMA to unknown memory {}", int(mem)));
  }
}

std::uint64_t CpuDevice::param_u64(std::size_t entry, std::uint32_t index) const {
  if (entry >= param_.size()) {
    fail(index, fmt::format("param entry {} outside {} entries", entry, param_.size()),
         hw::ErrorCode::kSpadRange);
  }
  return param_[entry];
}

Requant CpuDevice::param_rq(std::size_t entry, std::uint32_t index) const {
  Requant rq = decode_param(param_u64(entry, index));
  rq.bias = 0;  // only the MATMUL read-out honours the bias bits (param_rq_biased)
  return rq;
}

Requant CpuDevice::param_rq_biased(std::size_t entry, std::uint32_t index) const {
  return decode_param(param_u64(entry, index));
}

std::vector<std::int32_t> CpuDevice::vec_row(std::size_t addr, std::size_t n,
                                             std::uint32_t index) const {
  if ((addr + vec_words(n)) > cfg_.vector_depth) {
    fail(index, fmt::format("vector row at word {} of {} elements leaves the scratchpad",
                            addr, n), hw::ErrorCode::kSpadRange);
  }
  const auto* p = vector_.data() + addr * cfg_.lanes;
  return {p, p + n};
}

std::vector<std::int16_t> CpuDevice::row16(std::size_t addr, std::size_t n,
                                            std::uint32_t index) const {
  const std::vector<std::int32_t> v = vec_row(addr, n, index);
  return {v.begin(), v.end()};  // the low 16 bits of each lane, as the units read them
}

template <typename T>
void CpuDevice::write_row(std::size_t addr, std::span<const T> v, std::uint32_t index) {
  if ((addr + vec_words(v.size())) > cfg_.vector_depth) {
    fail(index, fmt::format("vector row at word {} of {} elements leaves the scratchpad",
                            addr, v.size()), hw::ErrorCode::kSpadRange);
  }
  std::copy(v.begin(), v.end(), vector_.begin() + std::ptrdiff_t(addr * cfg_.lanes));
}

template void CpuDevice::write_row<std::int8_t>(std::size_t, std::span<const std::int8_t>,
                                                std::uint32_t);
template void CpuDevice::write_row<std::int16_t>(std::size_t, std::span<const std::int16_t>,
                                                 std::uint32_t);
template void CpuDevice::write_row<std::int32_t>(std::size_t, std::span<const std::int32_t>,
                                                 std::uint32_t);

void CpuDevice::matmul(const hw::Instr& in, std::uint32_t index) {
  // a (m, G * k) and w (n, G * k) gathered from their scratchpad layouts (G digit groups, 1
  // but for MATMUL_ACT; docs/isa.md), then the golden kernel.
  const std::size_t m = get_field(in, f::matmul::kM), k = get_field(in, f::matmul::kK);
  const std::size_t n = get_field(in, f::matmul::kN);
  const std::size_t a_addr = get_field(in, f::matmul::kAAddr);
  const std::size_t w_addr = get_field(in, f::matmul::kWAddr);
  const std::size_t g_n = matmul_result(in, cfg_.lanes).digits;
  const std::size_t a_words = ceil_div(k, cfg_.array_rows);
  const std::size_t w_words = ceil_div(n, cfg_.array_cols);
  std::vector<std::int8_t> a(m * g_n * k), w(n * g_n * k);
  for (std::size_t row = 0; row < m * g_n; ++row) {  // row r * G + g: group g of a's row r
    for (std::size_t i = 0; i < k; ++i) {
      a[row * k + i] = input_[(a_addr + row * a_words) * cfg_.array_rows + i];
    }
  }
  for (std::size_t g = 0; g < g_n; ++g) {
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t word = w_addr + (g * k + i) * w_words;  // W^T row i of group g
      for (std::size_t c = 0; c < n; ++c) {
        w[(c * g_n + g) * k + i] = weight_[word * cfg_.array_cols + c];
      }
    }
  }
  std::vector<std::int32_t> acc(m * n);
  kernels::matmul_digits_i8(a, w, acc, m, k, n, g_n);
  matmul_out(in, acc, index);
}

void CpuDevice::matmul_out(const hw::Instr& in, std::span<std::int32_t> acc,
                           std::uint32_t index) {
  // Requantised per column, then written as matmul_result() lays it out: MATMUL_ACT's
  // transposed result is the transpose of acc.
  const std::size_t m = get_field(in, f::matmul::kM), n = get_field(in, f::matmul::kN);
  const std::size_t dst = get_field(in, f::matmul::kDstAddr);
  const std::size_t rq = get_field(in, f::matmul::kRqAddr);
  const int out_bits = int(get_field(in, f::matmul::kOutBits));
  if (out_bits != 0) {
    for (std::size_t i = 0; i < m * n; ++i) {
      acc[i] = requantize_result(acc[i], param_rq_biased(rq + i % n, index), out_bits);
    }
  }
  const MatmulResult res = matmul_result(in, cfg_.lanes);
  std::vector<std::int32_t> out(acc.begin(), acc.end());  // (rows, row_len) row-major
  if (res.transposed) {
    for (std::size_t r = 0; r < m; ++r) {
      for (std::size_t c = 0; c < n; ++c) {
        out[c * m + r] = acc[r * n + c];
      }
    }
  }
  const std::span<const std::int32_t> all(out);
  for (std::size_t r = 0; r < res.rows; ++r) {
    for (std::size_t c0 = 0; c0 < res.row_len; c0 += res.group) {
      const std::size_t cols = std::min<std::size_t>(res.group, res.row_len - c0);
      write_row<std::int32_t>(dst + r * res.stride + (c0 / res.group) * vec_words(res.group),
                              all.subspan(r * res.row_len + c0, cols), index);
    }
  }
}

}  // namespace passim
