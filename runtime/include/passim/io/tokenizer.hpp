// SPDX-License-Identifier: Apache-2.0
/// \file The llama2.c BPE tokenizer (SentencePiece-style vocabulary with merge scores).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace passim {

inline constexpr int kBosToken = 1;
inline constexpr int kEosToken = 2;

/// Bytes of the well-formed UTF-8 character at `s[i]` (1..4: no overlong forms, surrogates or
/// code points above U+10FFFF), or 0 when the bytes there are not one.
[[nodiscard]] std::size_t utf8_char_bytes(std::string_view s, std::size_t i) noexcept;

/// Encoder/decoder with the exact semantics of llama2.c `run.c` (`encode`, `decode`,
/// `safe_printf`): BOS, the dummy-prefix space, greedy merges by highest score (leftmost pair
/// on ties), and `<0xNN>` byte fallback (id = byte + 3).
class Tokenizer {
 public:
  /// Reads a llama2.c tokenizer file: int32 max_token_length, then `vocab_size` records of
  /// (float32 score, int32 length, bytes). Throws std::runtime_error naming the file, the
  /// record and expected vs found on a truncated, padded or inconsistent file, or on a score
  /// that is not finite.
  [[nodiscard]] static Tokenizer load(const std::filesystem::path& path, int vocab_size);

  /// Builds a tokenizer from pieces and scores (tests and embedded models).
  Tokenizer(std::vector<std::string> vocab, std::vector<float> scores);

  /// A character-level tokenizer: token i is `chars[i]` (one UTF-8 character each, no
  /// duplicates), no merges, no dummy prefix, no byte fallback; `bos` is the id that starts
  /// every sequence (e.g. the newline). Throws std::runtime_error naming `source` on an empty,
  /// duplicate or multi-character piece.
  [[nodiscard]] static Tokenizer char_level(std::vector<std::string> chars, int bos,
                                            const std::string& source);
  [[nodiscard]] bool is_char_level() const noexcept { return char_level_; }
  /// The id `encode(..., bos = true, ...)` starts with.
  [[nodiscard]] int bos() const noexcept { return bos_; }

  /// Token ids of `text`: optional BOS, then (for non-empty text) the dummy-prefix " ", then
  /// greedy BPE; optional EOS. Throws std::runtime_error if a byte needs a `<0xNN>` piece
  /// that the vocabulary lacks. Character-level: optional BOS, then one id per character;
  /// a character outside the vocabulary throws, naming it and its byte offset.
  [[nodiscard]] std::vector<int> encode(std::string_view text, bool bos, bool eos) const;

  /// The piece of `token` as run.c prints it after `prev`: a leading space is dropped after
  /// BOS, `<0xNN>` becomes the raw byte, and a single non-printable, non-space byte becomes
  /// the empty string.
  [[nodiscard]] std::string decode(int prev, int token) const;

  [[nodiscard]] int vocab_size() const noexcept { return static_cast<int>(vocab_.size()); }
  /// Bytes of the longest piece: a text of b bytes encodes to at least b / max_piece_bytes()
  /// tokens, which bounds a text's tokens before encoding it.
  [[nodiscard]] std::size_t max_piece_bytes() const noexcept { return max_piece_bytes_; }
  [[nodiscard]] const std::string& piece(int id) const { return vocab_.at(std::size_t(id)); }
  /// Merge score of `id` (higher merges first).
  [[nodiscard]] float score(int id) const { return scores_.at(std::size_t(id)); }

 private:
  [[nodiscard]] int lookup(const std::string& s) const;
  /// `encode` for a character-level vocabulary.
  [[nodiscard]] std::vector<int> encode_chars(std::string_view text, bool bos, bool eos) const;
  /// Appends the id of each UTF-8 code point of `text` (at most 4 bytes each), or, for a code
  /// point that is not a piece, one `<0xNN>` byte-fallback id per byte.
  void append_code_points(std::string_view text, std::vector<int>& tokens) const;
  /// Greedy BPE: merges the adjacent pair whose concatenation has the highest score (strictly
  /// higher wins, so the leftmost pair wins ties) until no adjacent pair forms a piece. The
  /// merges are run.c's; a heap finds each in O(log n) instead of run.c's scan of every pair.
  void merge_pairs(std::vector<int>& tokens) const;
  /// `min_pieces`: 3 for BPE vocabularies (BOS 1, EOS 2), 2 for character ones.
  Tokenizer(std::vector<std::string> vocab, std::vector<float> scores, std::size_t min_pieces);

  std::vector<std::string> vocab_;
  std::vector<float> scores_;
  std::unordered_map<std::string, int> ids_;
  bool char_level_ = false;
  std::size_t max_piece_bytes_ = 1;
  int bos_ = kBosToken;
};

}  // namespace passim
