// SPDX-License-Identifier: Apache-2.0
/// \file Text generation and perplexity on any backend, with llama2.c run.c semantics.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "passim/model/backend.hpp"
#include "passim/io/tokenizer.hpp"

namespace passim {

struct GenerateOptions {
  std::string prompt;
  int steps = 256;            ///< positions including the prompt (run.c `-n`)
  float temperature = 0.0f;   ///< 0 = greedy
  float top_p = 0.9f;
  std::uint64_t seed = 42;
};

struct GenerateResult {
  std::vector<int> prompt_tokens;     ///< BOS first
  std::vector<int> generated_tokens;  ///< ids chosen by the sampler
  std::string text;                   ///< exactly what run.c prints, final newline included
  int steps = 0;                      ///< positions actually run
  double seconds = 0;                 ///< wall time of the whole loop
  double tokens_per_second = 0;       ///< run.c's figure: excludes the first position;
                                      ///< 0 when fewer than 2 ran (run.c prints none then)
};

/// Validates `opts.steps` against the model: steps <= 0 or > seq_len is clamped to seq_len
/// and a notice is passed to `notice`. Returns the steps to run.
int clamp_steps(int steps, int seq_len, const std::function<void(std::string_view)>& notice);

/// Runs run.c's generation loop. `on_text` receives each printed piece as soon as it is
/// known (then the final newline). Throws std::runtime_error when the prompt needs more
/// positions than the model's context (naming the prompt length and seq_len).
GenerateResult generate(Backend& backend, const Tokenizer& tok, const GenerateOptions& opts,
                        const std::function<void(std::string_view)>& on_text);

}  // namespace passim
