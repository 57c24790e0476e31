// SPDX-License-Identifier: Apache-2.0
// Validation of Transformer hyper-parameters.
#include "passim/model/backend.hpp"
#include "passim/model/config.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace passim {

namespace {
void check_range(const std::string& source, const char* field, int value, int max) {
  if (value < 1 || value > max) {
    throw std::runtime_error(fmt::format("{}: header field {}: expected 1..{}, found {}", source,
                                         field, max, value));
  }
}
/// n_heads must divide dim, and n_kv_heads must divide n_heads. One wrong field breaks the
/// rules it takes part in: n_heads when both are broken, else one of the two fields of the
/// broken rule (both are named, since either may be the wrong one).
void check_head_counts(const ModelConfig& c, const std::string& source) {
  const bool heads_fit_dim = c.dim % c.n_heads == 0;
  const bool kv_fit_heads = c.n_kv_heads <= c.n_heads && c.n_heads % c.n_kv_heads == 0;
  if (!heads_fit_dim && !kv_fit_heads) {
    throw std::runtime_error(fmt::format(
        "{}: header field n_heads: expected a divisor of dim = {} and a multiple of n_kv_heads "
        "= {}, found {}", source, c.dim, c.n_kv_heads, c.n_heads));
  }
  if (!heads_fit_dim) {
    throw std::runtime_error(fmt::format(
        "{}: header fields dim and n_heads: expected n_heads to divide dim, found dim = {}, "
        "n_heads = {}", source, c.dim, c.n_heads));
  }
  if (!kv_fit_heads) {
    throw std::runtime_error(fmt::format(
        "{}: header fields n_heads and n_kv_heads: expected n_kv_heads to divide n_heads, "
        "found n_heads = {}, n_kv_heads = {}", source, c.n_heads, c.n_kv_heads));
  }
}
}  // namespace

const char* arch_name(Arch a) noexcept { return a == Arch::kGpt ? "gpt" : "llama"; }

const char* norm_name(NormKind n) noexcept {
  switch (n) {
    case NormKind::kLayer:
      return "layernorm";
    case NormKind::kBatch:
      return "batchnorm";
    default:
      return "rmsnorm";
  }
}

namespace {

/// An input projection and a class token only for an unmasked GPT block (an encoder); a class
/// token only with an input projection.
void check_inputs(const ModelConfig& c, const std::string& source) {
  if (c.input_features == 0 && !c.class_token) {
    return;
  }
  if (c.input_features < 0 || c.input_features > kMaxDim) {
    throw std::runtime_error(fmt::format("{}: input_features: expected 0..{}, found {}", source,
                                         kMaxDim, c.input_features));
  }
  if (c.class_token && c.input_features == 0) {
    throw std::runtime_error(fmt::format(
        "{}: class_token: expected only with input_features > 0, found input_features 0",
        source));
  }
  if (c.arch != Arch::kGpt || c.mask != MaskKind::kNone) {
    throw std::runtime_error(fmt::format(
        "{}: input_features: expected only for an unmasked GPT block (an encoder), found a {} "
        "block", source, c.mask == MaskKind::kNone ? arch_name(c.arch) : "causal"));
  }
}

}  // namespace

