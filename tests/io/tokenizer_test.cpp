// SPDX-License-Identifier: Apache-2.0
// Tokenizer tests against the llama2.c reference ids.
#include <gtest/gtest.h>

#include "passim/tokenizer.hpp"
#include "test_data.hpp"

TEST(TokenizerLlama2c, EncodesReferencePrompts) {
  PASSIM_REQUIRE_DATA();
  const auto tok = passim::Tokenizer::load(passim::test::tokenizer_path(), 512);
  EXPECT_EQ(tok.encode("", true, false), (std::vector<int>{1}));
  EXPECT_EQ(tok.encode("Once upon a time", true, false),
            (std::vector<int>{1, 403, 407, 261, 378}));
  EXPECT_EQ(tok.encode("One day, a little boy named Tom", true, false),
            (std::vector<int>{1, 385, 328, 432, 261, 376, 268, 414, 422, 395, 274, 287}));
}
