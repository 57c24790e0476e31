// SPDX-License-Identifier: Apache-2.0
// Closed forms of the matmul stage's and the vector unit's busy cycles (docs/cycle-model.md), each
// derived from the RTL file named next to it.
#include "passim/device/cycle_model.hpp"

#include <algorithm>
#include <bit>
#include <set>
#include <vector>

#include "passim/device/device.hpp"

namespace passim::cycles {

namespace f = hw::fields;
using hw::get_field;
using hw::Opcode;

std::uint64_t matmul_array_cycles(const hw::HwConfig& cfg, std::uint64_t m, std::uint64_t k,
                                  std::uint64_t n, std::uint64_t digits) noexcept {
  // rtl/matmul/psm_matmul.sv: the N = G * KT * NT tiles take slots of T cycles back to back, the
  // last slot ends after its m rows, then the array fill/drain (R + C + 2: input register, skew,
  // PEs, de-skew, accumulator) and the requantiser pipeline (2) once per command.
  const std::uint64_t r = cfg.array_rows, c = cfg.array_cols;
  const std::uint64_t tiles = digits * ceil_div(k, r) * ceil_div(n, c);
  const std::uint64_t slot = std::max({m, r, c});
  return (tiles - 1) * slot + m + (r + c + 2) + 2;
}

namespace {

/// ATTN_SCORE (rtl/attn/psm_attn.sv): after the step read (and the one q word when W = 1), one read
/// per cycle: c per position (1 when W = 1, q kept; else q and k words, 2 W); the score leaves lane
/// 0's requantiser 4 cycles after the position's last read, and a full output word (or the last) is
/// written in that cycle, the reads waiting for it. The command ends with the last write:
/// 5 + [W = 1] + rows * c + N, N = the writes that delay a read.
std::uint64_t attn_score_cycles(std::uint64_t w, std::uint64_t rows, std::uint64_t lanes) {
  const std::uint64_t p = ceil_div(rows, lanes);
  if (w > 1) {  // 2 W reads follow every write but the last: each delays one
    return 5 + 2 * w * rows + (p - 1);
  }
  if (lanes >= 4) {  // word j's write precedes the last read iff 4 positions follow it
    return 6 + rows + (rows < 4 ? 0 : std::min(p - 1, (rows - 4) / lanes));
  }
  // 2 or 3 lanes: successive writes may fall within 4 cycles; walk the reads.
  std::set<std::uint64_t> writes;
  std::uint64_t cycle = 2;  // the step and the q word
  for (std::uint64_t t = 0; t < rows; ++t) {
    do {
      ++cycle;
    } while (writes.count(cycle) != 0);  // a write takes the port: the read waits
    if (t % lanes == lanes - 1 || t == rows - 1) {
      writes.insert(cycle + 4);
    }
  }
  return *writes.rbegin();
}

}  // namespace

namespace {

/// The vector words the matmul stage writes per result row (rtl/top/psm_matmul_stage.sv, not
/// transposed): each group (MATMUL_HEADS: a head; else the row) starts a new word.
std::uint64_t row_writes(const MatmulResult& res, std::uint64_t n, std::size_t lanes) {
  const std::uint64_t group = std::min(res.group, n);
  const std::uint64_t full = n / group, tail = n % group;
  return full * ceil_div(group, lanes) + ceil_div(tail, lanes);
}

}  // namespace

std::uint64_t matmul_copy_out_cycles(const hw::Instr& in, const hw::HwConfig& cfg) noexcept {
  const MatmulResult res = matmul_result(in, cfg.lanes);
  const std::uint64_t m = get_field(in, f::matmul::kM), n = get_field(in, f::matmul::kN);
  if (res.transposed) {
    // rtl/top/psm_matmul_stage.sv, transposed: per block of L rows and one output word (C
    // columns): its rows read into the tile (one per cycle), one cycle for the last word to
    // land, then one vector word per column; + 1 for the cycle that sees tr_done_q.
    const std::uint64_t nw = ceil_div(n, cfg.array_cols), mw = ceil_div(m, cfg.lanes);
    return nw * m + mw * n + nw * mw + 1;
  }
  // Rows (not transposed, the gearbox of 2 (C + L) elements): one output word of C elements
  // read per cycle, one vector word of up to L lanes written per cycle, so a row takes
  // max(NW, Wr) cycles with NW = ceil(n / C) reads and Wr = row_writes() writes. The gearbox
  // holds enough for the reads to run ahead, so the rows follow each other without a gap;
  // + 3: the read's cycle of latency, the write of the last word, and the cycle that sees the
  // last row written (ow_done).
  const std::uint64_t nw = ceil_div(n, cfg.array_cols);
  return m * std::max(nw, row_writes(res, n, cfg.lanes)) + 3;
}

std::vector<CycleSpan> matmul_copy_out_writes(const hw::Instr& in, const hw::HwConfig& cfg) {
  const MatmulResult res = matmul_result(in, cfg.lanes);
  const std::uint64_t m = get_field(in, f::matmul::kM), n = get_field(in, f::matmul::kN);
  const std::uint64_t c = cfg.array_cols, l = cfg.lanes;
  std::vector<CycleSpan> writes;
  if (res.transposed) {  // per block: its rows read, one cycle, then its columns written
    std::uint64_t at = 0;
    for (std::uint64_t t = 0; t < ceil_div(n, c); ++t) {
      for (std::uint64_t b = 0; b < ceil_div(m, l); ++b) {
        const std::uint64_t rows = std::min(l, m - b * l), cols = std::min(c, n - t * c);
        writes.push_back({at + rows + 1, at + rows + 1 + cols});
        at += rows + 1 + cols;
      }
    }
    return writes;
  }
  // Write-bound rows (Wr >= NW: C >= L, every built-in config): the first word is in the
  // gearbox from offset 2, then one write per cycle to the end.
  const std::uint64_t wr = row_writes(res, n, l);
  if (wr >= ceil_div(n, c)) {
    writes.push_back({2, 2 + m * wr});
  }
  return writes;
}

std::uint64_t matmul_copy_in_cycles(const hw::Instr& in) noexcept {
  // rtl/top/psm_matmul_stage.sv: one step read per cycle from the first busy cycle on (StStart, or
  // StCopyIn), its write into psm_matmul the cycle after: copy_in_o = busy && !pm_done stays high
  // for n + 1 cycles; none without requantisation (out_bits = 0).
  const bool requant = get_field(in, f::matmul::kOutBits) != 0;
  return requant ? get_field(in, f::matmul::kN) + 1 : 0;
}

std::uint64_t matmul_copy_in_before(const hw::Instr& in, bool vector_busy) noexcept {
  // rtl/top/psm_matmul_stage.sv StCopyIn, only when the vector unit was busy at the start: the n
  // reads, the last write, and the cycle that sees pm_done; 1 cycle without steps.
  if (!vector_busy) {
    return 0;
  }
  const bool requant = get_field(in, f::matmul::kOutBits) != 0;
  return requant ? get_field(in, f::matmul::kN) + 2 : 1;
}

std::uint64_t matmul_stage_cycles(const hw::Instr& in, const hw::HwConfig& cfg,
                                  bool vector_busy) noexcept {
  const std::uint64_t m = get_field(in, f::matmul::kM), k = get_field(in, f::matmul::kK);
  const std::uint64_t n = get_field(in, f::matmul::kN);
  const std::uint64_t digits = matmul_result(in, cfg.lanes).digits;
  // StCopyIn (if any), StStart (1), StRun (psm_matmul busy), StCopyOut.
  return matmul_copy_in_before(in, vector_busy) + 1 + matmul_array_cycles(cfg, m, k, n, digits) +
         matmul_copy_out_cycles(in, cfg);
}

std::uint64_t rsqrt_extra_cycles(std::uint64_t x) noexcept {
  const auto width = static_cast<std::uint64_t>(std::bit_width(std::max<std::uint64_t>(x, 1)));
  return width >= 62 ? 0 : (62 - width) / 2;
}

std::uint64_t row_unit_cycles(const hw::Instr& in, const hw::HwConfig& cfg) noexcept {
  const auto op = static_cast<Opcode>(get_field(in, f::kOpcode));
  const std::uint64_t len = get_field(in, f::rmsnorm::kLen);
  const std::uint64_t rows = get_field(in, f::rmsnorm::kRows);
  const std::uint64_t w = ceil_div(len, cfg.lanes);  // words of a row
  switch (op) {
    case Opcode::kSoftmax:  // rtl/softmax/psm_softmax.sv
      // three passes: (W + 2 max) + (W + 2 sum + 33 divide) + 2 W normalise; online: (W + 3 max and
      // sum + 33 divide) + 2 W normalise.
      return get_field(in, f::softmax::kOnline) != 0 ? 3 * w + 36 : 4 * w + 37;
    case Opcode::kRmsnorm:  // rtl/rmsnorm/psm_rmsnorm.sv: (W + 2 + 65 rsqrt) + 3 W
      return 4 * w + 67;
    case Opcode::kLayernorm:  // rtl/layernorm/psm_layernorm.sv: mean W + 3 + 17
                              // divide steps,
      return 7 * w + 87;      // variance W + 2 + 65 rsqrt, normalise 5 W
    case Opcode::kBatchnorm:  // rtl/batchnorm/psm_batchnorm.sv: x, gain, bias,
                              // round, write
      return 5 * w;
    case Opcode::kSilu:  // rtl/silu/psm_silu.sv: read, load, round, sigmoid, 20
                         // divide, ...
      return 26 * w;
    case Opcode::kGelu:  // rtl/gelu/psm_gelu.sv: read, load, round, phi, scale,
                         // round, write
      return 7 * w;
    case Opcode::kRope:  // rtl/rope/psm_rope.sv: 7 per two-word step, 5 for a last
                         // one-word step
      return 7 * (w / 2) + 5 * (w % 2);
    case Opcode::kAdd:  // rtl/eltwise/psm_eltwise.sv: read a, read b, calc, round,
                        // write
      return 5 * w;
    case Opcode::kMul:  // ... plus one step read per lane of the word (len in all)
      return 5 * w + len;
    case Opcode::kEmbed:  // ... read x, calc, round, write, and the row's step
                          // read
      return 4 * w + 1;
    case Opcode::kAttnScore:  // rtl/attn/psm_attn.sv (rtl/attn/README.md "Cycles")
      return attn_score_cycles(w, rows, cfg.lanes);
    case Opcode::kAttnValue:  // rtl/attn/psm_attn.sv: the step, then per output
                              // word
      return 1 + w * (rows + ceil_div(rows, cfg.lanes) + 4);
    default:
      return 0;
  }
}

std::uint64_t vector_cycles(const hw::Instr& in, const hw::HwConfig& cfg,
                            std::uint64_t rsqrt_extra) noexcept {
  // rtl/top/psm_vector_unit.sv: StPrm0 and StPrm1 read the constant parameter of RMSNORM, LAYERNORM
  // and BATCHNORM (StPrm2 the second of SILU and GELU); then per row (one command for ATTN_*)
  // StRowStart, and StRowWait from the row unit's first busy cycle through its done_o, one cycle
  // after its last busy cycle.
  const auto op = static_cast<Opcode>(get_field(in, f::kOpcode));
  std::uint64_t prm = 0;
  if (op == Opcode::kRmsnorm || op == Opcode::kLayernorm || op == Opcode::kBatchnorm) {
    prm = 2;
  } else if (op == Opcode::kSilu || op == Opcode::kGelu) {
    prm = 3;
  }
  const bool attn = op == Opcode::kAttnScore || op == Opcode::kAttnValue;
  const std::uint64_t commands = attn ? 1 : get_field(in, f::rmsnorm::kRows);
  return prm + commands * (row_unit_cycles(in, cfg) + 2) + rsqrt_extra;
}

}  // namespace passim::cycles
