// SPDX-License-Identifier: Apache-2.0
// llama2.c tokenizer: file reader, BPE encoder and run.c-compatible decoder.
#include "passim/io/tokenizer.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/io/file.hpp"
#include "passim/model/config.hpp"

namespace passim {

namespace {

constexpr std::uint64_t kMaxTokenizerBytes = std::uint64_t{1} << 28;
constexpr std::int32_t kMaxPieceBytes = 1 << 16;

/// A read position in a tokenizer file. Every read checks the bytes left first and names
/// the field, the offset and the vocab_size the file was read for.
class TokenizerFileReader {
 public:
  TokenizerFileReader(const std::vector<std::uint8_t>& data, const std::string& source,
                      int vocab_size)
      : data_(data), source_(source), vocab_size_(vocab_size) {}

  [[nodiscard]] std::size_t offset() const noexcept { return off_; }

  std::int32_t i32(const std::string& what) {
    need(4, what);
    std::int32_t v = 0;
    std::memcpy(&v, data_.data() + off_, 4);
    off_ += 4;
    return v;
  }

  /// The float32 merge score of token `i`; a NaN would silently change every merge decision.
  float score(int i) {
    need(4, fmt::format("token {} score", i));
    float v = 0;
    std::memcpy(&v, data_.data() + off_, 4);
    if (!std::isfinite(v)) {
      throw std::runtime_error(
          fmt::format("{}: token {} score (byte offset {}): expected a finite float, found {}",
                      source_, i, off_, v));
    }
    off_ += 4;
    return v;
  }

  std::string bytes(std::size_t n, const std::string& what) {
    need(n, what);
    std::string out(reinterpret_cast<const char*>(data_.data() + off_), n);
    off_ += n;
    return out;
  }

 private:
  void need(std::size_t n, const std::string& what) const {
    if (data_.size() - off_ < n) {
      throw std::runtime_error(fmt::format(
          "{}: {}: expected {} more bytes at offset {}, found {} (file truncated, or it does "
          "not belong to a model with vocab_size {})",
          source_, what, n, off_, data_.size() - off_, vocab_size_));
    }
  }

  const std::vector<std::uint8_t>& data_;
  const std::string& source_;
  int vocab_size_;
  std::size_t off_ = 0;
};

}  // namespace

Tokenizer Tokenizer::load(const std::filesystem::path& path, int vocab_size) {
  const std::string source = path.string();
  if (vocab_size < 3 || vocab_size > kMaxVocab) {
    throw std::runtime_error(fmt::format("{}: vocab_size: expected 3..{}, found {}", source,
                                         kMaxVocab, vocab_size));
  }
  const std::vector<std::uint8_t> data = read_file(path, kMaxTokenizerBytes);
  TokenizerFileReader r(data, source, vocab_size);
  const std::int32_t max_len = r.i32("header field max_token_length");
  if (max_len < 1 || max_len > kMaxPieceBytes) {
    throw std::runtime_error(fmt::format(
        "{}: header field max_token_length: expected 1..{}, found {}", source, kMaxPieceBytes,
        max_len));
  }
  std::vector<std::string> vocab;
  std::vector<float> scores;
  vocab.reserve(std::size_t(vocab_size));
  scores.reserve(std::size_t(vocab_size));
  for (int i = 0; i < vocab_size; ++i) {
    scores.push_back(r.score(i));
    const std::int32_t len = r.i32(fmt::format("token {} length", i));
    if (len < 0 || len > max_len) {
      throw std::runtime_error(fmt::format("{}: token {} length: expected 0..{}, found {}",
                                           source, i, max_len, len));
    }
    vocab.push_back(r.bytes(std::size_t(len), fmt::format("token {} bytes", i)));
  }
  if (r.offset() != data.size()) {
    throw std::runtime_error(fmt::format(
        "{}: size: expected {} bytes for vocab_size {}, found {} (trailing data)", source,
        r.offset(), vocab_size, data.size()));
  }
  return Tokenizer(std::move(vocab), std::move(scores));
}

Tokenizer::Tokenizer(std::vector<std::string> vocab, std::vector<float> scores)
    : Tokenizer(std::move(vocab), std::move(scores), 3) {}

Tokenizer::Tokenizer(std::vector<std::string> vocab, std::vector<float> scores,
                     std::size_t min_pieces)
    : vocab_(std::move(vocab)), scores_(std::move(scores)) {
  if (vocab_.size() != scores_.size() || vocab_.size() < min_pieces) {
    throw std::runtime_error(fmt::format(
        "tokenizer: expected matching vocab and scores with >= {} pieces", min_pieces));
  }
  ids_.reserve(vocab_.size());
  for (const std::string& piece : vocab_) {
    max_piece_bytes_ = std::max(max_piece_bytes_, piece.size());
  }
  for (std::size_t i = 0; i < vocab_.size(); ++i) {
    ids_.emplace(vocab_[i], static_cast<int>(i));  // first id wins on duplicate pieces
  }
}

std::size_t utf8_char_bytes(std::string_view s, std::size_t i) noexcept {
  if (i >= s.size()) {
    return 0;
  }
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 < 0x80) {
    return 1;
  } else if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    lo = b0 == 0xE0 ? 0xA0 : 0x80;
    hi = b0 == 0xED ? 0x9F : 0xBF;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    lo = b0 == 0xF0 ? 0x90 : 0x80;
    hi = b0 == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (s.size() - i < n) {
    return 0;
  }
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) {
      return 0;
    }
  }
  return n;
}

