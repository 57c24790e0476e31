// SPDX-License-Identifier: Apache-2.0
// The ordered description of a model from its config.
#include "passim/model/description.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace passim {

ModelDesc describe(const ModelConfig& c) {
  const bool gpt = c.arch == Arch::kGpt;
  const NormDesc norm{c.norm, NormPlacement::kPre};
  LayerDesc layer;
  layer.attention.norm = norm;
  layer.attention.n_heads = std::size_t(c.n_heads);
  layer.attention.n_kv_heads = std::size_t(c.n_kv_heads);
  layer.attention.head_size = c.head_size();
  layer.attention.mask = MaskKind::kCausal;
  layer.attention.rope = !gpt;
  layer.attention.bias = gpt;
  layer.ffn.norm = norm;
  layer.ffn.kind = gpt ? FfnKind::kGelu : FfnKind::kSwiGlu;
  layer.ffn.hidden = std::size_t(c.hidden_dim);
  layer.ffn.bias = gpt;

  ModelDesc d;
  d.dim = std::size_t(c.dim);
  d.embedding.vocab = std::size_t(c.vocab_size);
  d.embedding.positions = gpt ? PositionKind::kLearned : PositionKind::kRope;
  d.embedding.max_positions = std::size_t(c.seq_len);
  d.layers.assign(std::size_t(c.n_layers), layer);
  d.head.norm = c.norm;
  d.head.classes = std::size_t(c.vocab_size);
  d.head.shared_classifier = c.shared_classifier;
  return d;
}

void require_pre_norm_causal(const ModelDesc& d, const char* who) {
  for (std::size_t l = 0; l < d.layers.size(); ++l) {
    const LayerDesc& L = d.layers[l];
    if (L.attention.norm.placement != NormPlacement::kPre ||
        L.ffn.norm.placement != NormPlacement::kPre) {
      throw std::runtime_error(fmt::format(
          "{}: layer {} norm placement: expected pre-norm, found post-norm (not supported yet)",
          who, l));
    }
    if (L.attention.mask != MaskKind::kCausal) {
      throw std::runtime_error(fmt::format(
          "{}: layer {} attention mask: expected causal, found none (not supported yet)", who,
          l));
    }
  }
}

}  // namespace passim
