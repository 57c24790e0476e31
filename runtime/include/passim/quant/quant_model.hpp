// SPDX-License-Identifier: Apache-2.0
/// \file The quantised model: int8 weights, requantisation steps and tables, produced by
/// calibration + quantisation and stored in the versioned project format (.psm).
/// Every integer backend reads this one structure, so they all see identical integers.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "passim/fixed_point.hpp"
#include "passim/model/activations.hpp"
#include "passim/model/config.hpp"

namespace passim {

/// Integer normalisation parameters: RMSNorm (kernels::rmsnorm_i8: gain, frac_bits),
/// LayerNorm (kernels::layernorm_i8: gain, frac_bits, bias), BatchNorm (kernels::batchnorm_i8:
/// gain, bias, rq), or a BatchNorm folded into the next matmul (only rq: the int16 -> int8
/// step of the residual, requantize(x, rq, 8), that the DMA applies on its way to DRAM).
/// A post-norm block has both: rq for its input (the residual itself, as a folded BatchNorm)
/// and a LayerNorm after its residual add whose int8 output out_rq turns back into int16; a
/// head without a norm has only rq.
struct QuantNorm {
  std::vector<std::int16_t> gain;  ///< (dim) Q.frac_bits (BatchNorm: scaled by rq)
  std::int32_t frac_bits = 0;
  std::vector<std::int16_t> bias;  ///< (dim) beta in output LSB (LayerNorm, BatchNorm)
  Requant rq;                      ///< BatchNorm step; folded BatchNorm: residual -> int8
  /// Post-norm blocks: the norm's int8 output -> the int16 residual stream (kernels::embed_i16,
  /// the EMBED step); `rq` is then the block input's step, residual -> int8.
  Requant out_rq;
};

/// How a BatchNorm model is lowered: a one-pass affine op before each matmul, or folded into
/// the weights and biases of the matmuls that read it (no pass at all).
enum class BatchNormMode : std::uint8_t { kUnfused = 0, kFolded = 1 };

/// One quantised Transformer layer. Weights are int8 (out, in) row-major with symmetric
/// per-output-channel scales folded into the per-channel requantisation steps. Queries, keys
/// and values have one activation scale per head, also folded into those steps.
struct QuantLayer {
  QuantNorm attn_norm;
  std::vector<std::int8_t> wq, wk, wv, wo;   ///< (dim,dim) (kv,dim) (kv,dim) (dim,dim)
  std::vector<Requant> rq_q, rq_k;           ///< (dim) (kv) -> kQkBits-bit in int16
  std::vector<Requant> rq_v;                 ///< (kv) -> int8
  std::vector<Requant> rq_o;                 ///< (dim) -> int16 residual
  std::vector<Requant> score_rq;     ///< (n_heads) q.k -> Q.10 logits, folds 1/sqrt(head_size)
  std::vector<Requant> attn_out_rq;  ///< (n_heads) p.v -> int8
  QuantNorm ffn_norm;
  std::vector<std::int8_t> w1, w3, w2;       ///< (hidden,dim) (hidden,dim) (dim,hidden)
  std::vector<Requant> rq_1, rq_3;           ///< (hidden) -> int16 gate and up
  std::vector<Requant> rq_2;                 ///< (dim) -> int16 residual
  Requant silu_in_rq;                        ///< int16 gate -> Q.10
  Requant silu_out_rq;                       ///< gate * sigmoid (Q0.15) -> int16
  std::vector<Requant> mul_rq;               ///< (hidden) silu * up -> int8 (input of w2)
  // GPT blocks: w1 is the up projection (rq_1 -> int8 with its bias), w3/rq_3/mul_rq empty;
  // every rq_* carries the projection's bias (Requant::bias, accumulator LSB).
  Requant gelu_in_rq;                        ///< int8 up -> Q.10 (kernels::gelu_i8)
  Requant gelu_out_rq;                       ///< up * Phi (Q0.16) -> int8 (input of w2)
};

/// Activation scales (real units per LSB), kept for reports and accuracy tools only; the
/// integer forward never reads them.
struct QuantScales {
  float residual = 0;                          ///< int16 residual stream
  /// Per layer, indexed by `Act`; for Q, K and V the largest of the per-head scales.
  std::vector<std::array<float, std::size_t(Act::kCount)>> layer;
  float final_norm = 0;
};

inline constexpr int kLogitFracBits = 16;  ///< logits are int32 in Q.16

struct QuantModel {
  ModelConfig config;
  std::uint64_t norm_eps = 0;                  ///< eps * dim / s_residual^2
  std::vector<std::int8_t> token_embedding;    ///< (vocab, dim) per-row scales
  std::vector<Requant> embed_rq;               ///< (vocab) row -> int16 residual
  std::vector<QuantLayer> layers;
  QuantNorm final_norm;
  std::vector<std::int8_t> wcls;               ///< (vocab, dim); empty: use the embedding
  std::vector<Requant> rq_cls;                 ///< (vocab) -> int32 logits, Q.16
  std::vector<std::int16_t> rope_cos, rope_sin;  ///< (seq_len, head_size / 2) Q1.14; GPT: empty
  std::vector<std::int8_t> pos_embedding;      ///< GPT: (seq_len, dim) per-row scales
  std::vector<Requant> pos_rq;                 ///< GPT: (seq_len) row -> int16 residual
  // Models over continuous features (ModelConfig::input_features > 0): the host quantises
  // feature j to clamp(round(f_j / input_scale[j]), -127, 127) (quantize_features), one scale
  // per feature, folded into input_proj's columns; the input projection turns a row of them
  // into the residual stream. The class token is token_embedding's one row, embed_rq its step.
  std::vector<float> input_scale;              ///< (input_features) real units per LSB
  std::vector<std::int8_t> input_proj;         ///< (dim, input_features) per-row scales
  std::vector<Requant> rq_input;               ///< (dim) with input_bias -> int16 residual
  BatchNormMode batchnorm = BatchNormMode::kUnfused;  ///< BatchNorm models: how it was lowered
  QuantScales scales;
  std::vector<std::string> char_vocab;         ///< character-level tokenizer pieces, or empty
  std::string source_sha256;                   ///< of the float checkpoint it came from
  std::string calibration;                     ///< what calibration ran, for the model card

  [[nodiscard]] const std::vector<std::int8_t>& classifier() const noexcept {
    return wcls.empty() ? token_embedding : wcls;
  }
};

}  // namespace passim
