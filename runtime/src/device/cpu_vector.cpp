// SPDX-License-Identifier: Apache-2.0
// The vector unit of the reference executor (rtl/top/psm_vector_unit.sv): each opcode calls
// the golden kernel of its RTL unit on the rows of the vector scratchpad. Units read the low
// 16 bits of a lane (the low 8 for int8 inputs) and write results sign-extended.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/device/cpu_device.hpp"
#include "passim/kernels/attn.hpp"
#include "passim/kernels/batchnorm.hpp"
#include "passim/kernels/eltwise.hpp"
#include "passim/kernels/gelu.hpp"
#include "passim/kernels/layernorm.hpp"
#include "passim/kernels/rmsnorm.hpp"
#include "passim/kernels/rope.hpp"
#include "passim/kernels/silu.hpp"
#include "passim/kernels/softmax.hpp"

namespace passim {

namespace f = hw::fields;
using hw::get_field;
using hw::Opcode;

namespace {
template <typename T>
std::vector<T> narrow(const std::vector<std::int16_t>& v) {
  return {v.begin(), v.end()};
}
}  // namespace

void CpuDevice::vector_unit(const hw::Instr& in, Opcode op, std::uint32_t index) {
  // Every vector opcode shares this operand layout (docs/isa.md).
  const VectorArgs a{op,
                     get_field(in, f::rmsnorm::kSrcAddr),
                     get_field(in, f::rmsnorm::kSrc2Addr),
                     get_field(in, f::rmsnorm::kDstAddr),
                     get_field(in, f::rmsnorm::kParamAddr),
                     get_field(in, f::rmsnorm::kLen),
                     get_field(in, f::rmsnorm::kRows),
                     vec_words(get_field(in, f::rmsnorm::kLen)),
                     index};
  // check_instr passed: len and rows >= 1, gain_frac_bits <= 13, every row fits.
  const int frac = int(get_field(in, f::rmsnorm::kGainFracBits));
  switch (op) {
    case Opcode::kSoftmax: return softmax(a, get_field(in, f::softmax::kOnline) != 0);
    case Opcode::kRmsnorm: return rmsnorm(a, frac);
    case Opcode::kLayernorm: return layernorm(a, frac);
    case Opcode::kBatchnorm: return batchnorm(a);
    case Opcode::kSilu: return silu(a);
    case Opcode::kGelu: return gelu(a);
    case Opcode::kRope: return rope(a);
    case Opcode::kAttnScore: return attn_score(a);
    case Opcode::kAttnValue: return attn_value(a);
    default: return eltwise(a);  // ADD, MUL, EMBED
  }
}

void CpuDevice::softmax(const VectorArgs& a, bool online) {
  // `online`: the two-pass version in the order of this config's lanes (docs/isa.md).
  const kernels::SoftmaxOptions opt{
      online ? kernels::SoftmaxMode::kOnline : kernels::SoftmaxMode::kThreePass, cfg_.lanes};
  std::vector<std::uint32_t> e(a.len);
  std::vector<std::int16_t> p(a.len);
  for (std::size_t r = 0; r < a.rows; ++r) {
    kernels::softmax_row_i16(vec_row(a.src + r * a.stride, a.len, a.index), opt, e, p);
    write_row<std::int16_t>(a.dst + r * a.stride, p, a.index);
  }
}

// The norms read their gain (and bias) rows for every row, as the units do: an output row may
// overwrite them.
void CpuDevice::rmsnorm(const VectorArgs& a, int gain_frac_bits) {
  std::vector<std::int8_t> out(a.len);
  for (std::size_t r = 0; r < a.rows; ++r) {
    const auto x = row16(a.src + r * a.stride, a.len, a.index);
    kernels::rmsnorm_i8(x, {row16(a.src2, a.len, a.index), gain_frac_bits,
                            param_u64(a.param, a.index)}, out);
    write_row<std::int8_t>(a.dst + r * a.stride, out, a.index);
  }
}

void CpuDevice::layernorm(const VectorArgs& a, int gain_frac_bits) {
  // The gain row at src2, its bias row right after it (docs/isa.md).
  std::vector<std::int8_t> out(a.len);
  for (std::size_t r = 0; r < a.rows; ++r) {
    const auto x = row16(a.src + r * a.stride, a.len, a.index);
    const auto gain = row16(a.src2, a.len, a.index);
    const auto bias = row16(a.src2 + a.stride, a.len, a.index);
    kernels::layernorm_i8(x, {gain, bias, gain_frac_bits, param_u64(a.param, a.index)}, out);
    write_row<std::int8_t>(a.dst + r * a.stride, out, a.index);
  }
}

void CpuDevice::batchnorm(const VectorArgs& a) {
  std::vector<std::int8_t> out(a.len);
  for (std::size_t r = 0; r < a.rows; ++r) {
    const auto x = row16(a.src + r * a.stride, a.len, a.index);
    const auto gain = row16(a.src2, a.len, a.index);
    const auto bias = row16(a.src2 + a.stride, a.len, a.index);
    kernels::batchnorm_i8(x, {gain, bias, param_rq(a.param, a.index)}, out);
    write_row<std::int8_t>(a.dst + r * a.stride, out, a.index);
  }
}

void CpuDevice::silu(const VectorArgs& a) {
  std::vector<std::int16_t> out(a.len);
  for (std::size_t r = 0; r < a.rows; ++r) {
    kernels::silu_i16(row16(a.src + r * a.stride, a.len, a.index), param_rq(a.param, a.index),
                      param_rq(a.param + 1, a.index), out);
    write_row<std::int16_t>(a.dst + r * a.stride, out, a.index);
  }
}

void CpuDevice::gelu(const VectorArgs& a) {
  std::vector<std::int8_t> out(a.len);
  for (std::size_t r = 0; r < a.rows; ++r) {
    kernels::gelu_i8(narrow<std::int8_t>(row16(a.src + r * a.stride, a.len, a.index)),
                     param_rq(a.param, a.index), param_rq(a.param + 1, a.index), out);
    write_row<std::int8_t>(a.dst + r * a.stride, out, a.index);
  }
}

void CpuDevice::rope(const VectorArgs& a) {
  // Every row is one head; the cos row at src2 and the sin row after it serve all of them.
  for (std::size_t r = 0; r < a.rows; ++r) {
    auto v = row16(a.src + r * a.stride, a.len, a.index);
    const auto cos = row16(a.src2, a.len / 2, a.index);
    const auto sin = row16(a.src2 + vec_words(a.len / 2), a.len / 2, a.index);
    kernels::rope_i16(v, a.len, cos, sin);
    write_row<std::int16_t>(a.dst + r * a.stride, v, a.index);
  }
}

void CpuDevice::eltwise(const VectorArgs& a) {
  // ADD and MUL take row r of src2 too; MUL has one step per element (shared by the rows),
  // EMBED one step per row.
  std::vector<Requant> mul_rq;
  if (a.op == Opcode::kMul) {
    for (std::size_t i = 0; i < a.len; ++i) {
      mul_rq.push_back(param_rq(a.param + i, a.index));
    }
  }
  for (std::size_t r = 0; r < a.rows; ++r) {
    const auto x = row16(a.src + r * a.stride, a.len, a.index);
    const std::size_t dst = a.dst + r * a.stride;
    if (a.op == Opcode::kEmbed) {
      std::vector<std::int16_t> out(a.len);
      kernels::embed_i16(narrow<std::int8_t>(x), param_rq(a.param + r, a.index), out);
      write_row<std::int16_t>(dst, out, a.index);
    } else if (a.op == Opcode::kAdd) {
      std::vector<std::int16_t> out(a.len);
      kernels::add_i16(x, row16(a.src2 + r * a.stride, a.len, a.index), out);
      write_row<std::int16_t>(dst, out, a.index);
    } else if (a.op == Opcode::kMul) {
      std::vector<std::int8_t> out(a.len);
      kernels::mul_i8(x, row16(a.src2 + r * a.stride, a.len, a.index), mul_rq, out);
      write_row<std::int8_t>(dst, out, a.index);
    } else {
      fail(a.index, "not a vector opcode");
    }
  }
}

std::vector<std::int16_t> CpuDevice::cache_rows(const VectorArgs& a) const {
  // `rows` rows of `len` at src2, one after the other: a head's keys or values.
  std::vector<std::int16_t> rows;
  for (std::size_t t = 0; t < a.rows; ++t) {
    const auto row = row16(a.src2 + t * a.stride, a.len, a.index);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  return rows;
}

void CpuDevice::attn_score(const VectorArgs& a) {
  // `rows` = cached positions; src2 holds `rows` rows of `len` (one head of the KV cache).
  const auto q = row16(a.src, a.len, a.index);
  std::vector<std::int32_t> scores(a.rows);
  kernels::attn_score_i32(q, cache_rows(a), a.len, param_rq(a.param, a.index), scores);
  write_row<std::int32_t>(a.dst, scores, a.index);
}

void CpuDevice::attn_value(const VectorArgs& a) {
  // The probabilities (one row of `rows`) at src, `rows` value rows of `len` at src2.
  const auto p = row16(a.src, a.rows, a.index);
  std::vector<std::uint32_t> acc(a.len);
  std::vector<std::int8_t> out(a.len);
  kernels::attn_value_i8<std::int16_t>(p, cache_rows(a), a.len, param_rq(a.param, a.index), acc,
                                       out);
  write_row<std::int8_t>(a.dst, out, a.index);
}

}  // namespace passim
