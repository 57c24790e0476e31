// SPDX-License-Identifier: Apache-2.0
// Activation ranges: the per-layer and per-channel maxima that quantisation reads.
#include "passim/quant/calibration.hpp"

#include <algorithm>

namespace passim {

namespace {
constexpr float kMinRange = 1e-6f;  // a tensor that never left zero still gets a valid scale
}  // namespace

float Calibration::range_max(Act act, int layer, std::size_t first, std::size_t count) const {
  const auto& ch = absmax[std::size_t(act)].at(std::size_t(layer + 1));
  const std::size_t end = std::min(ch.size(), first + count);
  float m = kMinRange;
  for (std::size_t i = std::min(first, end); i < end; ++i) {
    m = std::max(m, ch[i]);
  }
  return m;
}

float Calibration::layer_max(Act act, int layer) const {
  const auto& ch = absmax[std::size_t(act)].at(std::size_t(layer + 1));
  return range_max(act, layer, 0, ch.size());
}

float Calibration::global_max(Act act) const {
  float m = kMinRange;
  for (std::size_t l = 0; l < absmax[std::size_t(act)].size(); ++l) {
    m = std::max(m, layer_max(act, int(l) - 1));
  }
  return m;
}

}  // namespace passim
