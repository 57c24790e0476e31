// SPDX-License-Identifier: Apache-2.0
/// \file A keyword-spotting Transformer (the KWT family: Berg et al., Interspeech 2021) from its
/// TFLite file, mapped onto the one model description: the speech front end's constants, and
/// an encoder over the front end's features (input projection, class token, learned
/// positions, post-norm blocks with one-head attention and a tanh-GELU FFN, a classifier on
/// the class token). The mapper walks the file's operators in order and recognises each
/// step's pattern; anything else is an error that names the operator, its index and what was
/// expected, and nothing is returned.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "passim/io/tflite.hpp"
#include "passim/model/speech_front_end.hpp"
#include "passim/model/weights.hpp"

namespace passim {

/// A keyword-spotting model: its front end and its encoder (ModelConfig::input_features =
/// the front end's coefficients, one position per frame after the class token).
struct KeywordModel {
  SpeechFrontEnd front_end;
  FloatModel model;
};

/// Maps a verified graph. Throws std::runtime_error naming the file, the operator's index and
/// name, and the expected pattern, step or value.
[[nodiscard]] KeywordModel keyword_model_from_tflite(const tflite::Graph& g);

/// Reads (tflite::Graph::read) and maps `path`; the model's source and SHA-256 are the file's.
[[nodiscard]] KeywordModel load_keyword_model(const std::filesystem::path& path);

/// Class labels, one per line (a KWT labels.txt). Throws naming the file when it cannot be
/// read, or when its number of labels is not `classes`.
[[nodiscard]] std::vector<std::string> read_labels(const std::filesystem::path& path,
                                                   int classes);

}  // namespace passim
