// SPDX-License-Identifier: Apache-2.0
// Random valid programs: each operation draws its fields inside the limits of docs/isa.md and
// is kept only when check_instr() accepts it (so the generator can never disagree with the
// documented limits). Units are separated by BARRIERs, as the compiler separates them: a
// unit's result is then the same whatever the memory timing.
#include "program_gen.hpp"

#include <algorithm>
#include <stdexcept>

#include "passim/device/device.hpp"
#include "passim/device/instr_check.hpp"

namespace passim::gen {

namespace f = hw::fields;
using hw::Opcode;
using hw::set_field;

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

/// Words [lo, hi) of the vector scratchpad.
struct Words {
  std::uint64_t lo = 0, hi = 0;
  [[nodiscard]] bool meets(const Words& o) const { return lo < o.hi && o.lo < hi; }
};

/// False when a vector opcode's result rows overlap a row it reads, other than a `dst_addr`
/// equal to `src_addr` where docs/isa.md allows it (SOFTMAX, SILU, ROPE, ADD, GELU). The units
/// stream word by word and CpuDevice row by row, so any other overlap has no defined result.
bool operands_disjoint(const hw::Instr& in, Opcode op, const hw::HwConfig& c) {
  const std::uint64_t len = hw::get_field(in, f::rmsnorm::kLen);
  const std::uint64_t rows = hw::get_field(in, f::rmsnorm::kRows);
  const std::uint64_t src = hw::get_field(in, f::rmsnorm::kSrcAddr);
  const std::uint64_t src2 = hw::get_field(in, f::rmsnorm::kSrc2Addr);
  const std::uint64_t dst = hw::get_field(in, f::rmsnorm::kDstAddr);
  const std::uint64_t w_len = ceil_div(len, c.lanes), w_rows = ceil_div(rows, c.lanes);
  Words out{dst, dst + rows * w_len}, a{src, src + rows * w_len}, b{src2, src2};
  switch (op) {
    case Opcode::kAttnScore: out.hi = dst + w_rows, a.hi = src + w_len; break;
    case Opcode::kAttnValue: out.hi = dst + w_len, a.hi = src + w_rows; break;
    default: break;
  }
  switch (op) {
    case Opcode::kAdd: case Opcode::kMul: case Opcode::kAttnScore: case Opcode::kAttnValue:
      b.hi = src2 + rows * w_len;
      break;
    case Opcode::kRmsnorm: b.hi = src2 + w_len; break;
    case Opcode::kLayernorm: case Opcode::kBatchnorm: b.hi = src2 + 2 * w_len; break;
    case Opcode::kRope: b.hi = src2 + 2 * ceil_div(len / 2, c.lanes); break;
    default: break;
  }
  const bool alias = dst == src && (op == Opcode::kSoftmax || op == Opcode::kSilu ||
                                    op == Opcode::kRope || op == Opcode::kAdd ||
                                    op == Opcode::kGelu);
  return (alias || !out.meets(a)) && !out.meets(b);
}

}  // namespace

const std::vector<hw::Opcode>& all_opcodes() {
  static const std::vector<Opcode> ops = {
      Opcode::kNop,     Opcode::kEnd,      Opcode::kBarrier,   Opcode::kDmaLoad,
      Opcode::kDmaStore, Opcode::kMatmul,  Opcode::kMatmulHeads, Opcode::kMatmulAct,
      Opcode::kSoftmax, Opcode::kRmsnorm,
      Opcode::kSilu,    Opcode::kRope,     Opcode::kAdd,       Opcode::kMul,
      Opcode::kEmbed,   Opcode::kAttnScore, Opcode::kAttnValue, Opcode::kLayernorm,
      Opcode::kBatchnorm, Opcode::kGelu};
  return ops;
}

struct ProgramGen::Body {
  std::vector<hw::Instr> instrs;
  hw::Unit last = hw::Unit::kControl;  ///< unit of the instructions since the last BARRIER
};

ProgramGen::ProgramGen(const hw::HwConfig& cfg, std::uint64_t dram_bytes, std::uint64_t seed)
    : cfg_(cfg), rng_(seed) {
  const std::uint64_t prog_bytes = cfg.prog_depth * sizeof(hw::Instr);
  if (dram_bytes % 16 != 0 || dram_bytes < (std::uint64_t{256} << 10) ||
      dram_bytes < 4 * prog_bytes) {
    throw std::invalid_argument("ProgramGen: dram_bytes " + std::to_string(dram_bytes) +
                                ": expected a multiple of 16, >= 256 KiB and >= 4 program areas");
  }
  layout_.bytes = dram_bytes;
  layout_.prog_bytes = prog_bytes;
  layout_.prog_addr = dram_bytes - prog_bytes;
  layout_.eps = 0;
  layout_.params = kEpsEntries * 8;
  layout_.data = layout_.params + kParamEntries * 8;
  layout_.out = (layout_.data + (layout_.prog_addr - layout_.data) / 2) & ~std::uint64_t{15};
}

