// SPDX-License-Identifier: Apache-2.0
/// \file Where a compiled model lives on the accelerator: the DRAM image (weights,
/// requantisation steps, tables, activations, KV cache, program area) and the regions of the
/// vector scratchpad, for one hardware configuration.
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "passim/hw/spec.hpp"
#include "passim/model/description.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim {

/// A norm's DRAM: its gain row and, for LayerNorm and BatchNorm, its bias row right after
/// (one DMA of one or two rows of int16), a BatchNorm's requantisation step, and for a post-norm
/// block (or a head without a norm) the residual's int8 step and the norm output's int16 step.
struct NormDram {
  std::uint64_t rows = 0;
  std::uint64_t rq = 0;      ///< BatchNorm, or the residual -> int8 step of a block reading x
  std::uint64_t out_rq = 0;  ///< post-norm: the norm's int8 output -> int16 residual (EMBED)
};

/// DRAM byte addresses of one layer's tensors. Weights are stored transposed, W^T (in, out)
/// row-major, the weight scratchpad's layout; requantisation steps are 8-byte parameter
/// entries (encode_param).
struct LayerDram {
  NormDram attn_norm, ffn_norm;
  std::uint64_t wq = 0, wk = 0, wv = 0, wo = 0, w1 = 0, w3 = 0, w2 = 0;
  std::uint64_t rq_q = 0, rq_k = 0, rq_v = 0, rq_o = 0, rq_1 = 0, rq_3 = 0, rq_2 = 0;  ///< (out)
  std::uint64_t rq_attn = 0;  ///< (n_heads, 2): the score step, then the value step
  std::uint64_t rq_act = 0;   ///< (2): SiLU's or GELU's to_q10 and out_rq
  std::uint64_t rq_mul = 0;   ///< SwiGLU: (hidden) the product's steps
};

/// DRAM byte addresses outside the layers.
struct ModelDram {
  std::uint64_t embedding = 0, rq_embed = 0;          ///< int8 (vocab, dim), (vocab) steps
  /// Models over continuous features: the input projection W^T (input_features, dim) and its
  /// steps, and the int8 features the host writes, (seq_len, input_features).
  std::uint64_t input_proj = 0, rq_input = 0, features = 0;
  std::uint64_t pos_embedding = 0, rq_pos = 0;        ///< learned positions: (seq_len, dim)
  NormDram final_norm;
  std::uint64_t cls = 0, rq_cls = 0;                  ///< int8 W^T (dim, classes), steps
  std::uint64_t eps = 0;                              ///< the norms' eps, one u64 entry
  std::uint64_t rope_cos = 0, rope_sin = 0;           ///< RoPE: int16 (seq_len, head_size / 2)
  /// Attention on the array (compiler/attention.cpp): the int8 identity W^T (2 * head_size,
  /// 2 * head_size) that transposes a KV head's key digits, and the two digit steps of the
  /// DMA_STOREs, {1, 8} (round(x / 256)) and {32897, 31} (x >= 32640).
  std::uint64_t attn_eye = 0, digit_rq = 0;
  std::uint64_t xn = 0, att = 0, hid = 0;  ///< int8 round trips into the input scratchpad
  std::uint64_t k_cache = 0, v_cache = 0;  ///< (layers, kv_heads, seq_len, head_size) int16, int8
  std::uint64_t logits = 0;                ///< int32 Q.16 (classes)
  std::uint64_t program = 0;               ///< prog_depth 16-byte instructions
  /// int8 round trips of a whole sequence (Layout::max_rows rows of xn, att and hid), after
  /// the program area so that a single position's addresses do not depend on them.
  std::uint64_t seq_xn = 0, seq_att = 0, seq_hid = 0;
  /// An unmasked sequence split into chunks: every row's int16 residual (seq_len, dim)
  /// between the chunks' programs (0 for a causal model).
  std::uint64_t seq_x = 0;
  /// Attention on the array, one KV head at a time: the window's key digits (seq_len,
  /// [k_hi | k_lo]) and their transpose (2 * head_size, seq_len); the pass's query digits
  /// (rows, n_heads, 3 groups of key_group bytes: [q_hi 0 | q_lo q_hi | 0 q_lo], the zeros
  /// never written); a chunk's probability digits (rows, 2 groups of ceil(2 * seq_len / R) * R
  /// bytes); a row of zeros (never written).
  std::uint64_t key_digits = 0, key_t = 0, query_digits = 0, prob_digits = 0, zeros = 0;
  std::uint64_t bytes = 0;                 ///< everything above
};

