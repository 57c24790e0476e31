// SPDX-License-Identifier: Apache-2.0
/// \file Token sampling with the exact semantics of llama2.c `run.c`.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace passim {

/// Index of the largest value, NaN values skipped; the lowest index wins ties, and +Inf wins
/// over every finite value. Throws std::runtime_error ("logits: expected at least one value
/// that is not NaN or -Inf, ...") when `v` is empty or holds only NaN and -Inf: no choice
/// would mean anything.
[[nodiscard]] int argmax(std::span<const float> v);

/// How many logits are not finite, and the index of the first one (-1: all finite).
struct LogitCount {
  int nan = 0;
  int pos_inf = 0;
  int neg_inf = 0;
  int first_bad = -1;
};
[[nodiscard]] LogitCount count_logits(std::span<const float> v) noexcept;

/// Greedy (temperature 0), multinomial (top_p outside (0, 1)) or nucleus sampling, with
/// llama2.c's xorshift RNG so that a seed reproduces run.c's choices.
class Sampler {
 public:
  /// temperature >= 0 and top_p must be finite; `seed` must be non-zero (the xorshift state 0
  /// never changes). Throws std::invalid_argument otherwise.
  Sampler(int vocab_size, float temperature, float top_p, std::uint64_t seed);

  /// Picks the next token. `logits` (vocab) is used as scratch (scaled and softmaxed in
  /// place when temperature > 0). A NaN logit is never chosen (probability 0). Falls back to
  /// the greedy choice when the scaled distribution is not finite (a vanishing temperature,
  /// or a +Inf logit) or the nucleus is empty. Throws like `argmax` when no logit is usable.
  [[nodiscard]] int sample(std::span<float> logits);

 private:
  [[nodiscard]] std::uint32_t random_u32() noexcept;
  [[nodiscard]] float random_f32() noexcept;
  /// Multinomial sampling (run.c `sample_mult`): the first index whose cumulative
  /// probability exceeds `coin` in [0, 1).
  [[nodiscard]] int sample_mult(std::span<const float> probs, float coin) const;
  /// Nucleus sampling (run.c `sample_topp`) over `probs`; `greedy` when the nucleus is empty.
  [[nodiscard]] int sample_topp(std::span<const float> probs, float coin, int greedy);

  int vocab_size_;
  float temperature_;
  float top_p_;
  std::uint64_t state_;
  struct ProbIndex {
    float prob;
    int index;
  };
  std::vector<ProbIndex> candidates_;
};

/// In-place softmax over float logits, as run.c computes it (float32, sequential sum).
void softmax_f32(std::span<float> x) noexcept;

}  // namespace passim
