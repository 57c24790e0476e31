// SPDX-License-Identifier: Apache-2.0
// Golden elementwise ops of the eltwise unit: residual add, product, embedding.
// RTL twin: rtl/eltwise/psm_eltwise.sv (ADD, MUL, EMBED).
#include "passim/kernels/eltwise.hpp"

#include "passim/kernels/require.hpp"

namespace passim::kernels {

void add_i16(std::span<const std::int16_t> a, std::span<const std::int16_t> b,
             std::span<std::int16_t> out) {
  require_equal("add_i16", "b", a.size(), b.size());
  require_at_least("add_i16", "out", a.size(), out.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    out[i] =
        static_cast<std::int16_t>(saturate_result(std::int32_t{a[i]} + std::int32_t{b[i]}, 16));
  }
}

void mul_i8(std::span<const std::int16_t> a, std::span<const std::int16_t> b,
            std::span<const Requant> rq, std::span<std::int8_t> out) {
  require_equal("mul_i8", "b", a.size(), b.size());
  require_equal("mul_i8", "rq", a.size(), rq.size());
  require_at_least("mul_i8", "out", a.size(), out.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    out[i] = static_cast<std::int8_t>(
        requantize_result(std::int32_t{a[i]} * std::int32_t{b[i]}, rq[i], 8));
  }
}

void embed_i16(std::span<const std::int8_t> row, Requant rq, std::span<std::int16_t> out) {
  require_at_least("embed_i16", "out", row.size(), out.size());
  for (std::size_t i = 0; i < row.size(); ++i) {
    out[i] = static_cast<std::int16_t>(requantize_result(row[i], rq, 16));
  }
}

}  // namespace passim::kernels
