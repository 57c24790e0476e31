// SPDX-License-Identifier: Apache-2.0
/// \file Accelerator programs (docs/isa.md): one builder with named operands for every opcode,
/// shared by the compiler and the tests, and the parameter-memory encoding of a Requant step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "passim/fixed_point.hpp"
#include "passim/hw/spec.hpp"

namespace passim {

/// DMA_LOAD and DMA_STORE operands: `rows` rows of `row_len` elements of 2^`elem_log2` bytes
/// at DRAM byte address `dram` (rows `stride` bytes apart), to or from memory `mem` from word
/// `spad` on (each row starts on a word).
struct DmaOp {
  hw::Mem mem = hw::Mem::kVector;
  unsigned elem_log2 = 0;     ///< element size: 0 int8, 1 int16, 2 int32, 3 64-bit entries
  std::uint64_t dram = 0;     ///< bytes
  std::size_t spad = 0;       ///< words of `mem`
  std::size_t rows = 1;
  std::size_t row_len = 0;    ///< elements per row
  std::uint64_t stride = 0;   ///< bytes from one DRAM row to the next
  bool requant = false;       ///< DMA_STORE: each element becomes requantize(v, param[0], 8 << elem_log2)
};

/// MATMUL operands: out (m, n) = a (m, k) * W (k, n), requantised per column by the parameter
/// entries from `rq_addr` on, into vector-scratchpad rows from word `dst` on, `dst_stride`
/// words apart (0: ceil(n / L), the rows packed; a tile of a wider row passes the row's words).
struct MatmulOp {
  std::size_t m = 1, k = 0, n = 0;
  std::size_t a_addr = 0;    ///< input-scratchpad word of row 0 of a
  std::size_t w_addr = 0;    ///< weight-scratchpad word of row 0 of W
  std::size_t dst = 0;       ///< vector-scratchpad word of output row 0
  std::size_t dst_stride = 0;  ///< vector words between output rows; 0: ceil(n / L)
  std::size_t rq_addr = 0;   ///< parameter entry of column 0
  unsigned out_bits = 8;     ///< saturation width of the requantised outputs, 2..32
  bool requant = true;       ///< false: the raw int32 accumulators (out_bits field 0)
  /// Not 0: MATMUL_HEADS, every head of `head_size` columns from a new vector word and the
  /// rows packed (dst_stride unused)
  std::size_t head_size = 0;
  /// Not 0: MATMUL_ACT with this many base-256 digit groups (1..3) of k in a's rows and in
  /// W^T (docs/isa.md); its result rows are packed (dst_stride unused)
  std::size_t digits = 0;
  bool transpose = false;  ///< MATMUL_ACT: column c of the result becomes vector row c
};

/// Operands of a vector opcode (all share one layout): `rows` rows of `len` elements from word
/// `src` (and `src2`) to word `dst`, with parameter entries from `param` on.
struct VectorOp {
  hw::Opcode op = hw::Opcode::kAdd;
  std::size_t src = 0, src2 = 0, dst = 0;
  std::size_t param = 0;
  std::size_t len = 0;
  std::size_t rows = 1;
  unsigned gain_frac_bits = 0;  ///< RMSNORM, LAYERNORM: fraction bits of the gain row
  bool online = false;          ///< SOFTMAX: the online two-pass version
};

/// Builds accelerator programs. The controller does not track dependencies between units
/// (docs/isa.md), so a BARRIER goes in whenever the issuing unit changes, with one exception
/// when the builder knows the configuration: a DMA_LOAD into the weight scratchpad or the
/// parameter memory issues without one when the instructions in flight on other units are
/// MATMULs that read none of the words it writes. That is the double buffering of streamed
/// weight tiles: the next tile loads while the array multiplies with this one
/// (docs/cycle-model.md "DMA behind compute"). `programs()` splits the instructions into
/// programs of at most `prog_depth` instructions that each end with END.
class ProgramBuilder {
 public:
  /// A BARRIER at every change of unit.
  explicit ProgramBuilder(std::size_t prog_depth = std::numeric_limits<std::size_t>::max())
      : prog_depth_(prog_depth) {}
  /// Tile loads overlap the MATMULs they do not disturb; `cfg` gives the words per row.
  ProgramBuilder(std::size_t prog_depth, const hw::HwConfig& cfg)
      : prog_depth_(prog_depth), cfg_(&cfg) {}

  /// The `layer` field of the instructions that follow (counters attribute cycles by it).
  void set_layer(std::uint32_t layer) noexcept { layer_ = layer; }
  [[nodiscard]] std::uint32_t layer() const noexcept { return layer_; }
  /// The opcodes with named operands. Each throws std::invalid_argument naming the operand
  /// when a value is wider than its field (docs/isa.md), instead of wrapping it.
  void load(const DmaOp& op);
  void store(const DmaOp& op);
  void matmul(const MatmulOp& op);
  void vector(const VectorOp& op);
  /// An instruction exactly as given: no BARRIER goes in before it (controller tests).
  void raw(const hw::Instr& in) { body_.push_back(in); }
  /// The first word of a streamed tile of `words` words in `mem`, which holds `depth`: the low
  /// and the high half of `mem` in turn, so that the DMA can write one tile while a MATMUL
  /// reads the other; word 0 when the tile is larger than a half. Throws
  /// std::invalid_argument when `words` is 0 or exceeds `depth`.
  std::size_t stream_slot(hw::Mem mem, std::size_t words, std::size_t depth);

  /// The instructions so far, without END.
  [[nodiscard]] const std::vector<hw::Instr>& body() const noexcept { return body_; }
  /// The instructions as programs of at most `prog_depth`, each ending with END (on-chip
  /// memories persist from one program to the next).
  [[nodiscard]] std::vector<std::vector<hw::Instr>> programs() const;
  /// The instructions and END as one program, whatever its length.
  [[nodiscard]] std::vector<hw::Instr> program() const;

 private:
  /// Words [lo, hi) of one memory.
  struct Span {
    hw::Mem mem = hw::Mem::kInput;
    std::size_t lo = 0, hi = 0;
  };
  /// An instruction issued since the last BARRIER: its unit, and the weight and parameter
  /// words a MATMUL reads (`matmul` false: any other instruction, which reads who knows what).
  struct InFlight {
    hw::Unit unit = hw::Unit::kControl;
    bool matmul = false;
    Span weight, param;
  };

  void emit(const hw::Instr& in, const Span* tile_load = nullptr, const InFlight* op = nullptr);
  [[nodiscard]] bool needs_barrier(hw::Unit unit, const Span* tile_load) const;
  void dma(hw::Opcode op, const DmaOp& d);

  std::size_t prog_depth_;
  const hw::HwConfig* cfg_ = nullptr;  ///< set: tile loads may overlap MATMULs
  std::uint32_t layer_ = 0;
  std::vector<hw::Instr> body_;
  hw::Unit last_unit_ = hw::Unit::kControl;
  std::vector<InFlight> in_flight_;    ///< since the last BARRIER (with cfg_ only)
  std::size_t half_[4] = {};           ///< the half stream_slot() gives next, per memory
};

/// A Requant step as a parameter-memory entry (docs/isa.md "params"): mult [31:0], shift
/// [37:32] and the signed bias in two's complement in [63:38].
[[nodiscard]] std::uint64_t encode_param(Requant rq) noexcept;

/// The Requant step of a parameter entry: mult [30:0], shift [37:32], signed bias [63:38].
[[nodiscard]] Requant decode_param(std::uint64_t entry) noexcept;

}  // namespace passim
