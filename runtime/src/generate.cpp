// SPDX-License-Identifier: Apache-2.0
// Generation loop, perplexity and backend agreement.
#include "passim/generate.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "passim/sampler.hpp"

namespace passim {

namespace {
/// "1 byte", "7 bytes".
std::string bytes_text(std::size_t n) { return fmt::format("{} byte{}", n, n == 1 ? "" : "s"); }
}  // namespace

int clamp_steps(int steps, int seq_len, const std::function<void(std::string_view)>& notice) {
  if (steps <= 0 || steps > seq_len) {
    if (notice) {
      notice(fmt::format("notice: --steps {} is outside 1..{} (seq_len); using {}", steps,
                         seq_len, seq_len));
    }
    return seq_len;
  }
  return steps;
}

GenerateResult generate(Backend& backend, const Tokenizer& tok, const GenerateOptions& opts,
                        const std::function<void(std::string_view)>& on_text) {
  const ModelConfig& c = backend.config();
  GenerateResult res;
  // At least bytes / max_piece_bytes tokens: refuse a far too long prompt before encoding it.
  const std::size_t min_tokens = opts.prompt.size() / tok.max_piece_bytes();
  if (min_tokens > std::size_t(c.seq_len)) {
    throw std::runtime_error(fmt::format(
        "prompt: expected at most seq_len = {} tokens (BOS included), found at least {} tokens "
        "(the prompt has {} bytes; no piece of the vocabulary has more than {})",
        c.seq_len, min_tokens, opts.prompt.size(), bytes_text(tok.max_piece_bytes())));
  }
  res.prompt_tokens = tok.encode(opts.prompt, true, false);
  const int n_prompt = static_cast<int>(res.prompt_tokens.size());
  if (n_prompt > c.seq_len) {
    throw std::runtime_error(fmt::format(
        "prompt: expected at most seq_len = {} tokens (BOS included), found {} tokens",
        c.seq_len, n_prompt));
  }
  const int steps = opts.steps;
  if (steps < 1 || steps > c.seq_len) {
    throw std::runtime_error(
        fmt::format("steps: expected 1..{}, found {}", c.seq_len, steps));
  }
  backend.reset();
  Sampler sampler(c.vocab_size, opts.temperature, opts.top_p, opts.seed);
  std::vector<float> scratch(std::size_t(c.vocab_size));
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  Clock::time_point t_first{};
  int token = res.prompt_tokens[0];
  int pos = 0;
  while (pos < steps) {
    backend.forward(token, pos);
    int next = 0;
    if (pos < n_prompt - 1) {
      next = res.prompt_tokens[std::size_t(pos) + 1];
    } else {
      const auto logits = backend.logits();
      std::copy(logits.begin(), logits.end(), scratch.begin());
      next = sampler.sample(scratch);
      res.generated_tokens.push_back(next);
    }
    ++pos;
    if (next == c.bos_token && c.bos_ends_text) {
      break;
    }
    const std::string piece = tok.decode(token, next);
    res.text += piece;
    if (on_text && !piece.empty()) {
      on_text(piece);
    }
    token = next;
    if (pos == 1) {
      t_first = Clock::now();
    }
  }
  res.text += '\n';
  if (on_text) {
    on_text("\n");
  }
  const auto t1 = Clock::now();
  res.steps = pos;
  res.seconds = std::chrono::duration<double>(t1 - t0).count();
  const double after_first = std::chrono::duration<double>(t1 - t_first).count();
  if (pos > 1 && after_first > 0) {
    res.tokens_per_second = double(pos - 1) / after_first;
  }
  return res;
}

double PerplexityResult::perplexity() const { return std::exp(mean_nll()); }

std::vector<std::string> split_documents(std::string_view text) {
  static constexpr std::string_view kSep = "<|endoftext|>";
  static constexpr std::string_view kSpace = " \t\n\r\f\v";
  std::vector<std::string> docs;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(kSep, start);
    std::string_view piece = text.substr(start, end == std::string_view::npos ? end : end - start);
    const std::size_t b = piece.find_first_not_of(kSpace);
    if (b != std::string_view::npos) {
      const std::size_t e = piece.find_last_not_of(kSpace);
      docs.emplace_back(piece.substr(b, e - b + 1));
    }
    if (end == std::string_view::npos) {
      break;
    }
    start = end + kSep.size();
  }
  return docs;
}

