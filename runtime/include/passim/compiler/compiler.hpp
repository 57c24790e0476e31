// SPDX-License-Identifier: Apache-2.0
/// \file Lowers a quantised model to accelerator programs (docs/isa.md) for one hardware
/// configuration: the DRAM image (compiler/layout.hpp) once, then for each pass (one decoding
/// step, or n positions of a sequence at once) the instruction stream, tiled to the config's
/// R, C, L and memory depths, walking the model's description in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "passim/compiler/layout.hpp"
#include "passim/compiler/program.hpp"
#include "passim/compiler/residency.hpp"
#include "passim/hw/spec.hpp"
#include "passim/kernels/softmax.hpp"
#include "passim/model/description.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim {

/// Where attention's products (q k^T and p v) run: on the systolic array (MATMUL_ACT on
/// digit-split operands, compiler/attention.cpp) or on the vector unit (ATTN_SCORE,
/// ATTN_VALUE). `kAuto`: for each pass of two or more rows (prefill, encoders) whichever the
/// units' closed forms say is faster, the vector unit for a single decoding step; `kArray`:
/// both on the array in every pass (p v on the vector unit where its operands do not fit);
/// `kScores`: q k^T on the array, p v on the vector unit. A pass whose operands do not fit the
/// array's memories runs on the vector unit.
enum class AttentionUnit : std::uint8_t { kAuto, kArray, kScores, kVector };
/// "auto", "array", "scores" or "vector".
[[nodiscard]] const char* attention_unit_name(AttentionUnit u) noexcept;
/// The unit of that name; anything else is kAuto.
[[nodiscard]] AttentionUnit attention_unit(std::string_view name) noexcept;

/// Compiler choices that change what the program computes or how many passes it makes.
struct CompileOptions {
  /// Attention Softmax: three passes, or online (SOFTMAX `online` = 1: max and sum in one
  /// pass, then normalise; `softmax_online_i16` in the order of the config's lanes).
  kernels::SoftmaxMode softmax = kernels::SoftmaxMode::kThreePass;
  /// Weights resident on chip (preload() loads every tile once, MATMULs use them in place),
  /// streamed by every MATMUL, or resident when the config's weight scratchpad holds them.
  WeightsMode weights = WeightsMode::kAuto;
  /// Where attention's products run; the outputs are the same bit for bit.
  AttentionUnit attention = AttentionUnit::kAuto;
};

/// A quantised model compiled for one configuration. Construct it once per run: the DRAM
/// image and layout are computed here, each step's programs on demand.
class ModelCompiler {
 public:
  /// `model` must outlive the compiler. Throws std::runtime_error naming the config and the
  /// memory when a tile, a row or the KV window does not fit, or with WeightsMode::kResident
  /// when the weight tiles do not fit the weight scratchpad.
  ModelCompiler(const QuantModel& model, const hw::HwConfig& cfg, CompileOptions opts = {});

  [[nodiscard]] const hw::HwConfig& hw() const noexcept { return cfg_; }
  [[nodiscard]] const QuantModel& model() const noexcept { return model_; }
  [[nodiscard]] const ModelDesc& description() const noexcept { return desc_; }
  [[nodiscard]] const CompileOptions& options() const noexcept { return opts_; }
  /// Bytes of DRAM the device needs (image + activations + KV cache + program area).
  [[nodiscard]] std::uint64_t dram_bytes() const noexcept { return layout_.dram.bytes; }
  /// The initial DRAM contents (weights, parameters, tables); the rest is zero.
  [[nodiscard]] const std::vector<std::uint8_t>& image() const noexcept { return layout_.image; }
  /// DRAM byte address of the program area (prog_depth instructions).
  [[nodiscard]] std::uint64_t program_addr() const noexcept { return layout_.dram.program; }
  /// DRAM byte address of the int32 Q.16 logits (classes) written by every step.
  [[nodiscard]] std::uint64_t logits_addr() const noexcept { return layout_.dram.logits; }
  /// Largest position the vector scratchpad's KV window holds (< seq_len on small configs).
  [[nodiscard]] int max_positions() const noexcept { return layout_.max_positions; }
  [[nodiscard]] const Layout& layout() const noexcept { return layout_; }
  /// What a DMA instruction of this model's programs moves (weights, activations, KV cache).
  [[nodiscard]] DmaMoves dma_moves(const hw::Instr& in) const { return passim::dma_moves(layout_.dram, in); }
  /// Whether `in` loads a weight tile: a DMA_LOAD into the weight scratchpad of a weight
  /// matrix (not attention's operands on the array, nor its identity matrix).
  [[nodiscard]] bool loads_weight_tile(const hw::Instr& in) const;

