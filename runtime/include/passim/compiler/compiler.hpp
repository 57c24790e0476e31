// SPDX-License-Identifier: Apache-2.0
/// \file Lowers a quantised model to accelerator programs (docs/isa.md) for one hardware
/// configuration: the DRAM image (compiler/layout.hpp) once, then for each decoding step the
/// instruction stream, tiled to the config's R, C, L and memory depths, walking the model's
/// description in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "passim/compiler/layout.hpp"
#include "passim/compiler/program.hpp"
#include "passim/hw/spec.hpp"
#include "passim/kernels/softmax.hpp"
#include "passim/model/description.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim {

/// Compiler choices that change what the program computes or how many passes it makes.
struct CompileOptions {
  /// Attention Softmax: three passes, or online (SOFTMAX `online` = 1: max and sum in one
  /// pass, then normalise; `softmax_online_i16` in the order of the config's lanes).
  kernels::SoftmaxMode softmax = kernels::SoftmaxMode::kThreePass;
};

/// A quantised model compiled for one configuration. Construct it once per run: the DRAM
/// image and layout are computed here, each step's programs on demand.
class ModelCompiler {
 public:
  /// `model` must outlive the compiler. Throws std::runtime_error naming the config and the
  /// memory when a tile, a row or the KV window does not fit, or for a description it does
  /// not compile (post-norm blocks, unmasked attention).
  ModelCompiler(const QuantModel& model, const hw::HwConfig& cfg, CompileOptions opts = {});

  [[nodiscard]] const hw::HwConfig& hw() const noexcept { return cfg_; }
  [[nodiscard]] const QuantModel& model() const noexcept { return model_; }
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

  /// The programs that feed `token` at position `pos`, each ending with END (on-chip
  /// memories persist from one to the next). Throws std::runtime_error if `pos` is beyond
  /// max_positions() or `token` outside the vocabulary.
  [[nodiscard]] std::vector<std::vector<hw::Instr>> step(int token, int pos) const;

 private:
  /// A weight matrix W^T (k, n) in DRAM with its per-column steps, and where its output goes.
  struct Projection {
    std::uint64_t w_t = 0;
    std::uint64_t rq = 0;
    std::size_t k = 0, n = 0;
    std::size_t dst = 0;  ///< vector-scratchpad word of output column 0
    unsigned out_bits = 8;
  };
  /// Output columns [col0, col0 + cols) of a projection, written from word `dst` on.
  struct Columns {
    std::size_t col0 = 0, cols = 0, dst = 0;
  };

  void embed(ProgramBuilder& b, int token, std::size_t pos) const;
  void norm(ProgramBuilder& b, NormKind kind, const QuantNorm& n, const NormDram& d) const;
  void tile(ProgramBuilder& b, const Projection& p, const Columns& c) const;
  void projection(ProgramBuilder& b, const Projection& p) const;
  void attention_block(ProgramBuilder& b, std::size_t l, std::size_t pos) const;
  void qkv(ProgramBuilder& b, std::size_t l) const;
  void rope(ProgramBuilder& b, std::size_t l, std::size_t pos) const;
  void attend(ProgramBuilder& b, std::size_t l, std::size_t pos) const;
  void ffn_block(ProgramBuilder& b, std::size_t l) const;
  void swiglu(ProgramBuilder& b, std::size_t l) const;
  void gelu(ProgramBuilder& b, std::size_t l) const;
  void head(ProgramBuilder& b) const;
  [[nodiscard]] std::size_t words(std::size_t n) const noexcept {
    return (n + cfg_.lanes - 1) / cfg_.lanes;
  }

  const QuantModel& model_;
  ModelDesc desc_;
  hw::HwConfig cfg_;
  CompileOptions opts_;
  Layout layout_;
};

}  // namespace passim
