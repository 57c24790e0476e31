// SPDX-License-Identifier: Apache-2.0
// Sampler: argmax ties, greedy decoding, run.c's xorshift RNG and nucleus (top-p) sampling,
// and logits that hold NaN or Inf (never picked, warned about, or a clear error).
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "passim/eval/generate.hpp"
#include "passim/eval/sampler.hpp"
#include "passim/io/tokenizer.hpp"
#include "passim/model/backend.hpp"

namespace {

/// Draws `n` tokens from `logits` (copied each time: the sampler works in place).
std::vector<int> draw(passim::Sampler& s, const std::vector<float>& logits, int n) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i) {
    std::vector<float> scratch = logits;
    out.push_back(s.sample(scratch));
  }
  return out;
}

TEST(SamplerArgmax, LowestIndexWinsTies) {
  EXPECT_EQ(passim::argmax(std::vector<float>{1.0f, 3.0f, 3.0f, 2.0f}), 1);
  EXPECT_EQ(passim::argmax(std::vector<float>{5.0f, 5.0f, 5.0f}), 0);
  EXPECT_EQ(passim::argmax(std::vector<float>{-2.0f, -1.0f, -1.0f}), 1);
  EXPECT_EQ(passim::argmax(std::vector<float>{0.0f, 0.0f, 0.0f, 7.0f}), 3);
  EXPECT_EQ(passim::argmax(std::vector<float>{42.0f}), 0);
}

TEST(SamplerGreedy, TemperatureZeroIsArgmax) {
  passim::Sampler s(5, 0.0f, 0.9f, 1234);
  std::vector<float> logits = {0.1f, 3.0f, -1.0f, 3.0f, 2.0f};
  const std::vector<float> before = logits;
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(s.sample(logits), 1);  // tie between 1 and 3: lowest index
  }
  EXPECT_EQ(logits, before);  // greedy does not scale or softmax the logits
  std::vector<float> other = {-5.0f, -4.0f, -3.0f, -2.5f, -2.6f};
  EXPECT_EQ(s.sample(other), 3);
}

TEST(SamplerGreedy, SeedDoesNotMatterAtTemperatureZero) {
  const std::vector<float> logits = {0.3f, 0.2f, 0.9f, 0.8f};
  passim::Sampler a(4, 0.0f, 0.0f, 1);
  passim::Sampler b(4, 0.0f, 0.0f, 999);
  EXPECT_EQ(draw(a, logits, 8), std::vector<int>(8, 2));
  EXPECT_EQ(draw(b, logits, 8), std::vector<int>(8, 2));
}

TEST(SamplerMultinomial, MatchesRunCXorshiftOnFlatDistribution) {
  // Four equal logits give probabilities of exactly 0.25, so the token is floor(coin * 4)
  // with coin = (random_u32 >> 8) / 2^24. Expected ids computed with an independent Python
  // transcription of run.c's random_u32 (xorshift*, state = seed).
  const std::vector<float> flat(4, 0.0f);
  passim::Sampler s42(4, 1.0f, 0.0f, 42);
  EXPECT_EQ(draw(s42, flat, 16),
            (std::vector<int>{1, 3, 3, 3, 3, 3, 0, 1, 1, 2, 1, 1, 3, 0, 0, 2}));
  passim::Sampler s43(4, 1.0f, 0.0f, 43);
  EXPECT_EQ(draw(s43, flat, 16),
            (std::vector<int>{2, 1, 0, 2, 3, 1, 0, 3, 0, 1, 1, 0, 2, 0, 0, 2}));
}

TEST(SamplerMultinomial, SameSeedReproducesDifferentSeedsDiffer) {
  const std::vector<float> flat(64, 0.0f);
  passim::Sampler a(64, 1.0f, 0.9f, 7);
  passim::Sampler b(64, 1.0f, 0.9f, 7);
  passim::Sampler c(64, 1.0f, 0.9f, 8);
  const auto seq_a = draw(a, flat, 100);
  const auto seq_b = draw(b, flat, 100);
  const auto seq_c = draw(c, flat, 100);
  EXPECT_EQ(seq_a, seq_b);
  EXPECT_NE(seq_a, seq_c);
  // A flat distribution over 64 tokens should not collapse onto a few of them.
  EXPECT_GT(std::set<int>(seq_a.begin(), seq_a.end()).size(), 30u);
}