/// Vector-scratchpad word addresses for `rows` positions at a time. Row-major regions (x, xn,
/// q, k_new, v_new, branch, gate, up, hid) hold row r at region + r * (its row's words); att
/// is head-major (head h, row r at att + (h * rows + r) * ceil(head_size / L)). The KV window
/// (positions 0..t - 1 of one KV head, plus its scores and probabilities) takes what the
/// fixed regions leave.
struct VectorLayout {
  std::size_t x = 0, xn = 0, gain = 0, q = 0, k_new = 0, v_new = 0, rope = 0, att = 0;
  std::size_t branch = 0, gate = 0, up = 0, hid = 0, logits = 0;
  std::size_t k_win = 0, v_win = 0, scores = 0, probs = 0;
  std::size_t rows = 1;
};

/// What a DMA instruction moves, from the DRAM region it reads or writes: the model's
/// constants (weights, requantisation and norm parameters, tables), activations (round trips,
/// logits), or the KV cache. `kNone` for every other opcode.
enum class DmaMoves : std::uint8_t { kNone, kWeights, kActivations, kKvCache };

/// Names of DmaMoves values in order: "", "weights", "activations", "kv_cache".
inline constexpr std::array<std::string_view, 4> kDmaMovesNames = {"", "weights", "activations",
                                                                   "kv_cache"};

/// What `in` moves, by the DRAM address it reads or writes in the map `d`: below the
/// activations, weights (the model image); the KV cache's region, kv_cache; anything else
/// (round trips, logits, whole-sequence rows), activations. kNone for every other opcode.
[[nodiscard]] DmaMoves dma_moves(const ModelDram& d, const hw::Instr& in);

/// The whole layout of a model on one configuration.
struct Layout {
  std::vector<std::uint8_t> image;  ///< initial DRAM contents up to the activations
  std::vector<LayerDram> layers;
  ModelDram dram;
  VectorLayout vec;
  std::size_t chunk_cols = 0;  ///< output channels per weight tile: a multiple of C and L
  int max_positions = 0;       ///< the KV window the vector scratchpad holds, one row at a time
  std::size_t max_rows = 1;    ///< most rows of one whole-sequence pass (MATMUL m, memories)
};

/// Lays out `model` (described by `desc`) for `cfg`. Throws std::runtime_error naming the
/// config and the memory when a tile, a row or the KV window does not fit, or the model needs
/// more DRAM than the 32-bit DMA address reaches.
[[nodiscard]] Layout plan_layout(const QuantModel& model, const ModelDesc& desc,
                                 const hw::HwConfig& cfg);

/// The widest weight tile of which two fit side by side, one in each half of the weight
/// scratchpad and of the parameter memory (a multiple of C and L): the tile of streamed
/// weights, so that the next tile loads into one half while a MATMUL reads the other
/// (docs/cycle-model.md "DMA behind compute"). 0 when half the memories cannot hold one.
[[nodiscard]] std::size_t double_buffered_columns(const ModelDesc& desc, const hw::HwConfig& cfg);

/// Bytes of one digit group of a key, [k_hi | k_lo] padded to whole input-scratchpad words:
/// ceil(2 * head_size / R) * R.
[[nodiscard]] std::size_t key_group_bytes(std::size_t head_size, const hw::HwConfig& cfg);
/// Bytes of one digit group of a probability row of t_len positions: ceil(2 * t_len / R) * R.
[[nodiscard]] std::size_t prob_group_bytes(std::size_t t_len, const hw::HwConfig& cfg);
/// The vector-scratchpad regions for `rows` positions (<= layout.max_rows) with a KV window of
/// `t_len` positions, or false when they do not fit the scratchpad. rows = 1 gives
/// layout.vec's fixed regions.
[[nodiscard]] bool plan_rows(const ModelDesc& desc, const hw::HwConfig& cfg,
                             const Layout& layout, std::size_t rows, std::size_t t_len,
                             VectorLayout& out);

}  // namespace passim