Tokenizer Tokenizer::char_level(std::vector<std::string> chars, int bos,
                                const std::string& source) {
  for (std::size_t i = 0; i < chars.size(); ++i) {
    const std::string& c = chars[i];
    if (c.empty() || utf8_char_bytes(c, 0) != c.size()) {
      throw std::runtime_error(fmt::format(
          "{}: character token {}: expected one well-formed UTF-8 character, found {} bytes",
          source, i, c.size()));
    }
  }
  std::vector<std::string> copy = chars;
  std::sort(copy.begin(), copy.end());
  if (std::adjacent_find(copy.begin(), copy.end()) != copy.end()) {
    throw std::runtime_error(fmt::format("{}: character tokens: expected distinct pieces, found "
                                         "\"{}\" twice", source,
                                         *std::adjacent_find(copy.begin(), copy.end())));
  }
  if (chars.size() < 2 || bos < 0 || std::size_t(bos) >= chars.size()) {
    throw std::runtime_error(fmt::format("{}: bos_token_id: expected 0..{}, found {}", source,
                                         int(chars.size()) - 1, bos));
  }
  std::vector<float> scores(chars.size(), 0.0f);
  Tokenizer t(std::move(chars), std::move(scores), 2);
  t.char_level_ = true;
  t.bos_ = bos;
  return t;
}

int Tokenizer::lookup(const std::string& s) const {
  const auto it = ids_.find(s);
  return it == ids_.end() ? -1 : it->second;
}

std::vector<int> Tokenizer::encode(std::string_view text, bool bos, bool eos) const {
  if (char_level_) {
    return encode_chars(text, bos, eos);
  }
  std::vector<int> tokens;
  tokens.reserve(text.size() + 3);
  if (bos) {
    tokens.push_back(kBosToken);
  }
  if (!text.empty()) {
    const int dummy_prefix = lookup(" ");
    if (dummy_prefix >= 0) {
      tokens.push_back(dummy_prefix);
    }
  }
  append_code_points(text, tokens);
  merge_pairs(tokens);
  if (eos) {
    tokens.push_back(kEosToken);
  }
  return tokens;
}

std::vector<int> Tokenizer::encode_chars(std::string_view text, bool bos, bool eos) const {
  std::vector<int> tokens;
  tokens.reserve(text.size() + 3);
  if (bos) {
    tokens.push_back(bos_);
  }
  std::string buf;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_char_bytes(text, i);
    if (n == 0) {
      throw std::runtime_error(fmt::format(
          "tokenizer: byte 0x{:02X} at offset {} of the text: expected well-formed UTF-8",
          static_cast<unsigned char>(text[i]), i));
    }
    buf.assign(text.substr(i, n));
    const int id = lookup(buf);
    if (id < 0) {
      throw std::runtime_error(fmt::format(
          "tokenizer: character {:?} at byte {} of the text is not in the {}-character "
          "vocabulary", buf, i, vocab_size()));
    }
    tokens.push_back(id);
    i += n;
  }
  if (eos) {
    throw std::runtime_error("tokenizer: a character-level vocabulary has no EOS token");
  }
  return tokens;
}

