// SPDX-License-Identifier: Apache-2.0
/// \file The golden rotary position embedding.
/// A kernel here throws std::invalid_argument naming itself and the operand when an operand
/// has the wrong size (passim/kernels/require.hpp), in every build type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "passim/fixed_point.hpp"

namespace passim::kernels {

/// Rotary position embedding (Su et al. 2021, RoFormer Eq. 34) in place on query/key vectors
/// of `kQkBits`-bit values held in int16: for each head and pair j,
/// (v0, v1) -> (v0*c - v1*s, v0*s + v1*c) with c, s in Q1.14, then round_shift by 14 and
/// saturate to kQkBits. The scale is unchanged.  RTL twin: rtl/rope/psm_rope.sv.
///   vec: (n_heads * head_size)   cos, sin: (head_size / 2) Q1.14 for this position
void rope_i16(std::span<std::int16_t> vec, std::size_t head_size,
              std::span<const std::int16_t> cos, std::span<const std::int16_t> sin);

}  // namespace passim::kernels