  /// Whether the weights are resident, where each tile lives and why not (the reason).
  [[nodiscard]] const Residency& residency() const noexcept { return residency_; }
  /// The programs that load every weight tile (and, when they fit, its requantisation steps)
  /// into its fixed on-chip home; run once before the first step() or pass(). Empty when the
  /// weights are streamed.
  [[nodiscard]] std::vector<std::vector<hw::Instr>> preload() const;

  /// The programs that feed `token` at position `pos`, each ending with END (on-chip
  /// memories persist from one to the next). Throws std::runtime_error if `pos` is beyond
  /// max_positions() or `token` outside the vocabulary.
  [[nodiscard]] std::vector<std::vector<hw::Instr>> step(int token, int pos) const;

  /// The most positions one pass from position `pos` on can take (the vector scratchpad holds
  /// their activations and a KV window of pos + n positions; MATMUL's m and the input
  /// scratchpad hold n rows), at most `wanted`; 0 when not even one fits.
  [[nodiscard]] std::size_t rows_at(int pos, std::size_t wanted) const;

  /// The programs of one pass over `tokens` at positions pos .. pos + n - 1: every projection
  /// and FFN matmul streams n rows through each weight tile, attention is causal (query i sees
  /// positions 0 .. pos + i), and the KV cache gets all n positions. The logits are the last
  /// position's. Bit for bit the same as n step() calls. An unmasked model's sequence (pos 0)
  /// that one pass cannot hold runs in chunks of rows, as features_pass() says. Throws
  /// std::runtime_error when a token is outside the vocabulary or n exceeds rows_at(pos, n)
  /// (unmasked: when not even chunks fit).
  [[nodiscard]] std::vector<std::vector<hw::Instr>> pass(std::span<const int> tokens,
                                                         int pos) const;
  /// A model over continuous features (ModelConfig::input_features > 0): the class token and
  /// `frames` rows of int8 features, which the host writes to DRAM at features_addr()
  /// (frames, input_features) first. The input projection runs on the array; the logits are
  /// the class token's. One pass when the config holds every row; otherwise chunks of rows,
  /// layer by layer, the residual rows parked in DRAM between them (every row's keys and
  /// values first, then each chunk's attention over all of them), bit for bit the same.
  /// Throws std::runtime_error when the model takes token ids, or when not even one row and
  /// the window of every position fit the vector scratchpad.
  [[nodiscard]] std::vector<std::vector<hw::Instr>> features_pass(std::size_t frames) const;
  /// DRAM byte address of the int8 features of a features_pass() (0 for a token model).
  [[nodiscard]] std::uint64_t features_addr() const noexcept { return layout_.dram.features; }

 private:
  /// A weight matrix W^T (k, n) in DRAM with its per-column steps, and where its output goes.
  struct Projection {
    std::uint64_t w_t = 0;
    std::uint64_t rq = 0;
    std::size_t k = 0, n = 0;
    std::size_t dst = 0;  ///< vector-scratchpad word of output column 0
    unsigned out_bits = 8;
  };
  /// Output columns [col0, col0 + cols) of a projection, written from word `dst` on, its
  /// rows `stride` words apart (0: packed).
  struct Columns {
    std::size_t col0 = 0, cols = 0, dst = 0, stride = 0;
    std::size_t head_size = 0;  ///< not 0: MATMUL_HEADS (heads from new words, rows packed)
  };

