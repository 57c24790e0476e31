// SPDX-License-Identifier: Apache-2.0
// Sampler: argmax ties, greedy decoding, run.c's xorshift RNG and nucleus (top-p) sampling.
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "passim/eval/sampler.hpp"

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