namespace {
/// -log softmax(logits)[target] in double precision.
double token_nll(std::span<const float> logits, int target) {
  double m = logits[0];
  for (const float v : logits) {
    m = std::max(m, double(v));
  }
  double sum = 0;
  for (const float v : logits) {
    sum += std::exp(double(v) - m);
  }
  return -(double(logits[std::size_t(target)]) - m - std::log(sum));
}

std::vector<int> encode_document(const Tokenizer& tok, const std::string& doc, std::size_t index,
                                 int seq_len) {
  const std::size_t min_tokens = doc.size() / tok.max_piece_bytes();
  if (min_tokens > std::size_t(seq_len)) {  // checked before the quadratic merges
    throw std::runtime_error(fmt::format(
        "document {}: expected at most seq_len = {} tokens, found at least {} tokens (the "
        "document has {} bytes; no piece of the vocabulary has more than {})",
        index, seq_len, min_tokens, doc.size(), bytes_text(tok.max_piece_bytes())));
  }
  std::vector<int> ids = tok.encode(doc, true, false);
  if (ids.size() > std::size_t(seq_len)) {
    throw std::runtime_error(fmt::format(
        "document {}: expected at most seq_len = {} tokens, found {}", index, seq_len,
        ids.size()));
  }
  return ids;
}
}  // namespace

PerplexityResult perplexity(Backend& backend, const Tokenizer& tok,
                            const std::vector<std::string>& documents) {
  PerplexityResult res;
  for (std::size_t d = 0; d < documents.size(); ++d) {
    const std::vector<int> ids = encode_document(tok, documents[d], d, backend.config().seq_len);
    backend.reset();
    DocumentNll doc;
    doc.tokens = static_cast<int>(ids.size());
    for (std::size_t t = 0; t + 1 < ids.size(); ++t) {
      backend.forward(ids[t], static_cast<int>(t));
      doc.nll += token_nll(backend.logits(), ids[t + 1]);
    }
    res.total_nll += doc.nll;
    res.predicted += doc.tokens - 1;
    res.documents.push_back(doc);
  }
  return res;
}

AgreementResult top1_agreement(Backend& a, Backend& b, const Tokenizer& tok,
                               const std::vector<std::string>& documents) {
  AgreementResult res;
  for (std::size_t d = 0; d < documents.size(); ++d) {
    const std::vector<int> ids = encode_document(tok, documents[d], d, a.config().seq_len);
    a.reset();
    b.reset();
    for (std::size_t t = 0; t + 1 < ids.size(); ++t) {
      a.forward(ids[t], static_cast<int>(t));
      b.forward(ids[t], static_cast<int>(t));
      ++res.positions;
      if (argmax(a.logits()) == argmax(b.logits())) {
        ++res.top1_agree;
      }
    }
  }
  return res;
}

std::string text_split(std::string_view text, std::string_view split) {
  if (split == "all") {
    return std::string(text);
  }
  if (split != "train" && split != "val") {
    throw std::runtime_error(fmt::format("split: expected train, val or all, found {}", split));
  }
  std::size_t chars = 0;
  for (const char c : text) {
    chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  }
  const auto cut_chars = static_cast<std::size_t>(0.9 * double(chars));
  std::size_t cut = 0, seen = 0;
  for (; cut < text.size(); ++cut) {
    if ((static_cast<unsigned char>(text[cut]) & 0xC0) != 0x80) {
      if (seen == cut_chars) {
        break;
      }
      ++seen;
    }
  }
  return std::string(split == "train" ? text.substr(0, cut) : text.substr(cut));
}

PerplexityResult perplexity_windows(Backend& backend, const std::vector<int>& ids,
                                    std::size_t max_windows) {
  const auto n = std::size_t(backend.config().seq_len);
  PerplexityResult res;
  for (std::size_t w = 0; (w + 1) * n < ids.size(); ++w) {
    if (max_windows > 0 && w >= max_windows) {
      break;
    }
    backend.reset();
    DocumentNll doc;
    doc.tokens = int(n + 1);
    for (std::size_t t = 0; t < n; ++t) {
      backend.forward(ids[w * n + t], static_cast<int>(t));
      doc.nll += token_nll(backend.logits(), ids[w * n + t + 1]);
    }
    res.total_nll += doc.nll;
    res.predicted += long(n);
    res.documents.push_back(doc);
  }
  if (res.documents.empty()) {
    throw std::runtime_error(fmt::format(
        "text: expected more than seq_len = {} tokens for one window, found {}", n, ids.size()));
  }
  return res;
}

}  // namespace passim
