// SPDX-License-Identifier: Apache-2.0
// split_documents: how text files are cut into documents for perplexity and calibration.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "passim/eval/generate.hpp"
#include "passim/eval/perplexity.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace {

using Docs = std::vector<std::string>;

TEST(SplitDocuments, SplitsOnEndOfTextAndStripsWhitespace) {
  EXPECT_EQ(passim::split_documents("one<|endoftext|>two"), (Docs{"one", "two"}));
  EXPECT_EQ(passim::split_documents("  one \n<|endoftext|>\n\ttwo words\r\n"),
            (Docs{"one", "two words"}));
  // Inner whitespace and newlines are kept.
  EXPECT_EQ(passim::split_documents("a\n\nb<|endoftext|>"), (Docs{"a\n\nb"}));
}

TEST(SplitDocuments, DropsEmptyPieces) {
  EXPECT_EQ(passim::split_documents(""), Docs{});
  EXPECT_EQ(passim::split_documents(" \n\t "), Docs{});
  EXPECT_EQ(passim::split_documents("<|endoftext|>"), Docs{});
  EXPECT_EQ(passim::split_documents("<|endoftext|>x<|endoftext|> <|endoftext|><|endoftext|>y"),
            (Docs{"x", "y"}));
}

TEST(SplitDocuments, TextWithoutSeparatorIsOneDocument) {
  EXPECT_EQ(passim::split_documents("Once upon a time."), (Docs{"Once upon a time."}));
  // A partial separator is ordinary text.
  EXPECT_EQ(passim::split_documents("a<|endoftext b"), (Docs{"a<|endoftext b"}));
}

TEST(SplitDocuments, SampleTextHasFiveStories) {
  PASSIM_REQUIRE_DATA();
  const auto bytes = passim::test::read_bytes(passim::test::sample_text_path());
  ASSERT_EQ(bytes.size(), 3794u);
  const auto docs =
      passim::split_documents({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  ASSERT_EQ(docs.size(), 5u);
  EXPECT_EQ(docs[0].rfind("Once upon a time there was a little boy named Ben.", 0), 0u);
  for (const auto& d : docs) {
    EXPECT_EQ(d.find("<|endoftext|>"), std::string::npos);
    EXPECT_NE(d.front(), '\n');
    EXPECT_NE(d.back(), '\n');
  }
}

}  // namespace
