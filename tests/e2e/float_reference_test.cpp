// SPDX-License-Identifier: Apache-2.0
// The float backend against llama2.c run.c: identical greedy text and token ids, and the
// per-story negative log-likelihoods of the reference.
#include <cmath>

#include <gtest/gtest.h>

#include "passim/eval/generate.hpp"
#include "passim/eval/perplexity.hpp"
#include "passim/io/file.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/model/float_backend.hpp"
#include "reference_cases.hpp"
#include "test_data.hpp"

namespace {

using passim::test::data_dir;

std::filesystem::path reference_md() {
  return data_dir() / "reference" / "stories260K_greedy.md";
}

TEST(FloatReference, GreedyTextAndIdsMatchRunC) {
  PASSIM_REQUIRE_DATA();
  const auto model = passim::load_llama2c(passim::test::model_path());
  const auto tok = passim::Tokenizer::load(passim::test::tokenizer_path(), 512);
  const auto cases = passim::test::read_reference_cases(reference_md());
  ASSERT_GE(cases.size(), 5u) << "expected S1-S4 and L1";
  passim::FloatBackend fb(model);
  for (const auto& c : cases) {
    SCOPED_TRACE("case " + c.name + ", prompt \"" + c.prompt + "\"");
    passim::GenerateOptions opts;
    opts.prompt = c.prompt;
    opts.steps = c.steps;
    const auto r = passim::generate(fb, tok, opts, nullptr);
    EXPECT_EQ(r.prompt_tokens, c.prompt_ids);
    EXPECT_EQ(r.generated_tokens, c.generated_ids);
    EXPECT_EQ(r.text, c.text);
  }
}

TEST(FloatReference, StoryNllMatchesRunC) {
  PASSIM_REQUIRE_DATA();
  const auto model = passim::load_llama2c(passim::test::model_path());
  const auto tok = passim::Tokenizer::load(passim::test::tokenizer_path(), 512);
  const auto bytes = passim::read_file(passim::test::sample_text_path(), 1 << 20);
  const auto docs =
      passim::split_documents({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  ASSERT_EQ(docs.size(), 5u);
  passim::FloatBackend fb(model);
  const auto ppl = passim::perplexity(fb, tok, docs);
  const auto ref = passim::test::read_reference_stories(reference_md());
  ASSERT_GE(ref.size(), 3u);
  for (const auto& s : ref) {
    SCOPED_TRACE("story " + std::to_string(s.story));
    const auto& got = ppl.documents.at(std::size_t(s.story));
    EXPECT_EQ(got.tokens, s.tokens);
    // Same float32 arithmetic in the same order; only the printed 6 decimals differ.
    EXPECT_NEAR(got.nll, s.fp32_sum_nll, 1e-5);
  }
  EXPECT_NEAR(ppl.perplexity(), 3.548, 0.001);
}

}  // namespace
