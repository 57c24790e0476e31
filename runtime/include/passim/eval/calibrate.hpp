// SPDX-License-Identifier: Apache-2.0
/// \file Calibration: running the float reference over text to measure activation ranges.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "passim/io/tokenizer.hpp"
#include "passim/model/weights.hpp"
#include "passim/quant/calibration.hpp"

namespace passim {

/// Runs the float model over `documents` (each from an empty cache, BOS first, at most
/// seq_len tokens) and records activation ranges; an unmasked model (an encoder) runs each
/// document as one whole sequence. Deterministic.
[[nodiscard]] Calibration calibrate(const FloatModel& model, const std::vector<std::vector<int>>& docs);

/// Runs the float model over inputs of continuous features (ModelConfig::input_features > 0):
/// each of `inputs` holds `frames` rows of input_features values and runs as one sequence.
/// Records the activation ranges and each feature's largest |value| (Calibration::input_absmax).
/// Throws std::runtime_error when the model takes token ids or an input's size is not
/// frames * input_features.
[[nodiscard]] Calibration calibrate_features(const FloatModel& model,
                                             const std::vector<std::vector<float>>& inputs,
                                             std::size_t frames);
/// The default calibration set when no text is given: the float model's own continuations
/// (greedy from an empty prompt, then three sampled runs at temperature 1, seeds 1..3), each
/// `positions` long. Deterministic for a given model.
[[nodiscard]] std::vector<std::vector<int>> self_generated_calibration(const FloatModel& model,
                                                                       int positions);

/// The token ids of the documents of a calibration text (split on <|endoftext|>), BOS first,
/// each cut to `c.seq_len` tokens (with a notice to `notice`); only the bytes that can hold
/// them are encoded. Throws std::runtime_error naming `path` (and the document) when the text
/// cannot be read or encoded.
[[nodiscard]] std::vector<std::vector<int>> calibration_documents(
    const ModelConfig& c, const Tokenizer& tok, const std::string& path,
    const std::function<void(std::string_view)>& notice);

}  // namespace passim
