// SPDX-License-Identifier: Apache-2.0
/// \file The float32 weights of a model, as every loader fills them (llama2.c, GGUF).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "passim/model/config.hpp"

namespace passim {

/// Float32 weights of a Llama-style or GPT-style model, row-major (out_features, in_features).
struct FloatWeights {
  std::vector<float> token_embedding;  ///< (vocab, dim)
  std::vector<float> rms_att;          ///< (n_layers, dim)
  std::vector<float> wq;               ///< (n_layers, dim, dim)
  std::vector<float> wk;               ///< (n_layers, kv_dim, dim)
  std::vector<float> wv;               ///< (n_layers, kv_dim, dim)
  std::vector<float> wo;               ///< (n_layers, dim, dim)
  std::vector<float> rms_ffn;          ///< (n_layers, dim)
  std::vector<float> w1;               ///< (n_layers, hidden, dim)
  std::vector<float> w2;               ///< (n_layers, dim, hidden)
  std::vector<float> w3;               ///< (n_layers, hidden, dim)
  std::vector<float> rms_final;        ///< (dim)
  std::vector<float> wcls;             ///< (vocab, dim); empty when the classifier is shared

  // GPT blocks only (Arch::kGpt; empty for llama). The norm weights (gamma) above are the
  // LayerNorm/BatchNorm weights; w1 is the FFN up projection, w2 the down one, w3 is empty.
  std::vector<float> pos_embedding;              ///< (seq_len, dim) learned positions
  std::vector<float> att_norm_bias;              ///< (n_layers, dim) beta
  std::vector<float> ffn_norm_bias;              ///< (n_layers, dim) beta
  std::vector<float> final_norm_bias;            ///< (dim) beta
  std::vector<float> att_norm_mean, att_norm_var;    ///< (n_layers, dim) BatchNorm running stats
  std::vector<float> ffn_norm_mean, ffn_norm_var;    ///< (n_layers, dim) BatchNorm running stats
  std::vector<float> final_norm_mean, final_norm_var;  ///< (dim) BatchNorm running stats
  std::vector<float> bq, bk, bv, bo;             ///< (n_layers, dim) projection biases
  std::vector<float> b1;                         ///< (n_layers, hidden) FFN up bias
  std::vector<float> b2;                         ///< (n_layers, dim) FFN down bias
  // Encoders over continuous inputs only (ModelConfig::input_features > 0; else empty).
  std::vector<float> input_proj;                 ///< (dim, input_features)
  std::vector<float> input_bias;                 ///< (dim)
  std::vector<float> class_token;                ///< (dim), when ModelConfig::class_token
  std::vector<float> bcls;                       ///< (classes) classifier bias

  /// The classifier matrix (vocab, dim): `wcls`, or the token embedding when shared.
  [[nodiscard]] std::span<const float> classifier() const noexcept {
    return wcls.empty() ? std::span<const float>(token_embedding) : std::span<const float>(wcls);
  }
};

/// A float model and where it came from.
struct FloatModel {
  ModelConfig config;
  FloatWeights weights;
  std::string source;  ///< file path as given
  std::string sha256;  ///< of the whole file
};

}  // namespace passim
