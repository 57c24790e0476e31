// SPDX-License-Identifier: Apache-2.0
// Tokenizer tests against the llama2.c reference ids, the run.c decoder rules, corrupted
// tokenizer files and the BPE merge order on a tiny in-memory vocabulary.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "passim/eval/generate.hpp"
#include "passim/eval/perplexity.hpp"
#include "passim/io/file.hpp"
#include "passim/io/tokenizer.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace {

using passim::test::contains_all;
using passim::test::patch;
using passim::test::read_bytes;
using passim::test::runtime_error_message;
using passim::test::ScratchDir;
using passim::test::write_bytes;

constexpr int kSpaceId = 410;   // the dummy-prefix piece " " in tok512
constexpr int kNewlineId = 13;  // "<0x0A>": byte 0x0A + 3

passim::Tokenizer load_tok512() {
  return passim::Tokenizer::load(passim::test::tokenizer_path(), 512);
}

/// The first `n` ids of `ids` (all of them when shorter).
std::vector<int> head(const std::vector<int>& ids, std::size_t n) {
  return {ids.begin(), ids.begin() + std::ptrdiff_t(std::min(n, ids.size()))};
}

/// Writes `bytes` as a tokenizer file, loads it with `vocab_size` and returns the error
/// message (failing when the load succeeds). Checks the message names the file.
std::string load_error(const std::vector<std::uint8_t>& bytes, int vocab_size) {
  const ScratchDir dir;
  const auto path = dir / "corrupt_tok512.bin";
  write_bytes(path, bytes);
  const std::string msg =
      runtime_error_message([&] { (void)passim::Tokenizer::load(path, vocab_size); });
  EXPECT_TRUE(contains_all(msg, {path.string()}));
  return msg;
}

TEST(TokenizerLlama2c, EncodesReferencePrompts) {
  PASSIM_REQUIRE_DATA();
  const auto tok = load_tok512();
  EXPECT_EQ(tok.vocab_size(), 512);
  EXPECT_EQ(tok.encode("", true, false), (std::vector<int>{1}));
  EXPECT_EQ(tok.encode("Once upon a time", true, false), (std::vector<int>{1, 403, 407, 261, 378}));
  EXPECT_EQ(tok.encode("The cat", true, false), (std::vector<int>{1, 291, 280, 294}));
  EXPECT_EQ(tok.encode("One day, a little boy named Tom", true, false),
            (std::vector<int>{1, 385, 328, 432, 261, 376, 268, 414, 422, 395, 274, 287}));
}

TEST(TokenizerLlama2c, BosAndEosFlags) {
  PASSIM_REQUIRE_DATA();
  const auto tok = load_tok512();
  EXPECT_EQ(tok.encode("", false, false), (std::vector<int>{}));
  EXPECT_EQ(tok.encode("", true, true), (std::vector<int>{1, 2}));
  EXPECT_EQ(tok.encode("The cat", false, true), (std::vector<int>{291, 280, 294, 2}));
}

