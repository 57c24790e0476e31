// SPDX-License-Identifier: Apache-2.0
/// \file KWT's post-norm encoder blocks and its head, as steps over its TFLite file's operators
/// (tflite_walk.hpp), for keyword_model_from_tflite().
#pragma once

#include "passim/model/weights.hpp"
#include "tflite_walk.hpp"

namespace passim::tflite {

/// One post-norm block read from `x` (the block's input): attention with one head (q, k, v
/// without biases, the output projection with one), LayerNorm, the tanh-GELU FFN, LayerNorm.
/// Appends the block's weights to `w`, sets c.hidden_dim, and checks that every LayerNorm's
/// epsilon equals `eps` (set by the first). Returns the block's output.
int encoder_block(OpWalk& walk, int x, ModelConfig& c, FloatWeights& w, float& eps);

/// Position 0's row (the class token) and the classifier with its bias; sets c.vocab_size to
/// the classes. Returns the logits.
int classifier_head(OpWalk& walk, int x, std::int64_t d, ModelConfig& c, FloatWeights& w);

}  // namespace passim::tflite
