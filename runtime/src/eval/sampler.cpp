// SPDX-License-Identifier: Apache-2.0
// Sampling as in llama2.c run.c.
#include "passim/eval/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace passim {

int argmax(std::span<const float> v) {
  // NaN compares false with everything, so a NaN at index 0 used to win against every later
  // value: start from the first value that is not NaN.
  std::size_t best = 0;
  while (best < v.size() && std::isnan(v[best])) {
    ++best;
  }
  for (std::size_t i = best + 1; i < v.size(); ++i) {
    if (v[i] > v[best]) {
      best = i;
    }
  }
  if (best == v.size() || v[best] == -std::numeric_limits<float>::infinity()) {
    const LogitCount c = count_logits(v);
    throw std::runtime_error(fmt::format(
        "logits: expected at least one value that is not NaN or -Inf, found {} values: {} NaN, "
        "{} -Inf",
        v.size(), c.nan, c.neg_inf));
  }
  return static_cast<int>(best);
}

LogitCount count_logits(std::span<const float> v) noexcept {
  LogitCount c;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const bool bad = std::isnan(v[i]) || std::isinf(v[i]);
    if (bad && c.first_bad < 0) {
      c.first_bad = static_cast<int>(i);
    }
    c.nan += std::isnan(v[i]) ? 1 : 0;
    c.pos_inf += v[i] == std::numeric_limits<float>::infinity() ? 1 : 0;
    c.neg_inf += v[i] == -std::numeric_limits<float>::infinity() ? 1 : 0;
  }
  return c;
}

void softmax_f32(std::span<float> x) noexcept {
  float max_val = x[0];
  for (std::size_t i = 1; i < x.size(); ++i) {
    max_val = std::max(max_val, x[i]);
  }
  float sum = 0.0f;
  for (float& v : x) {
    v = std::exp(v - max_val);
    sum += v;
  }
  for (float& v : x) {
    v /= sum;
  }
}

Sampler::Sampler(int vocab_size, float temperature, float top_p, std::uint64_t seed)
    : vocab_size_(vocab_size), temperature_(temperature), top_p_(top_p), state_(seed) {
  if (!std::isfinite(temperature) || temperature < 0.0f || !std::isfinite(top_p)) {
    throw std::invalid_argument("sampler: temperature must be finite and >= 0, top_p finite");
  }
  if (seed == 0) {
    throw std::invalid_argument("sampler: seed must be non-zero (xorshift state 0 is stuck)");
  }
  candidates_.reserve(std::size_t(vocab_size));
}

std::uint32_t Sampler::random_u32() noexcept {  // xorshift*, as run.c
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return static_cast<std::uint32_t>((state_ * 0x2545F4914F6CDD1Dull) >> 32);
}

float Sampler::random_f32() noexcept {
  return static_cast<float>(random_u32() >> 8) / 16777216.0f;
}

int Sampler::sample(std::span<float> logits) {
  const int greedy = argmax(logits);
  if (temperature_ == 0.0f) {
    return greedy;
  }
  for (float& v : logits) {
    // A NaN logit has probability 0 (as if it were -Inf), so that it cannot poison the sum.
    v = std::isnan(v) ? -std::numeric_limits<float>::infinity() : v / temperature_;
  }
  softmax_f32(logits);
  const float coin = random_f32();
  // A temperature so small that the scaled logits overflow leaves no usable distribution:
  // that limit is greedy decoding.
  if (!std::all_of(logits.begin(), logits.end(), [](float p) { return std::isfinite(p); })) {
    return greedy;
  }
  if (top_p_ <= 0.0f || top_p_ >= 1.0f) {
    return sample_mult(logits, coin);
  }
  return sample_topp(logits, coin, greedy);
}

int Sampler::sample_mult(std::span<const float> probs, float coin) const {
  float cdf = 0.0f;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    cdf += probs[i];
    if (coin < cdf) {
      return static_cast<int>(i);
    }
  }
  return vocab_size_ - 1;  // in case of rounding errors, as run.c
}

int Sampler::sample_topp(std::span<const float> probs, float coin, int greedy) {
  // Drop tokens that cannot be in the nucleus, sort the rest by probability (descending,
  // stable like glibc's merge-sort qsort), cut at top_p.
  const float cutoff = (1.0f - top_p_) / static_cast<float>(vocab_size_ - 1);
  candidates_.clear();
  for (std::size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] >= cutoff) {
      candidates_.push_back({probs[i], static_cast<int>(i)});
    }
  }
  if (candidates_.empty()) {
    return greedy;
  }
  std::stable_sort(candidates_.begin(), candidates_.end(),
                   [](const ProbIndex& a, const ProbIndex& b) { return a.prob > b.prob; });
  float cumulative = 0.0f;
  std::size_t last = candidates_.size() - 1;
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    cumulative += candidates_[i].prob;
    if (cumulative > top_p_) {
      last = i;
      break;
    }
  }
  const float r = coin * cumulative;
  float cdf = 0.0f;
  for (std::size_t i = 0; i <= last; ++i) {
    cdf += candidates_[i].prob;
    if (r < cdf) {
      return candidates_[i].index;
    }
  }
  return candidates_[last].index;
}

}  // namespace passim
