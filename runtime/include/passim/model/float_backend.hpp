// SPDX-License-Identifier: Apache-2.0
/// \file Float32 reference forward pass of a Llama-style model (Eigen), the accuracy baseline.
#pragma once

#include <span>
#include <vector>

#include <Eigen/Core>

#include "passim/model/backend.hpp"
#include "passim/model/activations.hpp"
#include "passim/model/weights.hpp"

namespace passim {

/// Float32 forward pass with llama2.c `run.c` semantics (llama blocks), or of a GPT block
/// (Arch::kGpt: PyTorch semantics: LayerNorm with the biased variance, BatchNorm with the
/// running statistics, exact erf GELU, learned positions, biases). Every dot product accumulates
/// sequentially in float32 in run.c's order, so greedy tokens match run.c exactly; Eigen
/// holds the tensors and does the elementwise work.
class FloatBackend final : public Backend {
 public:
  /// Keeps a reference to `model`, which must outlive the backend.
  explicit FloatBackend(const FloatModel& model);

  [[nodiscard]] std::string_view name() const noexcept override { return "float"; }
  [[nodiscard]] const ModelConfig& config() const noexcept override { return model_.config; }
  /// Throws std::runtime_error when the logits are not finite (float32 overflow).
  void forward(int token, int pos) override;
  [[nodiscard]] std::span<const float> logits() const noexcept override {
    return {logits_.data(), std::size_t(logits_.size())};
  }
  void reset() override {}

  /// Attach an observer (or nullptr); it sees each activation as it is produced.
  void set_observer(ActivationObserver* obs) noexcept { observer_ = obs; }
  /// Softmax probabilities of head `h` at the last forward, (pos + 1).
  [[nodiscard]] std::span<const float> attention_row(int h) const noexcept;

 private:
  void observe(Act act, int layer, Eigen::Ref<const Eigen::VectorXf> v) const;
  void forward_gpt(int token, int pos);

  const FloatModel& model_;
  ActivationObserver* observer_ = nullptr;
  int last_pos_ = 0;
  Eigen::VectorXf x_, xb_, xb2_, q_, hb_, hb2_, logits_;  // (dim) ... (hidden) (vocab)
  Eigen::MatrixXf att_;                                   // (n_heads, seq_len) row-major use
  std::vector<float> key_cache_, value_cache_;            // (n_layers, seq_len, kv_dim)
};

}  // namespace passim
