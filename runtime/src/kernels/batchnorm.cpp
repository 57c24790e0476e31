// SPDX-License-Identifier: Apache-2.0
// Golden inference BatchNorm: one pass, the normalising pass of LayerNorm with a step fixed at
// training time. RTL twin: rtl/batchnorm/psm_batchnorm.sv (psm_layernorm in BATCHNORM mode).
#include "passim/kernels/batchnorm.hpp"

#include <cassert>

namespace passim::kernels {

void batchnorm_i8(std::span<const std::int16_t> x, const BatchNormParams& p,
                  std::span<std::int8_t> out) {
  assert(p.gain.size() == x.size() && p.bias.size() == x.size() && out.size() >= x.size() &&
         p.rq.bias == 0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int32_t xg = std::int32_t{x[i]} * std::int32_t{p.gain[i]};  // |xg| <= 2^30
    const std::int64_t y = std::int64_t{requantize(xg, p.rq, 32)} + p.bias[i];
    out[i] = static_cast<std::int8_t>(saturate(y, 8));
  }
}

}  // namespace passim::kernels
