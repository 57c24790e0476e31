// SPDX-License-Identifier: Apache-2.0
// Reference executor of the accelerator ISA (docs/isa.md) built from the golden kernels.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/device/cpu_device.hpp"
#include "passim/kernels/matmul.hpp"
#include "passim/kernels/rmsnorm.hpp"
#include "passim/kernels/layernorm.hpp"
#include "passim/kernels/batchnorm.hpp"
#include "passim/kernels/softmax.hpp"
#include "passim/kernels/silu.hpp"
#include "passim/kernels/gelu.hpp"
#include "passim/kernels/rope.hpp"
#include "passim/kernels/eltwise.hpp"

namespace passim {

namespace f = hw::fields;
using hw::get_field;

namespace {
[[noreturn]] void fail(std::uint32_t index, const std::string& what) {
  throw std::runtime_error(fmt::format("program instruction {}: {}", index, what));
}
std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

/// A parameter entry as a Requant step (docs/isa.md "params"): mult [30:0], shift [37:32] and
/// the signed bias [63:38] (arithmetic shift: C++20 two's complement).
Requant decode_param(std::uint64_t p) {
  return {static_cast<std::int32_t>(p & 0x7FFF'FFFFu), static_cast<std::int32_t>((p >> 32) & 63),
          static_cast<std::int32_t>(static_cast<std::int64_t>(p) >> 38)};
}
}  // namespace

std::uint64_t instr_passes(const hw::Instr& in, const hw::HwConfig& cfg) noexcept {
  const auto op = static_cast<hw::Opcode>(get_field(in, f::kOpcode));
  const std::uint64_t rows = get_field(in, f::rmsnorm::kRows);  // every vector opcode
  switch (op) {
    case hw::Opcode::kDmaLoad:
    case hw::Opcode::kDmaStore:
      return get_field(in, f::dma_load::kRows);
    case hw::Opcode::kMatmul:
      return ceil_div(get_field(in, f::matmul::kK), cfg.array_rows) *
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

RunStats CpuDevice::run(std::uint64_t prog_addr, std::uint32_t len) {
  if (len > cfg_.prog_depth) {
    throw std::runtime_error(fmt::format("program of {} instructions exceeds the {} program "
                                         "memory of {} instructions", len, cfg_.name,
                                         cfg_.prog_depth));
  }
  RunStats stats;
  for (std::uint32_t i = 0; i < len; ++i) {
    hw::Instr in{};
    read_dram(prog_addr + std::uint64_t(i) * 16,
              {reinterpret_cast<std::uint8_t*>(in.data()), sizeof in});
    ++stats.instructions;
    if (static_cast<hw::Opcode>(get_field(in, f::kOpcode)) == hw::Opcode::kEnd) {
      return stats;
    }
    execute(in, i);
  }
  fail(len, "program ended without END");
}

void CpuDevice::execute(const hw::Instr& in, std::uint32_t index) {
  const auto op = static_cast<hw::Opcode>(get_field(in, f::kOpcode));
  switch (op) {
    case hw::Opcode::kNop:
    case hw::Opcode::kBarrier:
      return;
    case hw::Opcode::kDmaLoad:
      return dma(in, true, index);
    case hw::Opcode::kDmaStore:
      return dma(in, false, index);
    case hw::Opcode::kMatmul:
      return matmul(in, index);
    case hw::Opcode::kSoftmax:
    case hw::Opcode::kRmsnorm:
    case hw::Opcode::kSilu:
    case hw::Opcode::kRope:
    case hw::Opcode::kAdd:
    case hw::Opcode::kMul:
    case hw::Opcode::kEmbed:
    case hw::Opcode::kAttnScore:
    case hw::Opcode::kAttnValue:
    case hw::Opcode::kLayernorm:
    case hw::Opcode::kBatchnorm:
    case hw::Opcode::kGelu:
      return vector_op(in, op, index);
    default:
      fail(index, fmt::format("unknown opcode {:#x}", get_field(in, f::kOpcode)));
  }
}

void CpuDevice::dma(const hw::Instr& in, bool load, std::uint32_t index) {
  // dma_load and dma_store share one field layout.
  const auto mem = static_cast<hw::Mem>(get_field(in, f::dma_load::kMem));
  const std::size_t esize = std::size_t{1} << get_field(in, f::dma_load::kElemSize);
  const std::uint64_t dram = get_field(in, f::dma_load::kDramAddr);
  const std::size_t spad = get_field(in, f::dma_load::kSpadAddr);
  const std::size_t rows = get_field(in, f::dma_load::kRows);
  const std::size_t row_len = get_field(in, f::dma_load::kRowLen);
  const std::uint64_t stride = get_field(in, f::dma_load::kDramStride);
  // DMA_STORE `requant`: each element becomes requantize(lane, param[0], 8 << elem_size), the
  // entry's mult and shift only (docs/isa.md).
  const bool requant = !load && get_field(in, f::dma_store::kRequant) != 0;
  if (requant && (mem != hw::Mem::kVector || esize > 4)) {
    fail(index, fmt::format("DMA_STORE requant needs mem = vector and elem_size <= 2 "
                            "(mem {}, elem_size {})",
                            int(mem), get_field(in, f::dma_load::kElemSize)));
  }
  const Requant store_rq = requant ? param_rq(0, index) : Requant{};
  std::size_t per_word = 0;
  std::size_t depth = 0;
  switch (mem) {
    case hw::Mem::kInput: per_word = cfg_.array_rows; depth = cfg_.input_depth; break;
    case hw::Mem::kWeight: per_word = cfg_.array_cols; depth = cfg_.weight_depth; break;
    case hw::Mem::kVector: per_word = cfg_.lanes; depth = cfg_.vector_depth; break;
    case hw::Mem::kParam: per_word = 1; depth = cfg_.param_depth; break;
    default: fail(index, fmt::format("DMA to unknown memory {}", int(mem)));
  }
  const std::size_t words = ceil_div(row_len, per_word);
  if (spad + rows * words > depth) {
    fail(index, fmt::format("DMA rows {}..{} past the end of a {}-word memory", spad,
                            spad + rows * words, depth));
  }
  for (std::size_t r = 0; r < rows; ++r) {
    std::vector<std::uint8_t> bytes(row_len * esize);
    const std::uint64_t at = dram + r * stride;
    if (load) {
      read_dram(at, bytes);
    }
    for (std::size_t i = 0; i < words * per_word; ++i) {
      const std::size_t slot = (spad + r * words) * per_word + i;
      if (load) {
        std::int64_t v = 0;  // little-endian, sign-extended; tail of the last word is zero
        if (i < row_len) {
          std::uint64_t u = 0;
          std::memcpy(&u, bytes.data() + i * esize, esize);
          const int sh = int(64 - 8 * esize);
          v = esize == 8 ? std::int64_t(u) : (std::int64_t(u << sh) >> sh);
        }
        switch (mem) {
          case hw::Mem::kInput: input_[slot] = static_cast<std::int8_t>(v); break;
          case hw::Mem::kWeight: weight_[slot] = static_cast<std::int8_t>(v); break;
          case hw::Mem::kVector: vector_[slot] = static_cast<std::int32_t>(v); break;
          default: param_[slot] = static_cast<std::uint64_t>(v); break;
        }
      } else if (i < row_len) {
        std::int64_t v = 0;
        switch (mem) {
          case hw::Mem::kInput: v = input_[slot]; break;
          case hw::Mem::kWeight: v = weight_[slot]; break;
          case hw::Mem::kVector: v = vector_[slot]; break;
          default: v = std::int64_t(param_[slot]); break;
        }
        if (requant) {
          v = requantize(static_cast<std::int32_t>(v), store_rq, int(8 * esize));
        }
        std::memcpy(bytes.data() + i * esize, &v, esize);  // truncates (little-endian)
      }
    }
    if (!load) {
      write_dram(at, bytes);
    }
  }
}

std::uint64_t CpuDevice::param_u64(std::size_t entry, std::uint32_t index) const {
  if (entry >= param_.size()) {
    fail(index, fmt::format("param entry {} outside {} entries", entry, param_.size()));
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
                            addr, n));
  }
  const auto* p = vector_.data() + addr * cfg_.lanes;
  return {p, p + n};
}

void CpuDevice::write_vec_row(std::size_t addr, std::span<const std::int32_t> v,
                              std::uint32_t index) {
  if ((addr + vec_words(v.size())) > cfg_.vector_depth) {
    fail(index, fmt::format("vector row at word {} of {} elements leaves the scratchpad",
                            addr, v.size()));
  }
  std::copy(v.begin(), v.end(), vector_.begin() + std::ptrdiff_t(addr * cfg_.lanes));
}

void CpuDevice::matmul(const hw::Instr& in, std::uint32_t index) {
  const std::size_t m = get_field(in, f::matmul::kM), k = get_field(in, f::matmul::kK);
  const std::size_t n = get_field(in, f::matmul::kN);
  const std::size_t a_addr = get_field(in, f::matmul::kAAddr);
  const std::size_t w_addr = get_field(in, f::matmul::kWAddr);
  const std::size_t dst = get_field(in, f::matmul::kDstAddr);
  const std::size_t rq = get_field(in, f::matmul::kRqAddr);
  const int out_bits = int(get_field(in, f::matmul::kOutBits));
  const bool requant_en = get_field(in, f::matmul::kRequantEn) != 0;
  const std::size_t a_words = ceil_div(k, cfg_.array_rows);
  const std::size_t w_words = ceil_div(n, cfg_.array_cols);
  if (m == 0 || k == 0 || n == 0 || (requant_en && (out_bits < 2 || out_bits > 32))) {
    fail(index, fmt::format("MATMUL m={} k={} n={} out_bits={}", m, k, n, out_bits));
  }
  if (a_addr + m * a_words > cfg_.input_depth || w_addr + k * w_words > cfg_.weight_depth) {
    fail(index, "MATMUL operands leave the input or weight scratchpad");
  }
  // Gather a (m, k) and w (n, k) from their scratchpad layouts, then the golden kernel.
  std::vector<std::int8_t> a(m * k), w(n * k);
  for (std::size_t r = 0; r < m; ++r) {
    for (std::size_t i = 0; i < k; ++i) {
      a[r * k + i] = input_[(a_addr + r * a_words) * cfg_.array_rows + i];
    }
  }
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t c = 0; c < n; ++c) {
      w[c * k + i] = weight_[(w_addr + i * w_words) * cfg_.array_cols + c];
    }
  }
  std::vector<std::int32_t> acc(m * n);
  kernels::matmul_i8(a, w, acc, m, k, n);
  for (std::size_t r = 0; r < m; ++r) {
    std::vector<std::int32_t> row(acc.begin() + std::ptrdiff_t(r * n),
                                  acc.begin() + std::ptrdiff_t((r + 1) * n));
    if (requant_en) {
      for (std::size_t c = 0; c < n; ++c) {
        row[c] = requantize(row[c], param_rq_biased(rq + c, index), out_bits);
      }
    }
    write_vec_row(dst + r * vec_words(n), row, index);
  }
}

