// SPDX-License-Identifier: Apache-2.0
/// \file Small float models with random weights from a fixed seed, for tests and developer
/// checks that must not depend on trained weights.
#pragma once

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

}  // namespace passim
