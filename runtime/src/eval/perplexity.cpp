// SPDX-License-Identifier: Apache-2.0
// Perplexity of a text and teacher-forced agreement, with llama2.c semantics.
#include "passim/eval/perplexity.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/eval/sampler.hpp"
#include "passim/io/file.hpp"

namespace passim {

namespace {
/// "1 byte", "7 bytes".
std::string bytes_text(std::size_t n) { return fmt::format("{} byte{}", n, n == 1 ? "" : "s"); }
}  // namespace

double PerplexityResult::perplexity() const { return std::exp(mean_nll()); }

std::vector<std::string> read_documents(const std::string& path) {
  const auto bytes = read_file(path, std::uint64_t{1} << 30);
  auto docs = split_documents({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  if (docs.empty()) {
    throw std::runtime_error(fmt::format("{}: no non-empty document in the text", path));
  }
  return docs;
}

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
  if (min_tokens > std::size_t(seq_len)) {  // checked before encoding
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
