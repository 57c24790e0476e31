// SPDX-License-Identifier: Apache-2.0
/// \file Lowers a quantised model to accelerator programs (docs/isa.md) for one hardware
/// configuration: the DRAM image (weights, requantisation steps, tables, KV cache) and, for
/// each decoding step, the instruction stream, tiled to the config's R, C, L and SRAM depths.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "passim/model/backend.hpp"
#include "passim/device/device.hpp"
#include "passim/hw/spec.hpp"
#include "passim/kernels/softmax.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim {

/// The instructions of one decoding step, split into programs that each fit the program
/// memory (every program ends with END; on-chip memories persist between programs).
struct StepPrograms {
  std::vector<std::vector<hw::Instr>> programs;
};

/// Compiler choices that change what the program computes or how many passes it makes.
struct CompileOptions {
  /// Attention Softmax: three passes, or online (SOFTMAX `online` = 1: max and sum in one
  /// pass, then normalise; `softmax_online_i16` in the order of the config's lanes).
  kernels::SoftmaxMode softmax = kernels::SoftmaxMode::kThreePass;
};

/// Compiles a `QuantModel` for a `HwConfig`. Throws std::runtime_error naming the config
/// and the memory when a tile, a row or the KV window does not fit.
class ModelCompiler {
 public:
  ModelCompiler(const QuantModel& model, const hw::HwConfig& cfg, CompileOptions opts = {});

  /// Bytes of DRAM the device needs (image + activations + KV cache + program area).
  [[nodiscard]] std::uint64_t dram_bytes() const noexcept { return dram_bytes_; }
  /// The initial DRAM contents (weights, parameters, tables); the rest is zero.
  [[nodiscard]] const std::vector<std::uint8_t>& image() const noexcept { return image_; }
  /// DRAM byte address of the program area (prog_depth instructions).
  [[nodiscard]] std::uint64_t program_addr() const noexcept { return prog_addr_; }
  /// DRAM byte address of the int32 Q.16 logits (vocab) written by every step.
  [[nodiscard]] std::uint64_t logits_addr() const noexcept { return logits_addr_; }
  /// Largest position the vector scratchpad's KV window holds (< seq_len on small configs).
  [[nodiscard]] int max_positions() const noexcept { return max_positions_; }

  /// The programs that feed `token` at position `pos`. Throws std::runtime_error if `pos`
  /// is beyond max_positions().
  [[nodiscard]] StepPrograms step(int token, int pos) const;

  /// DRAM byte addresses of one layer's tensors.
  struct LayerDram {
    std::uint64_t attn_gain, ffn_gain;                  // int16 (dim)
    std::uint64_t wq, wk, wv, wo, w1, w3, w2;           // int8 W^T (in, out) row-major
    std::uint64_t rq_q, rq_k, rq_v, rq_o, rq_1, rq_3, rq_2;  // u64 param entries (out)
    std::uint64_t rq_attn;                              // u64 (n_heads, 2): score, value
    std::uint64_t rq_silu;                              // u64 (2): to_q10, out_rq
    std::uint64_t rq_mul;                               // u64 (hidden)
    // GPT blocks
    std::uint64_t attn_nb, ffn_nb;      // int16 (2, dim): norm gain row, then bias row
    std::uint64_t rq_attn_norm, rq_ffn_norm;  // u64: BatchNorm step, or folded int16->int8 step
    std::uint64_t rq_gelu;              // u64 (2): to_q10, out_rq
  };
  /// DRAM byte addresses outside the layers.
  struct Dram {
    std::uint64_t embedding, rq_embed, final_gain, cls, rq_cls, eps, rope_cos, rope_sin;
    std::uint64_t xn, att, hid;        // int8 activation round trips (dim) (dim) (hidden)
    std::uint64_t k_cache, v_cache;    // (layers, kv_heads, seq_len, head_size) int16 / int8
    std::uint64_t pos_embedding, rq_pos;  // GPT: int8 (seq_len, dim), u64 (seq_len)
    std::uint64_t final_nb, rq_final_norm;  // GPT: as LayerDram::attn_nb / rq_attn_norm
  };
  /// Vector-scratchpad word addresses.
  struct Vec {
    std::size_t x, xn, gain, q, k_new, v_new, rope, k_win, v_win, scores, probs, att, branch;
    std::size_t gate, up, hid, logits;
  };

  struct Emitter;
  void emit_layer(Emitter& e, int layer, int pos) const;
  void emit_gpt_layer(Emitter& e, int layer, int pos) const;
  /// A GPT norm of x into the matmul input scratchpad (through DRAM): LAYERNORM (3 passes),
  /// BATCHNORM (1 pass) or, folded, only the DMA's int16 -> int8 requantisation (0 passes).
  void emit_gpt_norm(Emitter& e, int layer, const QuantNorm& n, std::uint64_t nb,
                     std::uint64_t rq) const;
  /// The KV-cache round trip and attention of every head (queries in vec_.q).
  void emit_attention(Emitter& e, int layer, int pos) const;
  void emit_norm(Emitter& e, int layer, std::uint64_t gain, int frac_bits) const;
  void emit_matmul(Emitter& e, int layer, std::uint64_t w_t, std::uint64_t rq, std::size_t k,
                   std::size_t n, std::size_t col0, std::size_t ncols, std::size_t dst,
                   int out_bits) const;
  void emit_projection(Emitter& e, int layer, std::uint64_t w_t, std::uint64_t rq,
                       std::size_t k, std::size_t n, std::size_t dst, int out_bits) const;

  const QuantModel& model_;
  hw::HwConfig cfg_;
  CompileOptions opts_;
  std::vector<std::uint8_t> image_;
  std::uint64_t dram_bytes_ = 0;
  std::uint64_t prog_addr_ = 0;
  std::uint64_t logits_addr_ = 0;
  int max_positions_ = 0;
  std::size_t chunk_cols_ = 0;  // output channels per weight tile load (multiple of C and L)
  std::vector<LayerDram> layer_dram_;
  Dram dram_{};
  Vec vec_{};
};

}  // namespace passim
