// SPDX-License-Identifier: Apache-2.0
/// \file The one ordered description of a model: the embedding and its positions, each layer's
/// attention and feed-forward blocks with their norms, and the head. The float reference, the
/// quantiser, the integer backend and the compiler all walk this description, so an
/// architecture is data here, not a code path of its own (docs/architecture.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "passim/model/config.hpp"

namespace passim {

/// How a token's position enters the model.
enum class PositionKind : std::uint8_t {
  kRope,     ///< rotary embedding of queries and keys in every attention block (Su et al. 2021)
  kLearned,  ///< a learned row per position added to the token embedding (Radford et al. 2019)
};

/// The feed-forward block's nonlinearity.
enum class FfnKind : std::uint8_t {
  kSwiGlu,  ///< w2 (silu(w1 x) * w3 x) (Shazeer 2020, Eq. 6)
  kGelu,    ///< w2 gelu(w1 x + b1) + b2 (Hendrycks & Gimpel 2016)
};

/// A block's norm: its kind and where it sits.
struct NormDesc {
  NormKind kind = NormKind::kRms;
  NormPlacement placement = NormPlacement::kPre;
};

/// One attention block. Queries have `n_heads` heads of `head_size`; keys and values have
/// `n_kv_heads` (grouped-query attention when fewer).
struct AttentionDesc {
  NormDesc norm;
  std::size_t n_heads = 0;
  std::size_t n_kv_heads = 0;
  std::size_t head_size = 0;
  MaskKind mask = MaskKind::kCausal;
  bool rope = false;  ///< RoPE on queries and keys, before the scores
  bool bias = false;  ///< biases on the q, k, v and output projections

  [[nodiscard]] std::size_t q_dim() const noexcept { return n_heads * head_size; }
  [[nodiscard]] std::size_t kv_dim() const noexcept { return n_kv_heads * head_size; }
  /// Query heads per key/value head.
  [[nodiscard]] std::size_t group() const noexcept { return n_heads / n_kv_heads; }
};

/// One feed-forward block of inner width `hidden`.
struct FfnDesc {
  NormDesc norm;
  FfnKind kind = FfnKind::kSwiGlu;
  std::size_t hidden = 0;
  bool bias = false;  ///< biases on both projections
  GeluForm gelu = GeluForm::kErf;  ///< kGelu: the float reference's form
};

/// One layer: attention, then feed-forward.
struct LayerDesc {
  AttentionDesc attention;
  FfnDesc ffn;
};

/// The model's input rows and how positions are added: a token embedding (`vocab` rows of
/// `dim`) looked up by token id, or (features > 0) a projection of `features` values per
/// input position, after a learned class token when `class_token` is set.
struct EmbeddingDesc {
  std::size_t vocab = 0;
  PositionKind positions = PositionKind::kRope;
  std::size_t max_positions = 0;  ///< context length
  std::size_t features = 0;       ///< 0: token ids
  bool class_token = false;
};

/// The final norm (if any) and the classifier (`classes` rows of `dim`) of the last position.
struct HeadDesc {
  bool has_norm = true;  ///< false: the classifier reads the residual stream itself
  NormKind norm = NormKind::kRms;
  std::size_t classes = 0;
  bool shared_classifier = true;  ///< the classifier is the token embedding matrix
  bool reads_first = false;  ///< the classifier reads position 0 (the class token), not the last
};

/// The model in the order it runs. Every tensor between two entries is (dim) per position.
struct ModelDesc {
  std::size_t dim = 0;
  EmbeddingDesc embedding;
  std::vector<LayerDesc> layers;
  HeadDesc head;
};

/// The description of a validated config: kLlama is RMSNorm pre-norm blocks with RoPE,
/// grouped-query causal attention without biases and a SwiGLU FFN; kGpt is pre-norm blocks with
/// the config's LayerNorm or BatchNorm, learned positions, causal attention and a GELU FFN,
/// biases everywhere. Every layer and the head share the config's norm kind; the config's
/// norm placement, mask and head norm (an encoder's post-norm blocks without a mask) apply to
/// every layer.
[[nodiscard]] ModelDesc describe(const ModelConfig& c);

/// True when some layer's attention has no mask: the model then runs one whole sequence from
/// position 0 per pass (an encoder), never a decoding step.
[[nodiscard]] bool unmasked(const ModelDesc& d) noexcept;

/// Throws std::runtime_error naming `who` unless a sequence of `n` positions from `pos` is one
/// whole pass of an unmasked model: pos = 0 (nothing to continue from). Causal models: no-op.
void require_whole_sequence(const ModelDesc& d, int pos, const char* who);

/// The positions of an input of `frames` rows of continuous features (the class token, if
/// any, and the frames). Throws std::runtime_error naming `who` unless the model takes
/// features, frames > 0, `values` = frames * features and the positions fit the context.
std::size_t require_features(const ModelDesc& d, std::size_t values, std::size_t frames,
                             const char* who);

}  // namespace passim
