// SPDX-License-Identifier: Apache-2.0
/// \file The golden int8 matmul and the requantisation of its accumulators (the matmul unit).
/// A kernel here throws std::invalid_argument naming itself and the operand when an operand
/// has the wrong size (passim/kernels/require.hpp), in every build type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "passim/fixed_point.hpp"

namespace passim::kernels {

/// out = a * w^T with int32 accumulation that wraps on overflow (two's complement), like the
/// PE accumulators. RTL twin: rtl/matmul/psm_systolic_array.sv.
///   a:   (m, k) row-major int8 activations
///   w:   (n, k) row-major int8 weights, i.e. (out_features, in_features) as stored by PyTorch
///   out: (m, n) row-major int32
void matmul_i8(std::span<const std::int8_t> a, std::span<const std::int8_t> w,
               std::span<std::int32_t> out, std::size_t m, std::size_t k, std::size_t n);

/// The product of two operands split into `digits` base-256 int8 digit groups (MATMUL_ACT,
/// docs/isa.md and docs/numerics.md): out = sum over g of 256^(digits-1-g) * a_g * w_g^T,
/// accumulated in int32 as out = 256 * out + a_g * w_g^T, group after group, wrapping on
/// overflow like the PE accumulators. With digits = 1 it is matmul_i8. It is exact (equal to
/// the product of the recombined operands) when that product fits int32: e.g. 12-bit queries
/// and keys split as x = 256 * hi + lo with lo the signed low byte.
/// RTL twin: rtl/matmul/psm_matmul.sv (digit groups).
///   a:   (m, digits * k) row-major, group g of row r at a[r * digits * k + g * k]
///   w:   (n, digits * k) row-major, group g of row c at w[c * digits * k + g * k]
///   out: (m, n) row-major int32
/// Throws std::invalid_argument when digits is not 1..3 or an operand is too small.
void matmul_digits_i8(std::span<const std::int8_t> a, std::span<const std::int8_t> w,
                      std::span<std::int32_t> out, std::size_t m, std::size_t k, std::size_t n,
                      std::size_t digits);

/// Per-column requantisation of an accumulator tile: out[r, c] = requantize(acc[r, c], rq[c]).
/// One rounding step (round half up), then saturation to the output type.
/// RTL twin: rtl/common/psm_requant.sv on the accumulator read path.
///   acc: (m, n) row-major int32   rq: (n)   out: (m, n) row-major
void requantize_i8(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                   std::span<std::int8_t> out);
void requantize_i16(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                    std::span<std::int16_t> out);
void requantize_i32(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                    std::span<std::int32_t> out);
/// As above, saturating to `bits` in [2, 16] (e.g. the 12-bit queries and keys).
void requantize_bits(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                     std::span<std::int16_t> out, int bits);

}  // namespace passim::kernels
