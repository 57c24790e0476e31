// SPDX-License-Identifier: Apache-2.0
/// \file The interface every inference backend implements (float, cpu, later rtl).
#pragma once

#include <span>
#include <string_view>

#include "passim/model/config.hpp"

namespace passim {

/// Runs a Transformer over positions fed in order, keeping its own KV cache: one position at a
/// time (decoding), or several at once (a prompt's prefill, an encoder's input).
class Backend {
 public:
  virtual ~Backend() = default;
  /// "float", "cpu", ...
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual const ModelConfig& config() const noexcept = 0;
  /// Feeds `token` at position `pos` (0 <= pos < seq_len; positions must be fed in order
  /// from 0 after `reset`). Afterwards `logits` holds the next-token logits.
  virtual void forward(int token, int pos) = 0;
  /// Feeds `tokens` at positions pos .. pos + n - 1 in one pass: every matmul runs on n rows
  /// and each position attends as its mask allows (causal: positions up to its own). For a
  /// causal model the result equals n forward() calls bit for bit; afterwards `logits` holds
  /// the last position's. The default calls forward() per token. Throws as forward().
  virtual void forward_sequence(std::span<const int> tokens, int pos);
  /// Next-token logits (vocab), in real units (integer backends dequantise exactly).
  [[nodiscard]] virtual std::span<const float> logits() const noexcept = 0;
  /// Forgets the KV cache: the next call must be forward(token, 0).
  virtual void reset() = 0;
};

/// Throws std::runtime_error naming the value when `token` is not in [0, vocab_size) or `pos`
/// not in [0, seq_len): the check every backend's forward() makes first.
void check_token_position(const ModelConfig& c, int token, int pos);

/// check_token_position for every token of a sequence at positions pos .. pos + n - 1, and
/// n >= 1.
void check_sequence(const ModelConfig& c, std::span<const int> tokens, int pos);

}  // namespace passim