  /// The positions of one pass: n rows from position pos0 on, their vector-scratchpad
  /// regions and DRAM round trips.
  struct Rows {
    std::size_t n = 1, pos0 = 0;
    VectorLayout v;
    std::uint64_t xn = 0, att = 0, hid = 0;
    /// An unmasked sequence split into chunks of rows (encoder_chunks): the whole sequence's
    /// length, the window every row attends to (0: pos0 + n, the pass itself).
    std::size_t t = 0;
  };
  /// A norm's input: `rows` rows from vector word `src` on; `residual`: the matmuls read the
  /// residual itself (a post-norm block, a head without a norm), requantised by the DMA.
  struct NormRows {
    std::size_t src = 0, rows = 1;
    bool residual = false;
  };

  [[nodiscard]] std::vector<std::vector<hw::Instr>> plan_step() const;
  /// The programs of one pass: token rows, or (`features`) the class token and the
  /// projected features.
  [[nodiscard]] std::vector<std::vector<hw::Instr>> emit(std::span<const int> tokens,
                                                         const Rows& r,
                                                         bool features = false) const;
  void embed(ProgramBuilder& b, const Rows& r, std::span<const int> tokens) const;
  void embed_features(ProgramBuilder& b, const Rows& r) const;
  /// An unmasked sequence of n positions (`tokens`, or features when empty) in chunks of
  /// rows, layer by layer (chunks.cpp).
  [[nodiscard]] std::vector<std::vector<hw::Instr>> encoder_chunks(std::span<const int> tokens,
                                                                   std::size_t n) const;
  void park_rows(ProgramBuilder& b, const Rows& r, bool store) const;
  void keys_and_values(ProgramBuilder& b, const Rows& r, std::size_t l) const;
  void add_positions(ProgramBuilder& b, const Rows& r) const;
  void norm(ProgramBuilder& b, const Rows& r, NormRows in, NormKind kind, const QuantNorm& n,
            const NormDram& d) const;
  void post_norm(ProgramBuilder& b, const Rows& r, const NormDesc& nd, const QuantNorm& n,
                 const NormDram& d) const;
  /// The parameter entry of the `count` steps at DRAM byte `dram` that a vector instruction
  /// reads: their resident home, or `spad` after a DMA_LOAD of them there.
  [[nodiscard]] std::size_t steps(ProgramBuilder& b, std::uint64_t dram, std::size_t count,
                                  std::size_t spad = 0) const;
  void tile(ProgramBuilder& b, const Rows& r, const Projection& p, const Columns& c) const;
  void projection(ProgramBuilder& b, const Rows& r, const Projection& p) const;
  void attention_block(ProgramBuilder& b, const Rows& r, std::size_t l) const;
  void qkv(ProgramBuilder& b, const Rows& r, std::size_t l) const;
  void rope(ProgramBuilder& b, const Rows& r, std::size_t l) const;
  void cache_rows(ProgramBuilder& b, const Rows& r, std::size_t l) const;
  /// The KV cache row of position 0 of KV head g in layer l (max_positions rows per head).
  [[nodiscard]] std::uint64_t cache_row0(std::size_t l, std::size_t g) const noexcept {
    return (l * desc_.layers[l].attention.n_kv_heads + g) * desc_.embedding.max_positions;
  }
  void attend(ProgramBuilder& b, const Rows& r, std::size_t l) const;
  /// The positions row j of the pass `r` attends to in layer l: 0 .. pos0 + j (causal), or
  /// the whole window of pos0 + n (no mask).
  /// The positions an unmasked pass attends to: the whole sequence of a chunked one.
  [[nodiscard]] static std::size_t window(const Rows& r) noexcept {
    return r.t != 0 ? r.t : r.pos0 + r.n;
  }
  [[nodiscard]] std::size_t row_window(const Rows& r, std::size_t l, std::size_t j) const {
    return desc_.layers[l].attention.mask == MaskKind::kNone ? window(r) : r.pos0 + j + 1;
  }
  /// Where a pass's attention on the array keeps its operands (words of each memory,
  /// parameter entries) for a window of t positions and chunks of nb query rows; key_group and
  /// prob_group in bytes.
  struct ArrayAttention {
    std::size_t t = 0, nb = 0, key_group = 0, prob_group = 0;
    bool values_on_array = true;  ///< p v by MATMUL_ACT, else ATTN_VALUE on the vector unit
    std::size_t w_eye = 0, w_keys = 0, w_values = 0;  ///< weight words
    std::size_t v_probs = 0, v_work = 0, v_values = 0;  ///< vector words
    std::size_t rq_scores = 0, rq_values = 0;  ///< parameter entries of t and hs steps
  };
  /// Query rows j0 .. j0 + rows - 1 of head h.
  struct Chunk {
    std::size_t h = 0, j0 = 0, rows = 0;
  };
  /// The array's plan for the pass `r`, or nullopt: the vector unit (by the options, or when
  /// not even one query row's operands fit the memories).
  [[nodiscard]] std::optional<ArrayAttention> array_attention(const Rows& r) const;
  /// Fills `p` for chunks of nb rows, p v on the array when `values`; false when they do not
  /// fit.
  bool place_array_attention(const Rows& r, std::size_t nb, bool values,
                             ArrayAttention& p) const;
  /// Estimated cycles per layer of the two products on either unit (what differs between
  /// them), from the closed forms of the units.
  struct AttentionCost {
    std::size_t vector_scores = 0, vector_values = 0, array_scores = 0, array_values = 0;
  };
  [[nodiscard]] AttentionCost attention_cost(const Rows& r) const;
  void attend_on_array(ProgramBuilder& b, const Rows& r, std::size_t l,
                       const ArrayAttention& p) const;
  void digit_step(ProgramBuilder& b, std::size_t which) const;
  void kv_operands(ProgramBuilder& b, std::size_t l, std::size_t g,
                   const ArrayAttention& p) const;
  void query_digits(ProgramBuilder& b, const Rows& r, std::size_t l,
                    const ArrayAttention& p) const;
  void chunk_scores(ProgramBuilder& b, const Rows& r, std::size_t l, const Chunk& c,
                    const ArrayAttention& p) const;
  void chunk_values(ProgramBuilder& b, const Rows& r, std::size_t l, const Chunk& c,
                    const ArrayAttention& p) const;
  void ffn_block(ProgramBuilder& b, const Rows& r, std::size_t l) const;
  void swiglu(ProgramBuilder& b, const Rows& r, std::size_t l) const;
  void gelu(ProgramBuilder& b, const Rows& r, std::size_t l) const;
  void head(ProgramBuilder& b, const Rows& r) const;
  [[nodiscard]] std::size_t words(std::size_t n) const noexcept {
    return (n + cfg_.lanes - 1) / cfg_.lanes;
  }

  const QuantModel& model_;
  ModelDesc desc_;
  hw::HwConfig cfg_;
  CompileOptions opts_;
  Layout layout_;
  Residency residency_;
  /// q, k and v run as wide tiles, not one tile per head: MATMULs where a head fills whole
  /// vector words, else one MATMUL_HEADS per projection. With resident weights only
  /// (streamed, the narrow per-head tiles load under the MATMULs and the wide ones would not).
  bool wide_heads_ = true;
  /// Every block of vector steps a pass loads (DRAM byte address -> entries and the layer of
  /// its first use), as the passes compiled so far asked for them; the constructor makes them
  /// resident from this.
  mutable std::map<std::uint64_t, StepBlock> step_blocks_;
};

}  // namespace passim