std::vector<std::uint8_t> ProgramGen::initial_dram() {
  std::vector<std::uint8_t> image(layout_.bytes, 0);
  const auto put = [&image](std::uint64_t at, std::uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      image[at + std::uint64_t(b)] = static_cast<std::uint8_t>(v >> (8 * b));
    }
  };
  for (std::uint64_t i = 0; i < kEpsEntries; ++i) {  // eps < 2^31: the norms stay in range
    put(layout_.eps + i * 8, chance(0.5) ? pick(0, 255) : pick(0, 0x7FFF'FFFFu));
  }
  for (std::uint64_t i = 0; i < kParamEntries; ++i) {
    put(layout_.params + i * 8, random_step());
  }
  for (std::uint64_t a = layout_.data; a < layout_.out; ++a) {
    image[a] = static_cast<std::uint8_t>(pick(0, 255));
  }
  return image;
}

std::uint64_t ProgramGen::pick(std::uint64_t lo, std::uint64_t hi) {
  return std::uniform_int_distribution<std::uint64_t>(lo, std::max(lo, hi))(rng_);
}

bool ProgramGen::chance(double p) { return std::bernoulli_distribution(p)(rng_); }

std::uint64_t ProgramGen::small_or_large(std::uint64_t lo, std::uint64_t hi) {
  // Mostly small sizes (fast programs, many corner cases: a few words of this configuration),
  // sometimes up to the limit.
  const std::uint64_t small_hi = std::min<std::uint64_t>(hi, lo + std::max<std::uint64_t>(
                                                                      15, 3 * cfg_.lanes));
  return chance(0.85) ? pick(lo, small_hi) : pick(lo, hi);
}

std::uint64_t ProgramGen::random_step() {
  // Mostly a step that scales by about 2^-8..2^8 (results in range, some clamped), sometimes
  // any mult and shift; a random signed 26-bit bias (only MATMUL adds it).
  const std::uint64_t mult = chance(0.8) ? pick(std::uint64_t{1} << 29, 0x7FFF'FFFFu)
                                         : pick(0, 0x7FFF'FFFFu);
  const std::uint64_t shift = chance(0.8) ? pick(22, 38) : pick(0, 63);
  const std::uint64_t bias = chance(0.5) ? 0 : pick(0, (std::uint64_t{1} << 26) - 1);
  return mult | (shift << 32) | (bias << 38);
}

hw::Instr ProgramGen::random_dma(bool load) {
  const auto mem = static_cast<hw::Mem>(pick(0, 3));
  std::uint64_t per_word = 1, depth = cfg_.param_depth, esize = 3;
  switch (mem) {
    case hw::Mem::kInput: per_word = cfg_.array_rows, depth = cfg_.input_depth, esize = 0; break;
    case hw::Mem::kWeight: per_word = cfg_.array_cols, depth = cfg_.weight_depth, esize = 0; break;
    case hw::Mem::kVector:
      per_word = cfg_.lanes, depth = cfg_.vector_depth, esize = pick(0, 2);
      break;
    default: break;
  }
  const std::uint64_t row_len = small_or_large(1, std::min<std::uint64_t>(2048 >> esize,
                                                                            depth * per_word));
  const std::uint64_t words = ceil_div(row_len, per_word);
  std::uint64_t rows = small_or_large(1, std::min<std::uint64_t>(64, depth / words));
  const std::uint64_t row_bytes = row_len << esize;
  std::uint64_t lo = 0, hi = layout_.bytes;  // a load reads anywhere
  if (load && mem == hw::Mem::kParam) {  // from the table of steps, whole entries
    lo = layout_.params;
    hi = layout_.params + kParamEntries * 8;
  } else if (!load) {
    const bool own_image = chance(0.03);  // overwrite the running program's own image
    lo = own_image ? layout_.prog_addr : layout_.out;
    hi = own_image ? layout_.bytes : layout_.prog_addr;
  }
  std::uint64_t stride = pick(row_bytes, std::min<std::uint64_t>(row_bytes + 40, 0xFFFF));
  if (load && mem == hw::Mem::kParam) {
    stride = 8 * pick(row_len, std::min<std::uint64_t>(row_len + 4, 0xFFFF / 8));
  } else if (load && chance(0.1)) {
    stride = pick(0, row_bytes);  // overlapping or repeated rows
  }
  if (stride > 0) {
    rows = std::min(rows, (hi - lo - row_bytes) / stride + 1);
  }
  const std::uint64_t span = (rows - 1) * stride + row_bytes;
  hw::Instr in = hw::make_instr(load ? Opcode::kDmaLoad : Opcode::kDmaStore, 0);
  set_field(in, f::dma_load::kMem, std::uint32_t(mem));
  set_field(in, f::dma_load::kElemSize, std::uint32_t(esize));
  const std::uint64_t align = load && mem == hw::Mem::kParam ? 8 : 1;
  set_field(in, f::dma_load::kDramAddr, std::uint32_t(pick(lo, hi - span) / align * align));
  set_field(in, f::dma_load::kSpadAddr, std::uint32_t(pick(0, depth - rows * words)));
  set_field(in, f::dma_load::kRows, std::uint32_t(rows));
  set_field(in, f::dma_load::kRowLen, std::uint32_t(row_len));
  set_field(in, f::dma_load::kDramStride, std::uint32_t(stride));
  if (!load && mem == hw::Mem::kVector) {
    set_field(in, f::dma_store::kRequant, chance(0.3) ? 1 : 0);
  }
  return in;
}

hw::Instr ProgramGen::random_matmul(hw::Opcode op) {
  // MATMUL_HEADS: head_size mostly below n (several heads, often narrower than L), its field
  // where MATMUL has dst_stride; the rows are packed. MATMUL_ACT: 1..3 digit groups in a and
  // W^T, and the result transposed half of the time.
  const bool heads = op == Opcode::kMatmulHeads, act = op == Opcode::kMatmulAct;
  const std::uint64_t g = act ? pick(1, 3) : 1;
  const bool trans = act && chance(0.5);
  const std::uint64_t m = small_or_large(1, std::min<std::uint64_t>(cfg_.acc_depth, 1023));
  const std::uint64_t k = small_or_large(1, 2047);
  const std::uint64_t n = small_or_large(1, std::min<std::uint64_t>(cfg_.param_depth, 2047));
  const std::uint64_t kt = ceil_div(k, cfg_.array_rows), nt_w = ceil_div(n, cfg_.array_cols);
  const std::uint64_t head = chance(0.8) ? pick(1, std::min<std::uint64_t>(n, 40)) : pick(1, 1023);
  const std::uint64_t nt_l = ceil_div(n, cfg_.lanes);  // MATMUL: the least dst_stride
  const std::uint64_t stride =
      heads ? head
      : act ? g | (trans ? 4u : 0u)  // digits [81:80], transpose [82]
      : chance(0.3) ? pick(nt_l, std::min<std::uint64_t>(nt_l + 3, 1023)) : 0;
  const std::uint64_t out_bits = chance(0.2) ? 0 : pick(2, 32);
  hw::Instr in = hw::make_instr(op, 0);
  set_field(in, f::matmul::kM, std::uint32_t(m));
  set_field(in, f::matmul::kK, std::uint32_t(k));
  set_field(in, f::matmul::kN, std::uint32_t(n));
  set_field(in, f::matmul::kOutBits, std::uint32_t(out_bits));
  set_field(in, f::matmul::kDstStride, std::uint32_t(stride));
  // Out-of-range picks (a saturated subtraction) are rejected by check_instr and redrawn.
  const auto room = [](std::uint64_t depth, std::uint64_t need) {
    return depth > need ? depth - need : 0;
  };
  set_field(in, f::matmul::kAAddr, std::uint32_t(pick(0, room(cfg_.input_depth, m * g * kt))));
  set_field(in, f::matmul::kWAddr,
            std::uint32_t(pick(0, room(cfg_.weight_depth, g * k * nt_w))));
  const std::uint64_t span = matmul_result(in, cfg_.lanes).span();  // the result's words
  set_field(in, f::matmul::kDstAddr, std::uint32_t(pick(0, room(cfg_.vector_depth, span))));
  set_field(in, f::matmul::kRqAddr, std::uint32_t(pick(0, room(cfg_.param_depth, n))));
  return in;
}

hw::Instr ProgramGen::random_vector(hw::Opcode op) {
  const bool norm = op == Opcode::kRmsnorm || op == Opcode::kLayernorm;
  const bool attn = op == Opcode::kAttnScore || op == Opcode::kAttnValue;
  // Norm rows stay short enough that the sum of squares (+ eps < 2^32) stays inside the
  // reciprocal square root's range for every gain_frac_bits (docs/numerics.md).
  const std::uint64_t elems = cfg_.vector_depth * cfg_.lanes;  // the whole scratchpad
  std::uint64_t len = small_or_large(1, std::min<std::uint64_t>(norm ? 1024 : 4096, elems));
  if (op == Opcode::kRope) {
    len = 2 * small_or_large(1, 256);
  }
  const std::uint64_t rows = small_or_large(1, attn ? 256 : 16);
  const std::uint64_t need = rows * ceil_div(len, cfg_.lanes);
  const std::uint64_t vd = cfg_.vector_depth;
  const auto addr = [&] { return std::uint32_t(pick(0, vd > need ? vd - need : 0)); };
  hw::Instr in = hw::make_instr(op, 0);
  const std::uint32_t src = addr();
  set_field(in, f::rmsnorm::kSrcAddr, src);
  set_field(in, f::rmsnorm::kSrc2Addr, addr());
  set_field(in, f::rmsnorm::kDstAddr, chance(0.2) ? src : addr());
  set_field(in, f::rmsnorm::kParamAddr,
            std::uint32_t(pick(0, cfg_.param_depth - std::min(cfg_.param_depth, len))));
  set_field(in, f::rmsnorm::kLen, std::uint32_t(len));
  set_field(in, f::rmsnorm::kRows, std::uint32_t(rows));
  if (norm) {
    set_field(in, f::rmsnorm::kGainFracBits, std::uint32_t(pick(0, 13)));
  } else if (op == Opcode::kSoftmax) {
    set_field(in, f::softmax::kOnline, chance(0.5) ? 1 : 0);
  }
  return in;
}

hw::Instr ProgramGen::random_valid(hw::Opcode op) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    hw::Instr in{};
    switch (hw::unit_of(op)) {
      case hw::Unit::kDma: in = random_dma(op == Opcode::kDmaLoad); break;
      case hw::Unit::kMatmul: in = random_matmul(op); break;
      case hw::Unit::kVector: in = random_vector(op); break;
      default: in = hw::make_instr(op, 0); break;
    }
    if (chance(0.15)) {  // the class only steers the counters: any valid one
      set_field(in, f::kOpClass, std::uint32_t(pick(0, std::uint64_t(hw::OpClass::kControl))));
    }
    set_field(in, f::kLayer, std::uint32_t(pick(0, 255)));
    if (check_instr(in, cfg_).ok() &&
        (hw::unit_of(op) != hw::Unit::kVector || operands_disjoint(in, op, cfg_))) {
      return in;
    }
  }
  return hw::make_instr(Opcode::kNop, 0);  // no valid draw (never seen): a NOP instead
}

void ProgramGen::add_op(Body& b, hw::Opcode op) {
  hw::Instr in = random_valid(op);
  op = static_cast<Opcode>(hw::get_field(in, f::kOpcode));
  const hw::Unit unit = hw::unit_of(op);
  const auto emit = [&b](const hw::Instr& x, hw::Unit u) {
    if (u != hw::Unit::kControl && b.last != hw::Unit::kControl && u != b.last) {
      b.instrs.push_back(hw::make_instr(Opcode::kBarrier, 0));
    }
    b.instrs.push_back(x);
    if (u != hw::Unit::kControl) {
      b.last = u;
    } else if (static_cast<Opcode>(hw::get_field(x, f::kOpcode)) == Opcode::kBarrier) {
      b.last = hw::Unit::kControl;  // every unit is idle after a BARRIER
    }
  };
  if (op == Opcode::kRmsnorm || op == Opcode::kLayernorm) {
    // Its eps: one entry of the eps table into the param entry the norm reads.
    hw::Instr eps = hw::make_instr(Opcode::kDmaLoad, 0);
    set_field(eps, f::dma_load::kMem, std::uint32_t(hw::Mem::kParam));
    set_field(eps, f::dma_load::kElemSize, 3);
    set_field(eps, f::dma_load::kDramAddr, std::uint32_t(layout_.eps + 8 * pick(0, 63)));
    set_field(eps, f::dma_load::kSpadAddr, hw::get_field(in, f::rmsnorm::kParamAddr));
    set_field(eps, f::dma_load::kRows, 1);
    set_field(eps, f::dma_load::kRowLen, 1);
    set_field(eps, f::dma_load::kDramStride, 8);
    emit(eps, hw::Unit::kDma);
  }
  emit(in, unit);
}

GenCase ProgramGen::finish(Body& b) {
  b.instrs.push_back(hw::make_instr(Opcode::kEnd, 0));
  GenCase c;
  c.image = std::move(b.instrs);
  c.write_addr = c.prog_addr = layout_.prog_addr;
  c.len = std::uint32_t(c.image.size());
  return c;
}

GenCase ProgramGen::next_valid(std::size_t max_ops) {
  const std::vector<Opcode>& ops = all_opcodes();
  Body b;
  const std::uint64_t n = pick(1, std::max<std::size_t>(1, max_ops));
  // Three instructions per operation at most (eps load, BARRIER, the operation), then END.
  while (b.instrs.size() < n && b.instrs.size() + 4 <= cfg_.prog_depth) {
    const Opcode op = ops[pick(0, ops.size() - 1)];
    if (op != Opcode::kEnd) {
      add_op(b, op);
    }
  }
  return finish(b);
}

}  // namespace passim::gen
