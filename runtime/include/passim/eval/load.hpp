// SPDX-License-Identifier: Apache-2.0
/// \file The front door of the runtime: a model file (llama2.c `.bin`, GGUF or `.psm`, told by
/// its first bytes) and its tokenizer in memory, quantised on demand.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "passim/io/tokenizer.hpp"
#include "passim/model/weights.hpp"
#include "passim/quant/calibration.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim {

/// Receives progress notices and warnings (one line each, without a newline).
using Notice = std::function<void(std::string_view)>;

/// Which model to read.
struct ModelSource {
  std::string path;       ///< the model file; empty: the built-in model (`builtin`)
  std::string tokenizer;  ///< llama2.c tokenizer or GGUF file; empty: the model's own, else
                          ///< tokenizer.bin or tok512.bin next to the model
  std::span<const std::uint8_t> builtin;  ///< GGUF bytes of the built-in model
  std::string builtin_name;               ///< its name in messages
  bool need_float = false;  ///< a quantised `.psm` is an error (the float weights are needed)
};

/// A model in memory: its float weights and/or its integer model, and its tokenizer.
struct LoadedModel {
  std::optional<FloatModel> float_model;
  std::optional<QuantModel> quant_model;
  std::optional<Tokenizer> tokenizer;
  std::string name;    ///< the path as given, or the built-in model's name
  std::string sha256;  ///< of the model file
  ModelConfig config;
};

/// Reads the model and its tokenizer. Throws std::runtime_error naming the file, the field
/// and expected vs found on bad input (a magic with a byte or two changed is reported as a
/// damaged file of that format), and "out of memory while loading ..." when memory runs out.
[[nodiscard]] LoadedModel read_model(const ModelSource& src);

/// The tokenizer file a llama2.c model is read with: `tokenizer` if given, else the first of
/// tokenizer.bin and tok512.bin next to `model` that exists, else "" (none found).
[[nodiscard]] std::string tokenizer_path(const std::string& model, const std::string& tokenizer);

/// Quantises `m`'s float model in memory (docs/numerics.md): calibration on the documents of
/// `calib_text`, or on the model's own generated text when it is empty, then `quantize`.
/// Character models keep their vocabulary. Progress and warnings go to `notice`. Throws
/// std::runtime_error "<model>: cannot quantise this model: ..." when a scale cannot be
/// represented, and "out of memory while quantising ..." when memory runs out.
void quantise_in_memory(LoadedModel& m, const std::string& calib_text, BatchNormMode batchnorm,
                        const Notice& notice);

/// The calibration a text gives (`calib_text`: documents split on <|endoftext|>, each cut to
/// seq_len tokens with a notice), or the model's own text (`calib_text` empty); its
/// description names the source and the positions run. Warns when fewer than 128 positions
/// ran.
[[nodiscard]] Calibration calibration_for(const FloatModel& fm, const Tokenizer& tok,
                                          const std::string& calib_text, const Notice& notice);

}  // namespace passim
