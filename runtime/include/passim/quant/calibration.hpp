// SPDX-License-Identifier: Apache-2.0
/// \file The activation ranges that calibration measures and quantisation turns into scales.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "passim/model/activations.hpp"

namespace passim {

/// Activation ranges seen during calibration: max |x| per activation kind, layer and channel.
struct Calibration {
  /// absmax[act][layer + 1][channel]; layer slot 0 holds tensors outside the layers (-1).
  std::array<std::vector<std::vector<float>>, std::size_t(Act::kCount)> absmax;
  long positions = 0;  ///< positions run
  /// Models over continuous features: max |feature| seen, per feature (input_features).
  std::vector<float> input_absmax;
  std::string description;

  /// Max over the channels of one layer's tensor.
  [[nodiscard]] float layer_max(Act act, int layer) const;
  /// Max over channels [first, first + count) of one layer's tensor (e.g. one head).
  [[nodiscard]] float range_max(Act act, int layer, std::size_t first, std::size_t count) const;
  /// Max over all layers and the outside slot (used for the shared residual scale).
  [[nodiscard]] float global_max(Act act) const;
};

}  // namespace passim
