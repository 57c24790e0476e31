// SPDX-License-Identifier: Apache-2.0
// Golden LayerNorm: three passes (mean; variance; normalise).
// RTL twin: rtl/layernorm/psm_layernorm.sv.
#include "passim/kernels/layernorm.hpp"

#include "passim/kernels/require.hpp"

namespace passim::kernels {

namespace {

/// round(sum / n) with ties toward +infinity: floor((2 * sum + n) / (2 * n)),
/// as an integer division that floors for negative numerators too.
std::int32_t rounded_mean(std::int64_t sum, std::int64_t n) {
  const std::int64_t num = 2 * sum + n;
  const std::int64_t den = 2 * n;
  std::int64_t q = num / den;  // truncates toward zero
  if (num % den != 0 && num < 0) {
    --q;
  }
  return static_cast<std::int32_t>(q);  // within [min(x), max(x)], so int16
}

}  // namespace

void layernorm_i8(std::span<const std::int16_t> x, const LayerNormParams& p,
                  std::span<std::int8_t> out) {
  require_at_least("layernorm_i8", "x", 1, x.size());
  require_equal("layernorm_i8", "gain", x.size(), p.gain.size());
  require_equal("layernorm_i8", "bias", x.size(), p.bias.size());
  require_at_least("layernorm_i8", "out", x.size(), out.size());
  // Pass 1: mean. |sum| < 2^15 * n, exact in int64.
  std::int64_t sum = 0;
  for (const std::int16_t v : x) {
    sum += v;
  }
  const std::int32_t m = rounded_mean(sum, static_cast<std::int64_t>(x.size()));
  // Pass 2: sum of squared deviations. |d| <= 65535, so d^2 < 2^32 and any row
  // shorter than 2^31 sums exactly in uint64.
  std::uint64_t ssd = p.eps;
  for (const std::int16_t v : x) {
    const std::int64_t d = std::int64_t{v} - m;
    ssd += static_cast<std::uint64_t>(d * d);
  }
  if (ssd == 0) {
    ssd = 1;  // constant row with eps = 0: every d is 0, so the output is the bias
  }
  const Requant r =
      checked_rsqrt("layernorm_i8", "sum of squared deviations + eps", ssd, p.gain_frac_bits);
  // Pass 3: normalise. |d * gain| <= 65535 * 32768 < 2^31 fits int32; d^2 <=
  // ssd bounds the rounded value by 32768 (1 + 2^-28), and the integer bias
  // adds no second rounding.
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int32_t d = std::int32_t{x[i]} - m;
    const std::int32_t dg = d * std::int32_t{p.gain[i]};
    const std::int64_t y = std::int64_t{requantize(dg, r, 32)} + p.bias[i];
    out[i] = static_cast<std::int8_t>(saturate_result(y, 8));
  }
}

}  // namespace passim::kernels