void Tokenizer::append_code_points(std::string_view text, std::vector<int>& tokens) const {
  std::string buf;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80) {
      buf.clear();
    }
    buf.push_back(static_cast<char>(c));
    const bool next_is_continuation =
        i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80;
    if (next_is_continuation && buf.size() < 4) {
      continue;
    }
    const int id = lookup(buf);
    if (id >= 0) {
      tokens.push_back(id);
    } else {
      for (const char b : buf) {
        const int byte_id = static_cast<unsigned char>(b) + 3;  // <0xNN> byte-fallback piece
        if (byte_id >= vocab_size()) {
          throw std::runtime_error(fmt::format(
              "tokenizer: byte 0x{:02X} of the text has no <0x{:02X}> piece (vocab_size {})",
              static_cast<unsigned char>(b), static_cast<unsigned char>(b), vocab_size()));
        }
        tokens.push_back(byte_id);
      }
    }
    buf.clear();
  }
}

namespace {

/// A candidate merge of the tokens at list nodes `left` and `right`, into piece `id`.
struct MergeCandidate {
  float score;
  std::size_t left;
  std::size_t right;
  int id;
};

/// Heap order: the highest score on top, and among equal scores the leftmost pair (node
/// indices keep the text's order, since a merge keeps its left node).
bool merges_later(const MergeCandidate& a, const MergeCandidate& b) {
  return a.score != b.score ? a.score < b.score : a.left > b.left;
}

}  // namespace

// run.c's merge loop (scan every adjacent pair, merge the best-scoring one, leftmost among
// equal scores, repeat) costs O(n^2) pair lookups for n code points. This gives the same
// merges in O(n log n): the tokens form a linked list, every adjacent pair that is a piece
// waits in a max-heap, and an entry whose nodes have changed since it was pushed is skipped.
void Tokenizer::merge_pairs(std::vector<int>& tokens) const {
  constexpr std::size_t kNone = SIZE_MAX;
  const std::size_t n = tokens.size();
  std::vector<std::size_t> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (std::size_t i = 0; i < n; ++i) {
    prev[i] = i == 0 ? kNone : i - 1;
    next[i] = i + 1 == n ? kNone : i + 1;
  }
  std::vector<MergeCandidate> heap;
  std::string pair;
  const auto push = [&](std::size_t left, std::size_t right) {
    if (left == kNone || right == kNone) {
      return;
    }
    pair.assign(vocab_[std::size_t(tokens[left])]);
    pair.append(vocab_[std::size_t(tokens[right])]);
    const int id = lookup(pair);
    // run.c's best score starts at -1e10: a pair scoring no higher is never merged.
    if (id >= 0 && scores_[std::size_t(id)] > -1e10f) {
      heap.push_back({scores_[std::size_t(id)], left, right, id});
      std::push_heap(heap.begin(), heap.end(), merges_later);
    }
  };
  for (std::size_t i = 0; i + 1 < n; ++i) {
    push(i, i + 1);
  }
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), merges_later);
    const MergeCandidate c = heap.back();
    heap.pop_back();
    // Stale when either node was merged away, or changed its piece, since the push.
    if (!alive[c.left] || !alive[c.right] || next[c.left] != c.right) {
      continue;
    }
    pair.assign(vocab_[std::size_t(tokens[c.left])]);
    pair.append(vocab_[std::size_t(tokens[c.right])]);
    if (lookup(pair) != c.id) {
      continue;
    }
    tokens[c.left] = c.id;
    alive[c.right] = false;
    next[c.left] = next[c.right];
    if (next[c.right] != kNone) {
      prev[next[c.right]] = c.left;
    }
    push(prev[c.left], c.left);
    push(c.left, next[c.left]);
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (alive[i]) {
      tokens[kept++] = tokens[i];
    }
  }
  tokens.resize(kept);
}

std::string Tokenizer::decode(int prev, int token) const {
  if (char_level_) {
    return vocab_.at(std::size_t(token));
  }
  std::string_view piece = vocab_.at(std::size_t(token));
  if (prev == kBosToken && !piece.empty() && piece.front() == ' ') {
    piece.remove_prefix(1);
  }
  std::string out(piece);
  // "<0xNN>" (hex, either case) stands for one raw byte.
  if (out.size() == 6 && out.compare(0, 3, "<0x") == 0 && out[5] == '>' &&
      std::isxdigit(static_cast<unsigned char>(out[3])) &&
      std::isxdigit(static_cast<unsigned char>(out[4]))) {
    out = std::string(1, static_cast<char>(std::stoi(out.substr(3, 2), nullptr, 16)));
  }
  // run.c safe_printf: a single byte is printed only if printable or whitespace.
  if (out.size() == 1) {
    const auto b = static_cast<unsigned char>(out[0]);
    if (!(std::isprint(b) || std::isspace(b))) {
      out.clear();
    }
  }
  return out;
}

}  // namespace passim
