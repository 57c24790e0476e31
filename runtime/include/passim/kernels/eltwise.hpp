// SPDX-License-Identifier: Apache-2.0
/// \file The golden elementwise ops of the eltwise unit: residual add, product, embedding.
/// A kernel here throws std::invalid_argument naming itself and the operand when an operand
/// has the wrong size (passim/kernels/require.hpp), in every build type.
#pragma once

#include <cstdint>
#include <span>

#include "passim/fixed_point.hpp"

namespace passim::kernels {

/// Residual add with int16 saturation; a and b share one scale.
/// RTL twin: rtl/eltwise/psm_eltwise.sv (ADD).
void add_i16(std::span<const std::int16_t> a, std::span<const std::int16_t> b,
             std::span<std::int16_t> out);

/// Elementwise product of int16 vectors to int8: out[i] = requantize(a[i] * b[i], rq[i], 8)
/// (|a * b| <= 2^30 fits int32), one requantisation step per channel.
/// RTL twin: rtl/eltwise/psm_eltwise.sv (MUL).
void mul_i8(std::span<const std::int16_t> a, std::span<const std::int16_t> b,
            std::span<const Requant> rq, std::span<std::int8_t> out);

/// Embedding row into the int16 residual stream: out = requantize(row, rq, 16).
/// RTL twin: rtl/eltwise/psm_eltwise.sv (EMBED).
void embed_i16(std::span<const std::int8_t> row, Requant rq, std::span<std::int16_t> out);

}  // namespace passim::kernels
