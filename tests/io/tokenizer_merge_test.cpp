// SPDX-License-Identifier: Apache-2.0
// The tokenizer's BPE merges against run.c's loop, written out here as the reference: scan
// every adjacent pair, merge the best-scoring one (the leftmost among equal scores), repeat.
// Random texts on a vocabulary full of ties, and windows of the TinyStories sample on tok512,
// must give the same ids; a 1 MB text must encode (the loop above would take hours).
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "passim/io/file.hpp"
#include "passim/io/tokenizer.hpp"
#include "test_data.hpp"

namespace {

/// run.c's `encode` without BOS/EOS: the dummy-prefix " ", one id per UTF-8 code point (else
/// `<0xNN>` byte ids), then the quadratic merge loop.
std::vector<int> reference_encode(const passim::Tokenizer& tok, const std::string& text) {
  std::unordered_map<std::string, int> ids;
  for (int id = tok.vocab_size() - 1; id >= 0; --id) {
    ids[tok.piece(id)] = id;  // the first id wins on duplicate pieces
  }
  const auto lookup = [&](const std::string& s) {
    const auto it = ids.find(s);
    return it == ids.end() ? -1 : it->second;
  };
  std::vector<int> t;
  if (!text.empty() && lookup(" ") >= 0) {
    t.push_back(lookup(" "));
  }
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = 1;
    const auto continues = [&](std::size_t k) {
      return k < text.size() && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80;
    };
    while (n < 4 && continues(i + n)) {
      ++n;
    }
    const std::string cp = text.substr(i, n);
    if (const int id = lookup(cp); id >= 0) {
      t.push_back(id);
    } else {
      for (const char b : cp) {
        t.push_back(static_cast<unsigned char>(b) + 3);
      }
    }
    i += n;
  }
  for (;;) {
    float best = -1e10f;
    int best_id = -1;
    std::size_t at = 0;
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      const int id = lookup(tok.piece(t[i]) + tok.piece(t[i + 1]));
      if (id >= 0 && tok.score(id) > best) {
        best = tok.score(id);
        best_id = id;
        at = i;
      }
    }
    if (best_id < 0) {
      return t;
    }
    t[at] = best_id;
    t.erase(t.begin() + std::ptrdiff_t(at) + 1);
  }
}

TEST(TokenizerMerges, EqualRunCOnRandomTextsWithTies) {
  // Every piece of up to four letters over "ab", half of them scoring the same: merges
  // cascade and tie at every step.
  std::vector<std::string> vocab = {"<unk>", "<s>", "</s>", " "};
  std::vector<float> scores = {0, 0, 0, 0};
  std::mt19937 rng(7);
  for (int len = 1; len <= 4; ++len) {
    for (int bits = 0; bits < (1 << len); ++bits) {
      std::string p;
      for (int k = 0; k < len; ++k) {
        p.push_back((bits >> k & 1) != 0 ? 'b' : 'a');
      }
      vocab.push_back(p);
      scores.push_back(rng() % 2 == 0 ? 1.0f : float(rng() % 5));
    }
  }
  const passim::Tokenizer tok(vocab, scores);
  for (int trial = 0; trial < 400; ++trial) {
    std::string text(1 + rng() % 80, 'a');
    for (char& c : text) {
      c = "ab "[rng() % 3];
    }
    ASSERT_EQ(tok.encode(text, false, false), reference_encode(tok, text)) << '"' << text << '"';
  }
}

TEST(TokenizerMerges, EqualRunCOnTheSampleText) {
  PASSIM_REQUIRE_DATA();
  const passim::Tokenizer tok = passim::Tokenizer::load(passim::test::tokenizer_path(), 512);
  const std::vector<std::uint8_t> bytes =
      passim::read_file(passim::test::sample_text_path(), std::uint64_t{1} << 24);
  const std::string sample(bytes.begin(), bytes.end());
  ASSERT_GT(sample.size(), 1200u);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t at = rng() % (sample.size() - 600);
    const std::string text = sample.substr(at, 1 + rng() % 600);
    ASSERT_EQ(tok.encode(text, false, false), reference_encode(tok, text)) << "offset " << at;
  }
}

TEST(TokenizerMerges, AMegabyteTextEncodesAndDecodesBack) {
  PASSIM_REQUIRE_DATA();
  const passim::Tokenizer tok = passim::Tokenizer::load(passim::test::tokenizer_path(), 512);
  std::string text;
  while (text.size() < (1u << 20)) {
    text += "Once upon a time, there was a little girl named Lily. ";
  }
  const std::vector<int> ids = tok.encode(text, true, false);
  ASSERT_GT(ids.size(), 1u);
  std::string back;
  for (std::size_t i = 1; i < ids.size(); ++i) {
    back += tok.decode(ids[i - 1], ids[i]);
  }
  EXPECT_EQ(back, text);
  EXPECT_LT(ids.size(), text.size() / 2);  // merged, not one id per byte
}

}  // namespace
