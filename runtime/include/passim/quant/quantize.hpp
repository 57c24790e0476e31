// SPDX-License-Identifier: Apache-2.0
/// \file Post-training quantisation of a float model to the integer model (docs/numerics.md).
#pragma once

#include "passim/model/weights.hpp"
#include "passim/quant/calibration.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim {

/// Quantiser choices.
struct QuantOptions {
  BatchNormMode batchnorm = BatchNormMode::kUnfused;  ///< ignored unless the norm is BatchNorm
};

/// Quantises a float model with the given calibration (docs/numerics.md, "Quantisation").
/// Throws std::runtime_error if a scale cannot be represented, or for a model over continuous
/// input features (ModelConfig::input_features > 0) whose calibration saw no features.
[[nodiscard]] QuantModel quantize(const FloatModel& model, const Calibration& calib,
                                  const QuantOptions& opts = {});

}  // namespace passim
