// SPDX-License-Identifier: Apache-2.0
/// \file The shape of a Transformer (llama2.c `Config`, or a GPT-style block) and its
/// validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace passim {

/// Block family. `kLlama`: RMSNorm, RoPE, SwiGLU FFN (w1 gate, w3 up, w2 down), no biases,
/// grouped-query attention. `kGpt` (GPT-2 style, pre-norm): learned positional embeddings,
/// LayerNorm or BatchNorm, biases on every projection, GELU FFN (w1 up, w2 down, no w3),
/// multi-head attention without GQA (n_kv_heads == n_heads), classifier tied to the embedding.
enum class Arch : std::uint8_t { kLlama = 0, kGpt = 1 };

/// Normalisation before attention, before the FFN and before the classifier.
enum class NormKind : std::uint8_t {
  kRms = 0,    ///< RMSNorm (Zhang & Sennrich 2019): statistics of the current row, 2 passes
  kLayer = 1,  ///< LayerNorm (Ba et al. 2016): mean and variance of the current row, 3 passes
  kBatch = 2,  ///< BatchNorm (Ioffe & Szegedy 2015): running statistics fixed at training
};

/// Where a block's norm sits relative to its residual add.
enum class NormPlacement : std::uint8_t {
  kPre,   ///< x + f(norm(x)): GPT-2, Llama (Xiong et al. 2020)
  kPost,  ///< norm(x + f(x)): the original Transformer, BERT (Vaswani et al. 2017)
};

/// Which positions a query attends to.
enum class MaskKind : std::uint8_t {
  kCausal,  ///< positions up to its own (decoders)
  kNone,    ///< every position of the sequence (encoders)
};

/// The GELU of a GPT block's FFN (Hendrycks & Gimpel 2016). The integer kernel (i-GELU)
/// approximates both; the float reference computes the model's own form.
enum class GeluForm : std::uint8_t {
  kErf,   ///< x Phi(x) with the exact erf (GPT-2 in PyTorch, BERT)
  kTanh,  ///< 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (Keras, KWT)
};

[[nodiscard]] const char* arch_name(Arch a) noexcept;
[[nodiscard]] const char* norm_name(NormKind n) noexcept;

/// Model hyper-parameters. All counts are elements, not bytes.
struct ModelConfig {
  int dim = 0;         ///< d_model
  int hidden_dim = 0;  ///< FFN inner width
  int n_layers = 0;
  int n_heads = 0;     ///< query heads
  int n_kv_heads = 0;  ///< key/value heads (grouped-query attention)
  int vocab_size = 0;
  int seq_len = 0;     ///< maximum context, positions
  bool shared_classifier = true;  ///< classifier reuses the token embedding table
  Arch arch = Arch::kLlama;
  NormKind norm = NormKind::kRms;   ///< kRms for kLlama; kLayer or kBatch for kGpt
  float norm_eps = 1e-5f;           ///< added to the variance (mean square for RMSNorm)
  int bos_token = 1;                ///< the token every sequence starts from
  bool bos_ends_text = true;        ///< generation stops when the model emits bos_token
  /// Encoders (kGpt only): post-norm blocks with a LayerNorm or RMSNorm, attention without a
  /// mask (one whole sequence from position 0 per pass), and no final norm before the
  /// classifier when head_norm is false. The defaults are the decoders'.
  NormPlacement norm_placement = NormPlacement::kPre;
  MaskKind mask = MaskKind::kCausal;
  bool head_norm = true;            ///< a norm of the config's kind before the classifier
  GeluForm gelu = GeluForm::kErf;   ///< kGpt only
  /// Encoders over continuous inputs (kGpt, unmasked; Dosovitskiy et al. 2021, Eq. 1): 0 when
  /// the input is token ids; else each input position is the projection (input_proj,
  /// input_bias) of this many features, and vocab_size counts the classifier's classes.
  int input_features = 0;
  /// A learned class token before the projected inputs (input_features > 0 only): the
  /// sequence is one longer, and the classifier reads position 0.
  bool class_token = false;

  [[nodiscard]] std::size_t head_size() const noexcept { return std::size_t(dim / n_heads); }
  [[nodiscard]] std::size_t kv_dim() const noexcept {
    return std::size_t(dim) * std::size_t(n_kv_heads) / std::size_t(n_heads);
  }
};

/// Upper bounds that keep every size computation in 64 bits and every allocation bounded by
/// the size of the file that declared it.
inline constexpr int kMaxDim = 1 << 14;
inline constexpr int kMaxHidden = 1 << 16;
inline constexpr int kMaxLayers = 1 << 10;
inline constexpr int kMaxVocab = 1 << 20;
inline constexpr int kMaxSeqLen = 1 << 16;

/// Checks that every field is positive, within the limits above and consistent:
/// dim % n_heads == 0, n_heads % n_kv_heads == 0, even head size (RoPE rotates pairs);
/// for kGpt also n_kv_heads == n_heads, a LayerNorm or BatchNorm, a shared classifier unless
/// the blocks are post-norm, and bos_token < vocab_size; post-norm blocks, an unmasked
/// attention and a head without a norm only for kGpt, post-norm only with a LayerNorm.
/// Throws std::runtime_error naming `source`, the field, the expected and the found value
/// (for a broken divisibility rule the field in fault: n_heads when it breaks both rules,
/// else both fields of the rule broken).
void validate_config(const ModelConfig& c, const std::string& source);

/// Number of float parameters of a llama2.c checkpoint with this config, including the two
/// RoPE tables that the legacy format stores (seq_len * head_size / 2 each).
[[nodiscard]] std::uint64_t llama2c_param_count(const ModelConfig& c);

}  // namespace passim
