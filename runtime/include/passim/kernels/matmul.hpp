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