void validate_config(const ModelConfig& c, const std::string& source) {
  check_range(source, "dim", c.dim, kMaxDim);
  check_range(source, "hidden_dim", c.hidden_dim, kMaxHidden);
  check_range(source, "n_layers", c.n_layers, kMaxLayers);
  check_range(source, "n_heads", c.n_heads, c.dim);
  check_range(source, "n_kv_heads", c.n_kv_heads, c.dim);
  check_range(source, "vocab_size", c.vocab_size, kMaxVocab);
  check_range(source, "seq_len", c.seq_len, kMaxSeqLen);
  check_head_counts(c, source);
  if (c.bos_token < 0 || c.bos_token >= c.vocab_size) {
    throw std::runtime_error(fmt::format("{}: bos_token: expected 0..{}, found {}", source,
                                         c.vocab_size - 1, c.bos_token));
  }
  check_inputs(c, source);
  if (c.arch == Arch::kGpt) {
    if (c.n_kv_heads != c.n_heads) {
      throw std::runtime_error(fmt::format(
          "{}: n_kv_heads: expected n_heads = {} (GPT blocks have no GQA), found {}", source,
          c.n_heads, c.n_kv_heads));
    }
    if (c.norm == NormKind::kRms) {
      throw std::runtime_error(fmt::format(
          "{}: norm: expected layernorm or batchnorm for a GPT block, found rmsnorm", source));
    }
    if (c.norm_placement == NormPlacement::kPost && c.norm != NormKind::kLayer) {
      throw std::runtime_error(fmt::format(
          "{}: norm: expected layernorm for post-norm blocks, found {}", source,
          norm_name(c.norm)));
    }
    if (!c.shared_classifier && c.norm_placement == NormPlacement::kPre) {
      throw std::runtime_error(fmt::format(
          "{}: classifier: expected one tied to token_embd for a GPT block, found its own",
          source));
    }
    if (!(c.norm_eps > 0.0f && c.norm_eps < 1.0f)) {
      throw std::runtime_error(fmt::format("{}: norm_epsilon: expected in (0, 1), found {}",
                                           source, c.norm_eps));
    }
    return;  // no RoPE: any head size
  }
  if (c.norm_placement != NormPlacement::kPre || c.mask != MaskKind::kCausal || !c.head_norm) {
    throw std::runtime_error(fmt::format(
        "{}: blocks: expected pre-norm, causal, with a final norm for a llama block (encoders "
        "are GPT blocks)", source));
  }
  if (c.norm != NormKind::kRms) {
    throw std::runtime_error(fmt::format("{}: norm: expected rmsnorm for a llama block, found {}",
                                         source, norm_name(c.norm)));
  }
  if ((c.dim / c.n_heads) % 2 != 0) {
    throw std::runtime_error(fmt::format(
        "{}: head size dim / n_heads: expected an even number for RoPE, found {} / {} = {}",
        source, c.dim, c.n_heads, c.dim / c.n_heads));
  }
}

std::uint64_t llama2c_param_count(const ModelConfig& c) {
  const std::uint64_t dim = std::uint64_t(c.dim);
  const std::uint64_t hidden = std::uint64_t(c.hidden_dim);
  const std::uint64_t layers = std::uint64_t(c.n_layers);
  const std::uint64_t vocab = std::uint64_t(c.vocab_size);
  const std::uint64_t kv_dim = c.kv_dim();
  const std::uint64_t head_size = c.head_size();
  std::uint64_t n = vocab * dim;                           // token embedding
  n += layers * dim;                                       // rms_att
  n += layers * (dim * dim + 2 * kv_dim * dim + dim * dim);  // wq, wk, wv, wo
  n += layers * dim;                                       // rms_ffn
  n += layers * 3 * hidden * dim;                          // w1, w2, w3
  n += dim;                                                // rms_final
  n += std::uint64_t(c.seq_len) * head_size;               // freq_cis_real + freq_cis_imag
  if (!c.shared_classifier) {
    n += vocab * dim;
  }
  return n;
}

void check_token_position(const ModelConfig& c, int token, int pos) {
  if (token < 0 || token >= c.vocab_size) {
    throw std::runtime_error(
        fmt::format("token: expected 0..{}, found {}", c.vocab_size - 1, token));
  }
  if (pos < 0 || pos >= c.seq_len) {
    throw std::runtime_error(
        fmt::format("position: expected 0..{} (the context length), found {}", c.seq_len - 1,
                    pos));
  }
}

void check_sequence(const ModelConfig& c, std::span<const int> tokens, int pos) {
  if (tokens.empty()) {
    throw std::runtime_error("sequence: expected at least one token, found none");
  }
  if (pos < 0 || std::size_t(pos) + tokens.size() > std::size_t(c.seq_len)) {
    throw std::runtime_error(fmt::format(
        "sequence of {} tokens at position {}: expected positions within 0..{} (the context "
        "length)", tokens.size(), pos, c.seq_len - 1));
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    check_token_position(c, tokens[i], pos + int(i));
  }
}

void Backend::forward_sequence(std::span<const int> tokens, int pos) {
  check_sequence(config(), tokens, pos);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    forward(tokens[i], pos + int(i));
  }
}

}  // namespace passim
