// SPDX-License-Identifier: Apache-2.0
/// \file The activations a float forward pass reports, for calibration and accuracy tools.
#pragma once

#include <span>

namespace passim {

/// Activations that quantisation needs a scale for; the float forward reports them.
enum class Act : int {
  kResidual,   ///< residual stream: embeddings, branch outputs and sums, (dim)
  kAttnNorm,   ///< attention RMSNorm output, (dim)
  kQ,          ///< queries before and after RoPE, (dim)
  kK,          ///< keys before and after RoPE, (kv_dim)
  kV,          ///< values, (kv_dim)
  kAttnOut,    ///< softmax(q k^T) v, (dim)
  kFfnNorm,    ///< FFN RMSNorm output, (dim)
  kH1,         ///< w1 x (gate; GPT: the up projection before GELU), (hidden)
  kH3,         ///< w3 x (up), (hidden)
  kSilu,       ///< silu(w1 x), (hidden)
  kHidden,     ///< silu(w1 x) * w3 x (GPT: gelu(w1 x + b1)), the w2 input, (hidden)
  kFinalNorm,  ///< final RMSNorm output, (dim)
  kAttnNormIn,   ///< GPT: residual entering the attention norm, (dim)
  kFfnNormIn,    ///< GPT: residual entering the FFN norm, (dim)
  kFinalNormIn,  ///< GPT: residual entering the final norm, (dim)
  kCount
};

/// Receives every activation the float forward computes (used for calibration).
class ActivationObserver {
 public:
  virtual ~ActivationObserver() = default;
  /// `layer` is -1 for tensors outside the layers.
  virtual void observe(Act act, int layer, std::span<const float> values) = 0;
};

}  // namespace passim
