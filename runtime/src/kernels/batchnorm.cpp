// SPDX-License-Identifier: Apache-2.0
// Golden inference BatchNorm: one pass, the normalising pass of LayerNorm with a step fixed at
// training time. RTL twin: rtl/batchnorm/psm_batchnorm.sv (psm_layernorm in BATCHNORM mode).
#include "passim/kernels/batchnorm.hpp"

#include "passim/kernels/require.hpp"

namespace passim::kernels {

void batchnorm_i8(std::span<const std::int16_t> x, const BatchNormParams& p,
                  std::span<std::int8_t> out) {
  require_equal("batchnorm_i8", "gain", x.size(), p.gain.size());
  require_equal("batchnorm_i8", "bias", x.size(), p.bias.size());
  require_at_least("batchnorm_i8", "out", x.size(), out.size());
  require(p.rq.bias == 0, "batchnorm_i8", "rq.bias: expected 0 (a per-tensor step has no bias)");
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int32_t xg = std::int32_t{x[i]} * std::int32_t{p.gain[i]};  // |xg| <= 2^30
    const std::int64_t y = std::int64_t{requantize(xg, p.rq, 32)} + p.bias[i];
    out[i] = static_cast<std::int8_t>(saturate_result(y, 8));
  }
}

}  // namespace passim::kernels
