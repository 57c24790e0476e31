// SPDX-License-Identifier: Apache-2.0
// The ordered description of a model from its config.
#include "passim/model/description.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace passim {

ModelDesc describe(const ModelConfig& c) {
  const bool gpt = c.arch == Arch::kGpt;
  const NormDesc norm{c.norm, c.norm_placement};
  LayerDesc layer;
  layer.attention.norm = norm;
  layer.attention.n_heads = std::size_t(c.n_heads);
  layer.attention.n_kv_heads = std::size_t(c.n_kv_heads);
  layer.attention.head_size = c.head_size();
  layer.attention.mask = c.mask;
  layer.attention.rope = !gpt;
  layer.attention.bias = gpt;
  layer.ffn.norm = norm;
  layer.ffn.kind = gpt ? FfnKind::kGelu : FfnKind::kSwiGlu;
  layer.ffn.hidden = std::size_t(c.hidden_dim);
  layer.ffn.bias = gpt;
  layer.ffn.gelu = c.gelu;

  ModelDesc d;
  d.dim = std::size_t(c.dim);
  // Token ids index the embedding; inputs over features have only the class token's row.
  d.embedding.vocab = c.input_features > 0 ? (c.class_token ? 1 : 0) : std::size_t(c.vocab_size);
  d.embedding.positions = gpt ? PositionKind::kLearned : PositionKind::kRope;
  d.embedding.max_positions = std::size_t(c.seq_len);
  d.embedding.features = std::size_t(c.input_features);
  d.embedding.class_token = c.class_token;
  d.layers.assign(std::size_t(c.n_layers), layer);
  d.head.has_norm = c.head_norm;
  d.head.norm = c.norm;
  d.head.classes = std::size_t(c.vocab_size);
  d.head.shared_classifier = c.shared_classifier;
  d.head.reads_first = c.class_token;
  return d;
}

bool unmasked(const ModelDesc& d) noexcept {
  for (const LayerDesc& L : d.layers) {
    if (L.attention.mask == MaskKind::kNone) {
      return true;
    }
  }
  return false;
}

void require_whole_sequence(const ModelDesc& d, int pos, const char* who) {
  if (unmasked(d) && pos != 0) {
    throw std::runtime_error(fmt::format(
        "{}: position {}: expected 0 (an unmasked model runs one whole sequence per pass)", who,
        pos));
  }
}

std::size_t require_features(const ModelDesc& d, std::size_t values, std::size_t frames,
                             const char* who) {
  const std::size_t nf = d.embedding.features;
  const std::size_t n = frames + (d.embedding.class_token ? 1 : 0);
  if (nf == 0 || frames == 0 || values != frames * nf || n > d.embedding.max_positions) {
    throw std::runtime_error(fmt::format(
        "{}: features: expected {} frames of {} (at most {} positions), found {} values for {} "
        "frames", who, frames, nf, d.embedding.max_positions, values, frames));
  }
  return n;
}

}  // namespace passim
