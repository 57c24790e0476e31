// SPDX-License-Identifier: Apache-2.0
/// \file The integer forward pass on the host CPU, calling the golden kernels directly.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "passim/kernels/softmax.hpp"
#include "passim/model/backend.hpp"
#include "passim/model/description.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim {

/// The int8 matmul input after a norm of kind `kind` (docs/numerics.md): `rmsnorm_i8`,
/// `layernorm_i8`, `batchnorm_i8`, or for a BatchNorm folded into the next matmul the
/// per-tensor step requantize(x, n.rq, 8) that the DMA applies.
///   x: (dim) int16   out: (dim) int8
void norm_i8(const QuantModel& m, NormKind kind, const QuantNorm& n,
             std::span<const std::int16_t> x, std::span<std::int8_t> out);

/// The residual itself as an int8 matmul input, requantize(x, n.rq, 8): the step the DMA
/// applies on its way to DRAM, for a folded BatchNorm, a post-norm block's input and a head
/// without a norm.   x: (dim) int16   out: (dim) int8
void residual_i8(const QuantNorm& n, std::span<const std::int16_t> x, std::span<std::int8_t> out);

/// The host's int8 features of a model over continuous inputs, rows of input_features:
/// feature j becomes clamp(round(f_j / m.input_scale[j]), -127, 127), halves away from zero
/// (docs/kwt.md).
[[nodiscard]] std::vector<std::int8_t> quantize_features(const QuantModel& m,
                                                         std::span<const float> f);

/// Integer-only forward pass of a `QuantModel` walking its description (model/description.hpp,
/// docs/numerics.md): int8 weights, int8 matmul inputs, 12-bit queries/keys, int16 residual
/// stream and SwiGLU gate/up, int32 accumulators, integer norms, Softmax, SiLU, GELU and RoPE.
/// Logits are int32 in Q.16; `logits()` returns them as float, which is exact while
/// |logit| < 256.
class CpuBackend final : public Backend {
 public:
  /// Keeps a reference to `model`, which must outlive the backend. `softmax` picks the
  /// attention Softmax: three-pass (default) or online in the order of `softmax.lanes` lanes,
  /// which is what the accelerator with that many lanes computes.
  explicit CpuBackend(const QuantModel& model, kernels::SoftmaxOptions softmax = {});

  [[nodiscard]] std::string_view name() const noexcept override { return "cpu"; }
  [[nodiscard]] const ModelConfig& config() const noexcept override { return model_.config; }
  void forward(int token, int pos) override;
  /// n positions at once: every matmul on n rows, each row's attention over the positions up
  /// to its own (bit-identical to n forward() calls), or for an unmasked model (an encoder)
  /// over all n positions of the sequence, which must start at pos = 0 (else throws).
  void forward_sequence(std::span<const int> tokens, int pos) override;
  /// An encoder over continuous features (ModelConfig::input_features > 0): `features` holds
  /// `frames` rows of int8 features (quantize_features); the class token (if any) and the
  /// projected rows run as one sequence from position 0; the logits are the class token's
  /// (else the last row's). Throws std::runtime_error when the sizes differ.
  void forward_features(std::span<const std::int8_t> features, std::size_t frames);
  [[nodiscard]] std::span<const float> logits() const noexcept override { return logits_f32_; }
  void reset() override {}

  /// The raw int32 logits (vocab), Q.16.
  [[nodiscard]] std::span<const std::int32_t> logits_i32() const noexcept { return logits_; }
  /// Attention probabilities (Q0.15) of head `h` of the last position fed, (pos + 1);
  /// valid only when probability capture is on.
  [[nodiscard]] std::span<const std::int16_t> attention_row(int layer, int h) const;
  /// Keep every layer's attention probabilities of the last forward (tests).
  void capture_attention(bool on) noexcept { capture_ = on; }
  /// Called with the int16 residual stream (dim) of each position after the embedding
  /// (layer -1) and after every layer (0 .. n_layers - 1); empty to switch off.
  using ResidualObserver = std::function<void(int layer, std::span<const std::int16_t> x)>;
  void set_residual_observer(ResidualObserver obs) { residual_observer_ = std::move(obs); }
  /// Called after each requantised activation of a forward with how many of its values sit at
  /// the limits of their width (saturated, or there by chance) and how many it has: per layer,
  /// the int8 block inputs "xn" (both blocks), "q" and "k" (kQkBits), "v" (int8), "o" (the
  /// attention branch, int16), "gate" and "up" (int16, SwiGLU; "up" int8 with GELU), "hidden"
  /// (int8), "down" (the FFN branch, int16). Empty to switch off (no counting then).
  using SaturationObserver = std::function<void(int layer, std::string_view tensor,
                                                std::size_t at_limit, std::size_t values)>;
  void set_saturation_observer(SaturationObserver obs) { saturation_observer_ = std::move(obs); }

 private:
  void embed(std::span<const int> tokens, std::size_t pos);
  void run_layers(std::size_t p0, std::size_t n);
  void block_input(const NormDesc& nd, const QuantNorm& qn, std::size_t n);
  void post_norm(const NormDesc& nd, const QuantNorm& qn, std::size_t n);
  void attention_block(std::size_t l, std::size_t pos, std::size_t n);
  void qkv(std::size_t l, std::size_t pos, std::size_t n);
  void store_kv(std::size_t l, std::size_t pos, std::size_t n);
  void attend(std::size_t l, std::size_t pos, std::size_t n);
  void ffn_block(std::size_t l, std::size_t n);
  void head(std::size_t n);
  void observe(int layer, std::size_t n);
  /// Counts `v`'s values at the limits of a signed `bits`-bit type for the saturation observer.
  template <typename T>
  void note(std::size_t layer, std::string_view tensor, std::span<const T> v, int bits);

  const QuantModel& model_;
  ModelDesc desc_;
  kernels::SoftmaxOptions softmax_;
  // Activations of up to seq_len rows (positions), row-major.
  std::vector<std::int16_t> x_, branch_;              // (rows, dim) residual stream, int16
  std::vector<std::int8_t> xn_, att_, hid_;          // int8 matmul inputs: (rows, dim) (rows, q_dim) (rows, hidden)
  std::vector<std::int16_t> q_;                      // (rows, q_dim) kQkBits-bit queries
  std::vector<std::int16_t> gate_, up_;              // (rows, hidden) int16 SwiGLU gate and up
  std::vector<std::int32_t> acc_;                    // (rows, max(dim, q_dim, hidden)) int32
  std::vector<std::int16_t> k_rows_;                 // (rows, kv_dim) kQkBits new keys
  std::vector<std::int8_t> v_rows_;                  // (rows, kv_dim) int8 new values
  // KV caches channel-major (attention_cm_i8): channel c of position t at [c * seq_len + t].
  std::vector<std::int16_t> key_cache_;              // (n_layers, kv_dim, seq_len) kQkBits
  std::vector<std::int16_t> value_cache_;            // (n_layers, kv_dim, seq_len) int8 values
  std::vector<std::int32_t> scores_;                  // (seq_len)
  std::vector<std::uint32_t> exps_;                   // (seq_len)
  std::vector<std::int16_t> probs_;                   // (seq_len) Q0.15
  std::vector<std::uint32_t> head_acc_;               // (head_size)
  std::vector<std::int16_t> captured_;                // (n_layers, n_heads, seq_len)
  std::vector<std::int32_t> logits_;                  // (vocab) Q.16
  std::vector<float> logits_f32_;
  bool capture_ = false;
  int last_pos_ = 0;
  ResidualObserver residual_observer_;
  SaturationObserver saturation_observer_;
};

}  // namespace passim
