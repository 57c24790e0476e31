// SPDX-License-Identifier: Apache-2.0
/// \file Calibration: running the float reference over text to measure activation ranges.
#pragma once

#include <vector>

#include "passim/model/weights.hpp"
#include "passim/quant/calibration.hpp"

namespace passim {

/// Runs the float model over `documents` (each from an empty cache, BOS first, at most
/// seq_len tokens) and records activation ranges. Deterministic.
[[nodiscard]] Calibration calibrate(const FloatModel& model, const std::vector<std::vector<int>>& docs);

/// The default calibration set when no text is given: the float model's own continuations
/// (greedy from an empty prompt, then three sampled runs at temperature 1, seeds 1..3), each
/// `positions` long. Deterministic for a given model.
[[nodiscard]] std::vector<std::vector<int>> self_generated_calibration(const FloatModel& model,
                                                                       int positions);

}  // namespace passim
