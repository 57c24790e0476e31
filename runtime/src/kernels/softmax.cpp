// SPDX-License-Identifier: Apache-2.0
// Golden 3-pass integer Softmax (I-BERT Alg. 2 exponential). RTL twin: rtl/vector/psm_softmax.sv.
#include <algorithm>
#include <cassert>

#include "passim/kernels.hpp"

namespace passim::kernels {

void softmax_i16(std::span<const std::int32_t> x, std::span<std::uint32_t> e_scratch,
                 std::span<std::int16_t> out) {
  assert(!x.empty() && e_scratch.size() >= x.size() && out.size() >= x.size());
  const std::size_t n = x.size();
  // Pass 1: row maximum.
  std::int32_t m = x[0];
  for (std::size_t i = 1; i < n; ++i) {
    m = std::max(m, x[i]);
  }
  // Pass 2: integer exponentials of (x - m) <= 0 and their sum. The difference is taken in
  // int64 and clamped, so any int32 row works; exp of anything below -2^20 LSB is 0.
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t d = std::max<std::int64_t>(std::int64_t{x[i]} - m, -(1 << 20));
    e_scratch[i] = iexp_q10(static_cast<std::int32_t>(d));
    sum += e_scratch[i];
  }
  // Pass 3: normalise with one reciprocal per row. sum >= kExpOne > 2^21 (the max contributes
  // exp(0)), so recip < 2^15 * 2^32 / 2^21 = 2^26 and e * recip < 2^22 * 2^26 = 2^48.
  const std::uint64_t recip = (std::uint64_t{kProbOne} << kSoftmaxRecipBits) / sum;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t prod = e_scratch[i] * recip;
    const std::uint64_t q = (prod + (std::uint64_t{1} << (kSoftmaxRecipBits - 1))) >>
                            kSoftmaxRecipBits;
    out[i] = static_cast<std::int16_t>(std::min<std::uint64_t>(q, kProbOne));
  }
}

}  // namespace passim::kernels
