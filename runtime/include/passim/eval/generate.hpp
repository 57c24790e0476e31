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
  /// Feed the prompt in one pass (Backend::forward_sequence), then decode token by token from
  /// the KV cache it filled; false feeds every position alone, as run.c does. The text and ids
  /// are the same either way.
  bool prefill = true;
  /// Receives a warning, once per run, when the logits at a sampled position hold NaN or
  /// +Inf (the model or its backend overflowed; NaN is never chosen, +Inf wins). May be empty.
  std::function<void(std::string_view)> notice = {};
};

struct GenerateResult {
  std::vector<int> prompt_tokens;     ///< BOS first
  std::vector<int> generated_tokens;  ///< ids chosen by the sampler
  std::string text;                   ///< exactly what run.c prints, final newline included
  int steps = 0;                      ///< positions actually run
  double seconds = 0;                 ///< wall time of the whole loop
  double tokens_per_second = 0;       ///< positions per second after the first forward
                                      ///< pass (run.c's figure without prefill; the decode
                                      ///< rate with it); 0 when no position followed it
  int prefill_positions = 0;          ///< positions the prefill pass fed (0: no prefill)
  double prefill_seconds = 0;         ///< wall time of the prefill pass
};

/// The prompt's tokens, BOS first, as run.c encodes them. Throws std::runtime_error ("prompt:
/// expected at most seq_len = N tokens ...") when they need more than `seq_len` positions; a
/// prompt that needs at least bytes / tok.max_piece_bytes() tokens is refused before encoding.
[[nodiscard]] std::vector<int> encode_prompt(const Tokenizer& tok, const std::string& prompt,
                                             int seq_len);

/// Validates `opts.steps` against the model: steps <= 0 or > seq_len is clamped to seq_len
/// and a notice is passed to `notice`. Returns the steps to run.
int clamp_steps(int steps, int seq_len, const std::function<void(std::string_view)>& notice);

/// Runs run.c's generation loop. `on_text` receives each printed piece as soon as it is
/// known (then the final newline). Throws std::runtime_error when the prompt needs more
/// positions than the model's context (naming the prompt length and seq_len).
GenerateResult generate(Backend& backend, const Tokenizer& tok, const GenerateOptions& opts,
                        const std::function<void(std::string_view)>& on_text);

/// generate() into `res`, which it fills as the run goes: the prompt's tokens before the
/// first forward pass, prefill_positions once the prefill pass has run, steps,
/// generated_tokens and text after each position. When the backend throws (a simulation
/// watchdog, say), `res` describes the positions that completed, and the exception
/// propagates; the timings are set only by a run that ends.
void generate_into(GenerateResult& res, Backend& backend, const Tokenizer& tok,
                   const GenerateOptions& opts,
                   const std::function<void(std::string_view)>& on_text);

}  // namespace passim