TEST(SamplerTopP, NeverLeavesTheNucleus) {
  // Normalised probabilities: token 5: 0.483, token 7: 0.290, token 2: 0.145 (cumulative 0.918,
  // the first to exceed 0.9), tokens 0 and 1: 0.019 each (above the 0.1 / 9 pre-filter cutoff
  // but outside the nucleus), the rest smaller.
  const std::vector<float> probs = {0.02f, 0.02f, 0.15f, 0.01f, 0.01f,
                                    0.5f,  0.01f, 0.3f,  0.01f, 0.005f};
  std::vector<float> logits;
  for (const float p : probs) {
    logits.push_back(std::log(p));
  }
  const std::set<int> nucleus = {5, 7, 2};
  std::set<int> seen;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    passim::Sampler s(10, 1.0f, 0.9f, seed);
    for (const int t : draw(s, logits, 40)) {
      ASSERT_TRUE(nucleus.count(t) == 1) << "token " << t << " outside the nucleus, seed " << seed;
      seen.insert(t);
    }
  }
  EXPECT_EQ(seen, nucleus);  // every nucleus token is reachable
}

TEST(SamplerTopP, TopPOneSamplesWholeDistribution) {
  // top_p = 1 falls back to plain multinomial sampling, so tokens 0 and 1 do appear.
  const std::vector<float> probs = {0.2f, 0.2f, 0.6f};
  std::vector<float> logits;
  for (const float p : probs) {
    logits.push_back(std::log(p));
  }
  passim::Sampler s(3, 1.0f, 1.0f, 5);
  const auto seq = draw(s, logits, 200);
  EXPECT_EQ(std::set<int>(seq.begin(), seq.end()), (std::set<int>{0, 1, 2}));
}

TEST(SamplerSoftmax, SumsToOneAndKeepsOrder) {
  // exp(1000) overflows float32: the max is subtracted first, as run.c does.
  std::vector<float> x = {951.0f, 952.0f, 953.0f, 1000.0f};
  passim::softmax_f32(x);
  float sum = 0;
  for (const float v : x) {
    EXPECT_TRUE(std::isfinite(v));
    sum += v;
  }
  EXPECT_NEAR(sum, 1.0f, 1e-6f);  // float32 rounding of four terms
  EXPECT_LT(x[0], x[1]);
  EXPECT_LT(x[1], x[2]);
  EXPECT_GT(x[0], 0.0f);  // exp(-49) is a normal float32
  EXPECT_EQ(x[3], 1.0f);  // 1 / (1 + ~1e-21) rounds to exactly 1 in float32
}

}  // namespace

// ---- logits that are not finite ------------------------------------------------------------

namespace nonfinite {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(SamplerArgmax, NaNIsNeverPicked) {
  // NaN compares false with everything: a leading NaN used to win (index 0).
  EXPECT_EQ(passim::argmax(std::vector<float>{kNaN, 1.0f, 2.0f}), 2);
  EXPECT_EQ(passim::argmax(std::vector<float>{1.0f, kNaN, 0.5f}), 0);
  EXPECT_EQ(passim::argmax(std::vector<float>{kNaN, kNaN, -3.0f}), 2);
  EXPECT_EQ(passim::argmax(std::vector<float>{-kInf, kNaN, -1e30f}), 2);
}

TEST(SamplerArgmax, PlusInfWinsOverFiniteValues) {
  EXPECT_EQ(passim::argmax(std::vector<float>{3.0f, kInf, kNaN, kInf}), 1);
}

TEST(SamplerArgmax, NoUsableValueIsAClearError) {
  for (const std::vector<float>& v : {std::vector<float>{-kInf, -kInf, -kInf},
                                      std::vector<float>{kNaN, kNaN},
                                      std::vector<float>{kNaN, -kInf}, std::vector<float>{}}) {
    try {
      (void)passim::argmax(v);
      ADD_FAILURE() << "no exception for " << v.size() << " values";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("not NaN or -Inf"), std::string::npos) << e.what();
    }
  }
}