void CpuDevice::vector_op(const hw::Instr& in, hw::Opcode op, std::uint32_t index) {
  // Every vector opcode shares this operand layout (docs/isa.md).
  const std::size_t src = get_field(in, f::rmsnorm::kSrcAddr);
  const std::size_t src2 = get_field(in, f::rmsnorm::kSrc2Addr);
  const std::size_t dst = get_field(in, f::rmsnorm::kDstAddr);
  const std::size_t prm = get_field(in, f::rmsnorm::kParamAddr);
  const std::size_t len = get_field(in, f::rmsnorm::kLen);
  const std::size_t rows = get_field(in, f::rmsnorm::kRows);
  if (len == 0 || rows == 0) {
    fail(index, fmt::format("{} with len {} and rows {} (both must be >= 1)",
                            hw::opcode_name(op), len, rows));
  }
  const int gain_frac_bits = int(get_field(in, f::rmsnorm::kGainFracBits));
  if ((op == hw::Opcode::kRmsnorm || op == hw::Opcode::kLayernorm) && gain_frac_bits > 13) {
    fail(index, fmt::format("{} gain_frac_bits {} (at most 13)", hw::opcode_name(op),
                            gain_frac_bits));
  }
  auto to16 = [](const std::vector<std::int32_t>& v) {
    return std::vector<std::int16_t>(v.begin(), v.end());
  };
  auto to8 = [](const std::vector<std::int32_t>& v) {
    return std::vector<std::int8_t>(v.begin(), v.end());
  };
  const std::size_t stride = vec_words(len);
  if (op == hw::Opcode::kAttnScore || op == hw::Opcode::kAttnValue) {
    // rows = cached positions; src2 holds `rows` rows of `len` (one head of the KV cache).
    const Requant rq = param_rq(prm, index);
    if (op == hw::Opcode::kAttnScore) {
      const auto q = vec_row(src, len, index);
      std::vector<std::int32_t> s(rows);
      for (std::size_t t = 0; t < rows; ++t) {
        const auto kt = vec_row(src2 + t * stride, len, index);
        std::uint32_t acc = 0;
        for (std::size_t i = 0; i < len; ++i) {
          acc += static_cast<std::uint32_t>(q[i] * kt[i]);
        }
        s[t] = requantize(static_cast<std::int32_t>(acc), rq, 32);
      }
      write_vec_row(dst, s, index);
    } else {
      const auto p = vec_row(src, rows, index);
      std::vector<std::uint32_t> acc(len, 0);
      for (std::size_t t = 0; t < rows; ++t) {
        const auto vt = vec_row(src2 + t * stride, len, index);
        for (std::size_t i = 0; i < len; ++i) {
          acc[i] += static_cast<std::uint32_t>(p[t] * vt[i]);
        }
      }
      std::vector<std::int32_t> out(len);
      for (std::size_t i = 0; i < len; ++i) {
        out[i] = requantize(static_cast<std::int32_t>(acc[i]), rq, 8);
      }
      write_vec_row(dst, out, index);
    }
    return;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const auto x = vec_row(src + r * stride, len, index);
    std::vector<std::int32_t> out(len);
    switch (op) {
      case hw::Opcode::kSoftmax: {
        // `online`: the two-pass version in the order of this config's lanes (docs/isa.md).
        const kernels::SoftmaxOptions opt{get_field(in, f::softmax::kOnline) != 0
                                              ? kernels::SoftmaxMode::kOnline
                                              : kernels::SoftmaxMode::kThreePass,
                                          cfg_.lanes};
        std::vector<std::uint32_t> e(len);
        std::vector<std::int16_t> p(len);
        kernels::softmax_row_i16(x, opt, e, p);
        std::copy(p.begin(), p.end(), out.begin());
        break;
      }
      case hw::Opcode::kRmsnorm: {
        const auto gain = to16(vec_row(src2, len, index));
        std::vector<std::int8_t> o(len);
        kernels::rmsnorm_i8(to16(x), {gain, gain_frac_bits, param_u64(prm, index)}, o);
        std::copy(o.begin(), o.end(), out.begin());
        break;
      }
      case hw::Opcode::kLayernorm: {
        // The gain row at src2, its bias row right after it (docs/isa.md).
        const auto gain = to16(vec_row(src2, len, index));
        const auto bias = to16(vec_row(src2 + stride, len, index));
        std::vector<std::int8_t> o(len);
        kernels::layernorm_i8(to16(x), {gain, bias, gain_frac_bits, param_u64(prm, index)}, o);
        std::copy(o.begin(), o.end(), out.begin());
        break;
      }
      case hw::Opcode::kBatchnorm: {
        const auto gain = to16(vec_row(src2, len, index));
        const auto bias = to16(vec_row(src2 + stride, len, index));
        std::vector<std::int8_t> o(len);
        kernels::batchnorm_i8(to16(x), {gain, bias, param_rq(prm, index)}, o);
        std::copy(o.begin(), o.end(), out.begin());
        break;
      }
      case hw::Opcode::kGelu: {
        std::vector<std::int8_t> o(len);
        kernels::gelu_i8(to8(x), param_rq(prm, index), param_rq(prm + 1, index), o);
        std::copy(o.begin(), o.end(), out.begin());
        break;
      }
      case hw::Opcode::kSilu: {
        std::vector<std::int16_t> o(len);
        kernels::silu_i16(to16(x), param_rq(prm, index), param_rq(prm + 1, index), o);
        std::copy(o.begin(), o.end(), out.begin());
        break;
      }
      case hw::Opcode::kRope: {
        auto v = to16(x);
        const auto cos = to16(vec_row(src2, len / 2, index));
        const auto sin = to16(vec_row(src2 + vec_words(len / 2), len / 2, index));
        kernels::rope_i16(v, len, cos, sin);
        std::copy(v.begin(), v.end(), out.begin());
        break;
      }
      case hw::Opcode::kAdd: {
        std::vector<std::int16_t> o(len);
        kernels::add_i16(to16(x), to16(vec_row(src2 + r * stride, len, index)), o);
        std::copy(o.begin(), o.end(), out.begin());
        break;
      }
      case hw::Opcode::kMul: {
        std::vector<Requant> rq(len);
        for (std::size_t i = 0; i < len; ++i) {
          rq[i] = param_rq(prm + i, index);
        }
        std::vector<std::int8_t> o(len);
        kernels::mul_i8(to16(x), to16(vec_row(src2 + r * stride, len, index)), rq, o);
        std::copy(o.begin(), o.end(), out.begin());
        break;
      }
      case hw::Opcode::kEmbed: {
        std::vector<std::int16_t> o(len);
        kernels::embed_i16(to8(x), param_rq(prm + r, index), o);
        std::copy(o.begin(), o.end(), out.begin());
        break;
      }
      default:
        fail(index, "not a vector opcode");
    }
    write_vec_row(dst + r * stride, out, index);
  }
}

}  // namespace passim
