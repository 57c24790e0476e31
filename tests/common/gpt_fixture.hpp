// SPDX-License-Identifier: Apache-2.0
/// \file A small random GPT-style float model (LayerNorm or BatchNorm) for tests that must not
/// depend on trained weights: every tensor drawn from a fixed-seed generator.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "passim/io/llama2c.hpp"
#include "passim/io/tokenizer.hpp"
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
  std::mt19937 rng(seed);
  auto fill = [&](std::vector<float>& v, std::size_t n, float scale, float mean = 0.0f) {
    std::normal_distribution<float> d(mean, scale);
    v.resize(n);
    for (auto& x : v) {
      x = d(rng);
    }
  };
  const auto D = std::size_t(dim), H = std::size_t(hidden), L = std::size_t(layers);
  FloatWeights& w = m.weights;
  fill(w.token_embedding, std::size_t(vocab) * D, 0.5f);
  fill(w.pos_embedding, std::size_t(seq) * D, 0.2f);
  const float s_in = 1.0f / std::sqrt(float(dim)), s_hid = 1.0f / std::sqrt(float(hidden));
  for (auto* v : {&w.wq, &w.wk, &w.wv, &w.wo}) {
    fill(*v, L * D * D, s_in);
  }
  fill(w.w1, L * H * D, s_in);
  fill(w.w2, L * D * H, s_hid);
  for (auto* v : {&w.bq, &w.bk, &w.bv, &w.bo, &w.b2}) {
    fill(*v, L * D, 0.05f);
  }
  fill(w.b1, L * H, 0.05f);
  fill(w.rms_att, L * D, 0.1f, 1.0f);
  fill(w.rms_ffn, L * D, 0.1f, 1.0f);
  fill(w.rms_final, D, 0.1f, 1.0f);
  fill(w.att_norm_bias, L * D, 0.05f);
  fill(w.ffn_norm_bias, L * D, 0.05f);
  fill(w.final_norm_bias, D, 0.05f);
  if (norm == NormKind::kBatch) {
    fill(w.att_norm_mean, L * D, 0.3f);
    fill(w.ffn_norm_mean, L * D, 0.3f);
    fill(w.final_norm_mean, D, 0.3f);
    for (auto* v : {&w.att_norm_var, &w.ffn_norm_var}) {
      fill(*v, L * D, 0.3f, 1.0f);
    }
    fill(w.final_norm_var, D, 0.3f, 1.0f);
    for (auto* v : {&w.att_norm_var, &w.ffn_norm_var, &w.final_norm_var}) {
      for (auto& x : *v) {
        x = std::fabs(x) + 0.2f;
      }
    }
  }
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
