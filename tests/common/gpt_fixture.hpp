// SPDX-License-Identifier: Apache-2.0
/// \file A small random GPT-style float model (LayerNorm or BatchNorm) for tests that must not
/// depend on trained weights: every tensor drawn from a fixed-seed generator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "passim/io/llama2c.hpp"
#include "passim/io/tokenizer.hpp"
#include "passim/model/random_model.hpp"
#include "passim/model/weights.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim::test {

/// dim 16, 2 heads, hidden 32, 2 layers, vocab 11, context 24 (all odd-free so that every
/// config's tiles and lanes divide or pad differently).
inline FloatModel random_gpt(NormKind norm, std::uint32_t seed, int dim = 16, int hidden = 40,
                             int layers = 2, int vocab = 11, int seq = 24) {
  FloatModel m;
  ModelConfig& c = m.config;
  c.arch = Arch::kGpt;
  c.norm = norm;
  c.dim = dim;
  c.hidden_dim = hidden;
  c.n_layers = layers;
  c.n_heads = 2;
  c.n_kv_heads = 2;
  c.vocab_size = vocab;
  c.seq_len = seq;
  c.bos_token = 0;
  c.bos_ends_text = false;
  m.weights = random_gpt_weights(c, seed);
  m.source = "random-gpt";
  m.sha256 = std::string(64, '0');
  return m;
}

/// A character tokenizer over "\n" and the letters a..j (11 pieces, BOS = "\n").
inline Tokenizer random_gpt_tokenizer() {
  std::vector<std::string> chars{"\n"};
  for (char ch = 'a'; ch <= 'j'; ++ch) {
    chars.emplace_back(1, ch);
  }
  return Tokenizer::char_level(chars, 0, "random-gpt");
}

}  // namespace passim::test
