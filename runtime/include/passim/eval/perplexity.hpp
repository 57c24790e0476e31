// SPDX-License-Identifier: Apache-2.0
/// \file Perplexity of a text and teacher-forced agreement, on any backend (llama2.c semantics).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "passim/io/tokenizer.hpp"
#include "passim/model/backend.hpp"

namespace passim {

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

/// The documents of a text file: read_file (at most 1 GiB), then split_documents. Throws
/// std::runtime_error naming the file when it cannot be read or holds no document.
[[nodiscard]] std::vector<std::string> read_documents(const std::string& path);

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