TEST(TokenizerLlama2c, EncodesSampleStoriesFirst16Ids) {
  PASSIM_REQUIRE_DATA();
  const auto tok = load_tok512();
  const auto bytes = read_bytes(passim::test::sample_text_path());
  const auto docs =
      passim::split_documents({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  ASSERT_GE(docs.size(), 3u);
  const std::vector<std::vector<int>> expected = {
      {1, 403, 407, 261, 378, 383, 286, 261, 376, 268, 414, 422, 395, 368, 302, 426},
      {1, 403, 407, 261, 378, 432, 383, 286, 261, 410, 276, 421, 417, 412, 430, 305},
      {1, 385, 328, 432, 261, 376, 268, 414, 422, 395, 326, 263, 377, 267, 265, 282},
  };
  for (std::size_t s = 0; s < expected.size(); ++s) {
    SCOPED_TRACE("story " + std::to_string(s));
    EXPECT_EQ(head(tok.encode(docs[s], true, false), 16), expected[s]);
  }
}

TEST(TokenizerLlama2c, ByteFallbackForUnknownCodePoint) {
  PASSIM_REQUIRE_DATA();
  const auto tok = load_tok512();
  ASSERT_EQ(tok.piece(kSpaceId), " ");
  // "ü" is U+00FC = C3 BC in UTF-8; it is not a piece, so each byte becomes <0xNN> = byte + 3.
  EXPECT_EQ(tok.encode("\xC3\xBC", true, false), (std::vector<int>{1, kSpaceId, 198, 191}));
  EXPECT_EQ(tok.piece(198), "<0xC3>");
  EXPECT_EQ(tok.piece(191), "<0xBC>");
  // Lone bytes >= 0x80 are not printable, so run.c's safe_printf prints nothing.
  EXPECT_EQ(tok.decode(kSpaceId, 198), "");
  EXPECT_EQ(tok.decode(198, 191), "");
}

TEST(TokenizerLlama2c, DecodeDropsLeadingSpaceOnlyAfterBos) {
  PASSIM_REQUIRE_DATA();
  const auto tok = load_tok512();
  ASSERT_EQ(tok.piece(403), " Once");
  EXPECT_EQ(tok.decode(passim::kBosToken, 403), "Once");
  EXPECT_EQ(tok.decode(378, 403), " Once");
  EXPECT_EQ(tok.decode(passim::kBosToken, 294), "at");  // no leading space to drop
}

TEST(TokenizerLlama2c, NewlineByteTokenDecodesToNewline) {
  PASSIM_REQUIRE_DATA();
  const auto tok = load_tok512();
  ASSERT_EQ(tok.piece(kNewlineId), "<0x0A>");
  EXPECT_EQ(tok.decode(403, kNewlineId), "\n");
  EXPECT_EQ(tok.decode(passim::kBosToken, kNewlineId), "\n");
  // " a" (dummy prefix merged), then "\n" as a byte token since no piece holds it, then "b".
  EXPECT_EQ(tok.encode("a\nb", false, false), (std::vector<int>{261, kNewlineId, 430}));
}

TEST(TokenizerLlama2c, DecodeMatchesRunCPrintingOfReferenceText) {
  PASSIM_REQUIRE_DATA();
  const auto tok = load_tok512();
  const auto ids = tok.encode("Once upon a time", true, false);
  std::string text;
  for (std::size_t i = 1; i < ids.size(); ++i) {
    text += tok.decode(ids[i - 1], ids[i]);
  }
  EXPECT_EQ(text, "Once upon a time");
}

TEST(TokenizerLlama2c, TruncatedFileThrows) {
  PASSIM_REQUIRE_DATA();
  const auto full = read_bytes(passim::test::tokenizer_path());
  ASSERT_EQ(full.size(), 6227u);
  {
    SCOPED_TRACE("minus 10 bytes");
    auto bytes = full;
    bytes.resize(full.size() - 10);
    const auto msg = load_error(bytes, 512);
    EXPECT_TRUE(contains_all(msg, {"token 511", "expected", "truncated"}));
  }
  {
    SCOPED_TRACE("inside the header");
    auto bytes = full;
    bytes.resize(2);
    const auto msg = load_error(bytes, 512);
    EXPECT_TRUE(contains_all(msg, {"max_token_length", "expected 4 more bytes", "found 2"}));
  }
  {
    SCOPED_TRACE("empty");
    const auto msg = load_error({}, 512);
    EXPECT_TRUE(contains_all(msg, {"max_token_length", "expected 4 more bytes", "found 0"}));
  }
}

TEST(TokenizerLlama2c, TrailingBytesThrow) {
  PASSIM_REQUIRE_DATA();
  auto bytes = read_bytes(passim::test::tokenizer_path());
  bytes.push_back(0);
  const auto msg = load_error(bytes, 512);
  EXPECT_TRUE(contains_all(msg, {"expected 6227 bytes", "found 6228", "trailing data"}));
}

TEST(TokenizerLlama2c, WrongVocabSizeThrows) {
  PASSIM_REQUIRE_DATA();
  const auto bytes = read_bytes(passim::test::tokenizer_path());
  EXPECT_TRUE(contains_all(load_error(bytes, 600), {"token 512", "vocab_size 600"}));
  EXPECT_TRUE(contains_all(load_error(bytes, 256), {"vocab_size 256", "trailing data"}));
}

TEST(TokenizerLlama2c, NegativeTokenLengthThrows) {
  PASSIM_REQUIRE_DATA();
  auto bytes = read_bytes(passim::test::tokenizer_path());
  // Layout: int32 max_token_length (7), then token 0 = float score, int32 length, "<unk>".
  patch(bytes, 8, std::int32_t{-1});
  const auto msg = load_error(bytes, 512);
  EXPECT_TRUE(contains_all(msg, {"token 0 length", "expected 0..7", "found -1"}));
}

/// Byte offset of the score of token `id` in the llama2.c tokenizer file `bytes`.
std::size_t score_offset(const std::vector<std::uint8_t>& bytes, int id) {
  std::size_t off = 4;  // int32 max_token_length
  for (int i = 0; i < id; ++i) {
    std::int32_t len = 0;
    std::memcpy(&len, bytes.data() + off + 4, 4);
    off += 8 + std::size_t(len);  // float32 score, int32 length, bytes
  }
  return off;
}

// A NaN score is compared false against every other score, so it silently changed the merges
// of "Once upon a time" (tokens 403 " Once" and 407 " upon"); every non-finite score is refused.
TEST(TokenizerLlama2c, NonFiniteScoreThrows) {
  PASSIM_REQUIRE_DATA();
  const auto full = read_bytes(passim::test::tokenizer_path());
  const std::pair<float, const char*> cases[] = {
      {std::numeric_limits<float>::quiet_NaN(), "found nan"},
      {std::numeric_limits<float>::infinity(), "found inf"},
      {-std::numeric_limits<float>::infinity(), "found -inf"},
  };
  for (const auto& [bad, found] : cases) {
    SCOPED_TRACE(found);
    auto bytes = full;
    const std::size_t at = score_offset(bytes, 403);
    patch(bytes, at, bad);
    const auto msg = load_error(bytes, 512);
    EXPECT_TRUE(contains_all(msg, {"token 403 score", "byte offset " + std::to_string(at),
                                   "expected a finite float", found}))
        << msg;
  }
}

TEST(TokenizerLlama2c, BadMaxTokenLengthThrows) {
  PASSIM_REQUIRE_DATA();
  auto bytes = read_bytes(passim::test::tokenizer_path());
  patch(bytes, 0, std::int32_t{0});
  const auto msg = load_error(bytes, 512);
  EXPECT_TRUE(contains_all(msg, {"max_token_length", "expected 1..", "found 0"}));
}

TEST(TokenizerLlama2c, NonPositiveVocabSizeThrowsRuntimeError) {
  PASSIM_REQUIRE_DATA();
  // A bad vocab_size argument is a configuration error: it must be reported like the file
  // errors (std::runtime_error naming the file), not as std::length_error from
  // vector::reserve(size_t(-1)).
  const auto path = passim::test::tokenizer_path();
  for (const int vocab_size : {0, -1}) {
    SCOPED_TRACE("vocab_size " + std::to_string(vocab_size));
    const auto msg =
        runtime_error_message([&] { (void)passim::Tokenizer::load(path, vocab_size); });
    EXPECT_TRUE(contains_all(msg, {path.string(), "vocab_size"}));
  }
}

// ---- in-memory vocabularies -----------------------------------------------------------------

/// <unk>, BOS, EOS, then the given pieces (ids 3, 4, ...).
passim::Tokenizer tiny(const std::vector<std::string>& pieces, const std::vector<float>& scores) {
  std::vector<std::string> vocab = {"<unk>", "\n<s>\n", "\n</s>\n"};
  std::vector<float> all_scores = {0, 0, 0};
  vocab.insert(vocab.end(), pieces.begin(), pieces.end());
  all_scores.insert(all_scores.end(), scores.begin(), scores.end());
  return passim::Tokenizer(vocab, all_scores);
}

TEST(TokenizerInMemory, MergesHighestScoreFirst) {
  //                ids:  3    4    5     6
  const auto tok = tiny({"a", "b", "ab", "ba"}, {0, 0, 1.0f, 2.0f});
  // Pairs of "aba": "ab" (score 1) and "ba" (score 2); the higher score merges.
  EXPECT_EQ(tok.encode("aba", false, false), (std::vector<int>{3, 6}));
}

TEST(TokenizerInMemory, LeftmostPairWinsTies) {
  const auto tok = tiny({"a", "b", "ab", "ba"}, {0, 0, 2.0f, 2.0f});
  EXPECT_EQ(tok.encode("aba", false, false), (std::vector<int>{5, 3}));
  // "abab": ab, ba, ab all score 2; the leftmost "ab" merges, leaving (ab a b) whose only
  // pair in the vocabulary is the trailing "ab".
  EXPECT_EQ(tok.encode("abab", false, false), (std::vector<int>{5, 5}));
}

TEST(TokenizerInMemory, MergesRepeatUntilNoPairIsInVocab) {
  //                ids:  3    4    5    6     7      8
  const auto tok = tiny({"a", "b", "c", "ab", "abc", "bc"}, {0, 0, 0, 1.0f, 3.0f, 0.5f});
  // a b c -> (ab scores 1 > bc 0.5) ab c -> abc.
  EXPECT_EQ(tok.encode("abc", false, false), (std::vector<int>{7}));
  EXPECT_EQ(tok.encode("abc", true, true), (std::vector<int>{1, 7, 2}));
}

TEST(TokenizerInMemory, DummyPrefixOnlyWhenSpaceIsAPiece) {
  const auto no_space = tiny({"a"}, {0});
  EXPECT_EQ(no_space.encode("a", true, false), (std::vector<int>{1, 3}));
  //                      ids:  3    4    5
  const auto with_space = tiny({"a", " ", " a"}, {0, 0, 1.0f});
  EXPECT_EQ(with_space.encode("a", true, false), (std::vector<int>{1, 5}));
  EXPECT_EQ(with_space.decode(passim::kBosToken, 5), "a");
  EXPECT_EQ(with_space.decode(3, 5), " a");
}

TEST(TokenizerInMemory, MismatchedScoresThrow) {
  EXPECT_THROW(passim::Tokenizer({"<unk>", "<s>", "</s>"}, {0, 0}), std::runtime_error);
  EXPECT_THROW(passim::Tokenizer({"<unk>", "<s>"}, {0, 0}), std::runtime_error);
}

}  // namespace