TEST(SamplerNonFinite, GreedyAndSampledChoicesSkipNaN) {
  passim::Sampler greedy(3, 0.0f, 0.9f, 7);
  std::vector<float> logits = {kNaN, 1.0f, 2.0f};
  EXPECT_EQ(greedy.sample(logits), 2);
  for (const float top_p : {0.9f, 1.0f}) {
    passim::Sampler s(3, 1.0f, top_p, 99);
    for (const int t : draw(s, {kNaN, 1.0f, 2.0f}, 200)) {
      EXPECT_NE(t, 0) << "a NaN logit was sampled (top_p " << top_p << ")";
    }
  }
  passim::Sampler s(3, 0.8f, 0.9f, 5);
  std::vector<float> all_bad = {-kInf, kNaN, -kInf};
  EXPECT_THROW((void)s.sample(all_bad), std::runtime_error);
}

TEST(SamplerNonFinite, CountLogitsFindsEveryKind) {
  const passim::LogitCount c =
      passim::count_logits(std::vector<float>{1.0f, -kInf, kNaN, kInf, kNaN});
  EXPECT_EQ(c.nan, 2);
  EXPECT_EQ(c.pos_inf, 1);
  EXPECT_EQ(c.neg_inf, 1);
  EXPECT_EQ(c.first_bad, 1);
  EXPECT_EQ(passim::count_logits(std::vector<float>{0.0f, 2.0f}).first_bad, -1);
}

/// A backend whose logits are fixed: enough to drive `generate`.
class FixedLogits final : public passim::Backend {
 public:
  FixedLogits(std::vector<float> logits, int seq_len) : logits_(std::move(logits)) {
    config_.vocab_size = int(logits_.size());
    config_.seq_len = seq_len;
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "fixed"; }
  [[nodiscard]] const passim::ModelConfig& config() const noexcept override { return config_; }
  void forward(int, int) override {}
  [[nodiscard]] std::span<const float> logits() const noexcept override { return logits_; }
  void reset() override {}

 private:
  std::vector<float> logits_;
  passim::ModelConfig config_;
};

passim::Tokenizer letters() {
  return passim::Tokenizer({"<unk>", "\n<s>\n", "\n</s>\n", "a", "b"}, {0, 0, 0, 0, 0});
}

TEST(GenerateNonFinite, WarnsOnceAndNeverPicksNaN) {
  FixedLogits backend({kNaN, kNaN, kNaN, 1.0f, kInf}, 8);
  const passim::Tokenizer tok = letters();
  std::vector<std::string> notices;
  passim::GenerateOptions g;
  g.prompt = "a";
  g.steps = 6;
  g.notice = [&](std::string_view m) { notices.emplace_back(m); };
  const passim::GenerateResult r = passim::generate(backend, tok, g, {});
  ASSERT_FALSE(r.generated_tokens.empty());
  for (const int t : r.generated_tokens) {
    EXPECT_EQ(t, 4);  // +Inf wins; NaN never
  }
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("3 NaN and 1 +Inf"), std::string::npos) << notices[0];
}

TEST(GenerateNonFinite, NoUsableLogitNamesThePosition) {
  FixedLogits backend({-kInf, kNaN, -kInf, -kInf, -kInf}, 8);
  const passim::Tokenizer tok = letters();
  passim::GenerateOptions g;
  g.prompt = "a";
  g.steps = 4;
  try {
    (void)passim::generate(backend, tok, g, {});
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("position 1: logits: expected at least one value"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace nonfinite
