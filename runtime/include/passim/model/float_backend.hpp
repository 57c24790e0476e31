// SPDX-License-Identifier: Apache-2.0
/// \file The float32 reference forward pass (Eigen), the accuracy baseline of the integer model.
#pragma once

#include <span>
#include <vector>

#include <Eigen/Core>

#include "passim/model/activations.hpp"
#include "passim/model/backend.hpp"
#include "passim/model/description.hpp"
#include "passim/model/weights.hpp"

namespace passim {

/// Float32 forward pass of a model's description (model/description.hpp): llama2.c `run.c`
/// semantics for RMSNorm/RoPE/SwiGLU blocks, PyTorch semantics for the others (LayerNorm with
/// the biased variance, BatchNorm with the running statistics, exact erf GELU, learned
/// positions, biases). Every dot product accumulates sequentially in float32 in run.c's order,
/// so greedy tokens match run.c exactly; Eigen holds the tensors and does the elementwise work.
class FloatBackend final : public Backend {
 public:
  /// Keeps a reference to `model`, which must outlive the backend.
  explicit FloatBackend(const FloatModel& model);

  [[nodiscard]] std::string_view name() const noexcept override { return "float"; }
  [[nodiscard]] const ModelConfig& config() const noexcept override { return model_.config; }
  /// Throws std::runtime_error when the logits are not finite (float32 overflow).
  /// An unmasked model (an encoder) runs it as a sequence of one token at position 0.
  void forward(int token, int pos) override;
  /// Causal: forward() per token. Unmasked (an encoder): the whole sequence from position 0
  /// layer by layer, every row attending to all n positions; `logits` are the last row's.
  /// Throws as forward(), and for an unmasked model when pos != 0.
  void forward_sequence(std::span<const int> tokens, int pos) override;
  /// An encoder over continuous inputs (ModelConfig::input_features > 0): `features` holds
  /// `frames` rows of input_features values; the class token (if any) and the projected rows
  /// run as one sequence from position 0, and `logits` are the class token's (else the last
  /// row's). Throws std::runtime_error when the model takes token ids, or the sizes differ.
  void forward_features(std::span<const float> features, std::size_t frames);
  [[nodiscard]] std::span<const float> logits() const noexcept override {
    return {logits_.data(), std::size_t(logits_.size())};
  }
  void reset() override {}

  /// Attach an observer (or nullptr); it sees each activation as it is produced.
  void set_observer(ActivationObserver* obs) noexcept { observer_ = obs; }
  /// Softmax probabilities of head `h` of the last layer at the last forward, (pos + 1); for
  /// an unmasked model the last row's, (n).
  [[nodiscard]] std::span<const float> attention_row(int h) const noexcept;

 private:
  /// Where a norm's weights sit: before attention or the FFN of `layer`, or the final norm.
  enum class NormSite { kAttention, kFfn, kFinal };

  void observe(Act act, int layer, Eigen::Ref<const Eigen::VectorXf> v) const;
  void embed(int token, std::size_t pos);
  void encode(Eigen::MatrixXf& rows);
  void norm(NormSite site, std::size_t layer, const Eigen::VectorXf& in, Eigen::VectorXf& out);
  void block_input(NormSite site, std::size_t layer, const NormDesc& nd);
  void post_norm(NormSite site, std::size_t layer, const NormDesc& nd);
  void attention_in(std::size_t layer, std::size_t pos);
  void attention_out(std::size_t layer, std::size_t t_len);
  void rope(std::size_t layer, std::size_t pos, Eigen::Ref<Eigen::VectorXf> k);
  void attend(std::size_t layer, std::size_t t_len);
  void ffn_block(std::size_t layer);
  void residual_add(int layer, Eigen::VectorXf& branch, const float* bias);
  void head(int pos);

  const FloatModel& model_;
  ModelDesc desc_;
  ActivationObserver* observer_ = nullptr;
  int last_pos_ = 0;
  Eigen::VectorXf x_, xb_, xb2_, q_, hb_, hb2_, logits_;  // (dim) ... (hidden) (vocab)
  Eigen::MatrixXf att_;                                   // (seq_len, n_heads): column h
  std::vector<float> key_cache_, value_cache_;            // (n_layers, seq_len, kv_dim)
};

}  // namespace passim
