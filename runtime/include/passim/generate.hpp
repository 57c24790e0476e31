// SPDX-License-Identifier: Apache-2.0
/// \file Text generation and perplexity on any backend, with llama2.c run.c semantics.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "passim/backend.hpp"
#include "passim/tokenizer.hpp"

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

/// Per-document negative log-likelihood.
struct DocumentNll {
  int tokens = 0;      ///< including BOS
  double nll = 0;      ///< sum over predicted tokens, nats
};

struct PerplexityResult {
  std::vector<DocumentNll> documents;
  double total_nll = 0;
  long predicted = 0;
  [[nodiscard]] double mean_nll() const { return predicted > 0 ? total_nll / double(predicted) : 0; }
  [[nodiscard]] double perplexity() const;
};

/// Splits `text` on "<|endoftext|>", strips surrounding whitespace, drops empty pieces.
std::vector<std::string> split_documents(std::string_view text);

/// Perplexity as in the llama2.c reference: each document is encoded with BOS, run from an
/// empty cache, and -log softmax(logits)[next] is summed in double precision. Documents
/// longer than seq_len tokens throw std::runtime_error naming the document and lengths.
PerplexityResult perplexity(Backend& backend, const Tokenizer& tok,
                            const std::vector<std::string>& documents);

/// The project's fixed split of a training text (models/train_gpt.py): the first
/// floor(0.9 * n) characters (UTF-8 code points) are `train`, the rest `val`; `all` is the
/// whole text. Throws std::runtime_error on another name.
[[nodiscard]] std::string text_split(std::string_view text, std::string_view split);

/// Windows of a long token stream, as a character model is evaluated in training: window w
/// feeds ids[w * seq_len + t] at position t (t < seq_len, no BOS) and predicts the next id,
/// for every w with (w + 1) * seq_len < ids.size(); at most `max_windows` windows (0: all).
/// Each window is one entry of `documents` (tokens = seq_len + 1).
[[nodiscard]] PerplexityResult perplexity_windows(Backend& backend, const std::vector<int>& ids,
                                                  std::size_t max_windows = 0);

/// Teacher-forced comparison of two backends on the same documents.
struct AgreementResult {
  long positions = 0;
  long top1_agree = 0;
  [[nodiscard]] double rate() const { return positions > 0 ? double(top1_agree) / double(positions) : 0; }
};
AgreementResult top1_agreement(Backend& a, Backend& b, const Tokenizer& tok,
                               const std::vector<std::string>& documents);

}  // namespace passim
