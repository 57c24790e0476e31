// SPDX-License-Identifier: Apache-2.0
// Golden RMSNorm: two passes (sum of squares; normalise). RTL twin: rtl/rmsnorm/psm_rmsnorm.sv.
#include "passim/kernels/rmsnorm.hpp"

#include "passim/kernels/require.hpp"

namespace passim::kernels {

void rmsnorm_i8(std::span<const std::int16_t> x, const RmsNormParams& p,
                std::span<std::int8_t> out) {
  require_at_least("rmsnorm_i8", "x", 1, x.size());
  require_equal("rmsnorm_i8", "gain", x.size(), p.gain.size());
  require_at_least("rmsnorm_i8", "out", x.size(), out.size());
  // Pass 1: sum of squares. Each square < 2^30, so int64 holds any row shorter than 2^33.
  std::uint64_t ss = p.eps;
  for (const std::int16_t v : x) {
    ss += static_cast<std::uint64_t>(std::int32_t{v} * std::int32_t{v});
  }
  if (ss == 0) {
    ss = 1;  // an all-zero row with eps = 0: output is 0 whatever the scale
  }
  const Requant r = checked_rsqrt("rmsnorm_i8", "sum of squares + eps", ss, p.gain_frac_bits);
  // Pass 2: normalise. x * gain < 2^30 fits int32; one rounding inside requantize().
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int32_t xg = std::int32_t{x[i]} * std::int32_t{p.gain[i]};
    out[i] = static_cast<std::int8_t>(requantize_result(xg, r, 8));
  }
}

}  // namespace passim::kernels
