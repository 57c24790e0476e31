// SPDX-License-Identifier: Apache-2.0
// Small float models with random weights from a fixed seed.
#include "passim/model/random_model.hpp"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace passim {

FloatWeights random_gpt_weights(const ModelConfig& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto fill = [&](std::vector<float>& v, std::size_t n, float scale, float mean = 0.0f) {
    std::normal_distribution<float> d(mean, scale);
    v.resize(n);
    for (float& x : v) {
      x = d(rng);
    }
  };
  const auto D = std::size_t(c.dim), H = std::size_t(c.hidden_dim), L = std::size_t(c.n_layers);
  const float s_in = 1.0f / std::sqrt(float(c.dim)), s_hid = 1.0f / std::sqrt(float(c.hidden_dim));
  FloatWeights w;
  fill(w.token_embedding, std::size_t(c.vocab_size) * D, 0.5f);  // (vocab, dim)
  fill(w.pos_embedding, std::size_t(c.seq_len) * D, 0.2f);       // (seq_len, dim)
  for (auto* v : {&w.wq, &w.wk, &w.wv, &w.wo}) {
    fill(*v, L * D * D, s_in);  // (layers, dim, dim)
  }
  fill(w.w1, L * H * D, s_in);   // (layers, hidden, dim)
  fill(w.w2, L * D * H, s_hid);  // (layers, dim, hidden)
  for (auto* v : {&w.bq, &w.bk, &w.bv, &w.bo, &w.b2}) {
    fill(*v, L * D, 0.05f);  // (layers, dim)
  }
  fill(w.b1, L * H, 0.05f);            // (layers, hidden)
  fill(w.rms_att, L * D, 0.1f, 1.0f);  // norm gains (layers, dim)
  fill(w.rms_ffn, L * D, 0.1f, 1.0f);
  if (c.head_norm) {
    fill(w.rms_final, D, 0.1f, 1.0f);  // (dim)
  }
  fill(w.att_norm_bias, L * D, 0.05f);  // norm biases (layers, dim)
  fill(w.ffn_norm_bias, L * D, 0.05f);
  if (c.head_norm) {
    fill(w.final_norm_bias, D, 0.05f);
  }
  if (c.norm == NormKind::kBatch) {  // running means and variances (> 0.2)
    fill(w.att_norm_mean, L * D, 0.3f);
    fill(w.ffn_norm_mean, L * D, 0.3f);
    fill(w.final_norm_mean, D, 0.3f);
    for (auto* v : {&w.att_norm_var, &w.ffn_norm_var}) {
      fill(*v, L * D, 0.3f, 1.0f);
    }
    fill(w.final_norm_var, D, 0.3f, 1.0f);
    for (auto* v : {&w.att_norm_var, &w.ffn_norm_var, &w.final_norm_var}) {
      for (float& x : *v) {
        x = std::fabs(x) + 0.2f;
      }
    }
  }
  if (!c.shared_classifier) {
    fill(w.wcls, std::size_t(c.vocab_size) * D, s_in);  // classifier (vocab, dim)
  }
  return w;
}

namespace {

/// The config both random models share: GPT architecture, LayerNorm, GELU, learned positions.
FloatModel random_model(const EncoderShape& shape, bool decoder, std::uint32_t seed) {
  FloatModel m;
  ModelConfig& c = m.config;
  c.arch = Arch::kGpt;
  c.norm = NormKind::kLayer;
  c.norm_eps = shape.norm_eps;
  c.norm_placement = decoder ? NormPlacement::kPre : NormPlacement::kPost;
  c.mask = decoder ? MaskKind::kCausal : MaskKind::kNone;
  c.head_norm = decoder;
  c.shared_classifier = decoder;  // GPT-2 ties its classifier to the token embedding
  c.dim = shape.dim;
  c.hidden_dim = shape.hidden;
  c.n_layers = shape.layers;
  c.n_heads = shape.heads;
  c.n_kv_heads = shape.heads;
  c.vocab_size = shape.vocab;
  c.seq_len = shape.seq_len;
  c.bos_token = 0;
  c.bos_ends_text = false;
  m.source = fmt::format("{}(seed {})", decoder ? "random-decoder" : "random-encoder", seed);
  validate_config(c, m.source);
  m.weights = random_gpt_weights(c, seed);
  m.sha256 = std::string(64, '0');
  return m;
}

}  // namespace

FloatModel random_encoder(const EncoderShape& shape, std::uint32_t seed) {
  return random_model(shape, false, seed);
}

FloatModel random_decoder(const EncoderShape& shape, std::uint32_t seed) {
  return random_model(shape, true, seed);
}

const ArchShape* find_arch(std::string_view name) noexcept {
  for (const ArchShape& a : kArchShapes) {
    if (a.name == name) {
      return &a;
    }
  }
  return nullptr;
}

}  // namespace passim
