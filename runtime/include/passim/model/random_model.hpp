// SPDX-License-Identifier: Apache-2.0
/// \file Small float models with random weights from a fixed seed, for tests and developer
/// checks that must not depend on trained weights.
#pragma once

#include <array>
#include <string_view>

#include <cstdint>

#include "passim/model/weights.hpp"

namespace passim {

/// The shape of a random encoder. Counts are elements.
struct EncoderShape {
  int dim = 32;
  int hidden = 64;   ///< FFN inner width
  int layers = 2;
  int heads = 2;
  int vocab = 16;    ///< token embedding rows; also the classifier's classes
  int seq_len = 16;  ///< learned positions: the longest sequence
  float norm_eps = 1e-6f;
};

/// Random weights for every tensor a GPT-architecture `c` uses (learned positions, biases,
/// LayerNorm or BatchNorm with running statistics, a final norm when `c.head_norm`, a classifier
/// of `vocab` rows when it is not shared), each drawn from std::mt19937(seed) with
/// std::normal_distribution in a fixed order. `c` must be a validated config.
[[nodiscard]] FloatWeights random_gpt_weights(const ModelConfig& c, std::uint32_t seed);

/// A BERT-style encoder (Devlin et al. 2019): token embedding plus learned positions,
/// post-norm blocks `x = LayerNorm(x + f(x))` (Vaswani et al. 2017, Sec. 3.1), multi-head
/// attention without a mask, a GELU FFN, biases on every projection, no final norm and its own
/// classifier (vocab rows) read from the last position. Every tensor is drawn from
/// std::mt19937(seed) with std::normal_distribution in a fixed order, so a seed always gives
/// the same model on one standard library. Throws std::runtime_error (validate_config) for a
/// shape that is not a valid config.
[[nodiscard]] FloatModel random_encoder(const EncoderShape& shape, std::uint32_t seed);

/// A GPT-2-style decoder (Radford et al. 2019) of `shape`: pre-norm blocks
/// `x = x + f(LayerNorm(x))`, causal attention, a GELU FFN, biases, learned positions, a final
/// LayerNorm and the classifier tied to the token embedding (vocab rows). Weights drawn as
/// random_encoder's. Throws std::runtime_error (validate_config) for a shape that is not a
/// valid config.
[[nodiscard]] FloatModel random_decoder(const EncoderShape& shape, std::uint32_t seed);

/// A named Transformer shape for workloads with random weights (`passim encode --arch`):
/// widths and depths of the published models. The token vocabulary is not part of it (the
/// workload's classifier has `EncoderShape::vocab` classes, 2 by default).
struct ArchShape {
  std::string_view name;
  int dim;        ///< d_model
  int hidden;     ///< FFN inner width (4 d_model in all of these)
  int layers;
  int heads;
  int context;    ///< positions the published model has
  bool decoder;   ///< causal pre-norm (GPT-2) rather than an unmasked post-norm encoder (BERT)
  std::string_view source;
};

/// BERT (Devlin et al. 2019, Sec. 3) and GPT-2 (Radford et al. 2019, Table 2), the shapes of
/// the survey's Table 1 (Kim, Hooper et al. 2023, "Full Stack Optimization of Transformer
/// Inference: a Survey").
/// GPT-2 large and XL (FFN 5120 and 6400) are left out: quantisation takes a dim and a
/// hidden_dim of at most 4096 (the int16 norms' limit).
inline constexpr std::array<ArchShape, 4> kArchShapes{{
    {"bert-base", 768, 3072, 12, 12, 512, false, "BERT-Base, Devlin et al. 2019"},
    {"bert-large", 1024, 4096, 24, 16, 512, false, "BERT-Large, Devlin et al. 2019"},
    {"gpt2", 768, 3072, 12, 12, 1024, true, "GPT-2 small (117M), Radford et al. 2019"},
    {"gpt2-medium", 1024, 4096, 24, 16, 1024, true, "GPT-2 medium (345M), Radford et al. 2019"},
}};

/// The shape named `name`, or nullptr.
[[nodiscard]] const ArchShape* find_arch(std::string_view name) noexcept;

}  // namespace passim
