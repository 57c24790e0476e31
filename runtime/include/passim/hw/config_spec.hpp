// SPDX-License-Identifier: Apache-2.0
/// \file Hardware configurations beyond the named ones: any array size R x C, any lane count
/// L and any memory depths within the spec's limits (spec/passim.json "limits"), written
/// `RxC:lL` (for example `4x4:l4`) with optional `:memory=depth` overrides
/// (`8x16:l8:weight=16384:acc=2048`). docs/accelerator.md "Any configuration".
#pragma once

#include <string>
#include <string_view>

#include "passim/hw/spec.hpp"

namespace passim::hw {

/// Depths a `RxC:lL` spec gets for the memories it does not name: `base`'s.
inline constexpr HwConfig kSpecDefaultDepths = kBase;

/// The rules every configuration follows, named or not (the same as tools/spec/check.py's for
/// the named ones): 1 <= R, C <= 64 and R * C >= 2 (a 1 x 1 array cannot keep consecutive
/// tiles' accumulator updates apart, docs/cycle-model.md); 1 <= L <= 64; every depth a power
/// of two in [2, max_<memory>_depth]. Throws std::invalid_argument naming `where`, the field,
/// the expected range and the value found.
void check_config(const HwConfig& cfg, std::string_view where);

/// Parses `RxC:lL[:memory=depth]...` (memory: input, weight, vector, param, acc, prog) into a
/// configuration with `name` empty, memories not named at kSpecDefaultDepths' depths, and
/// checks it (check_config). Throws std::invalid_argument naming the part of `text` that is
/// wrong and what was expected there.
[[nodiscard]] HwConfig parse_config_spec(std::string_view text);

/// `RxC:lL` plus `:memory=depth` for each depth that differs from kSpecDefaultDepths': the
/// canonical spelling of `cfg` (parse_config_spec(config_spec_name(c)) has c's numbers).
[[nodiscard]] std::string config_spec_name(const HwConfig& cfg);

/// True when `a` and `b` have the same sizes and depths (names are not compared).
[[nodiscard]] bool same_hardware(const HwConfig& a, const HwConfig& b) noexcept;

/// The named configuration `a` has the numbers of, or nullptr.
[[nodiscard]] const HwConfig* named_equivalent(const HwConfig& a) noexcept;

/// Keeps a copy of `cfg` named `name` for the life of the process and returns it (its `name`
/// views the stored string). Thread-safe.
const HwConfig& intern_config(const HwConfig& cfg, std::string_view name);

/// A named configuration ("tiny", "small", "base") or a spec (parse_config_spec), interned
/// under the name it was given. Throws std::invalid_argument as parse_config_spec, or naming
/// the named configurations when `text` is neither.
[[nodiscard]] const HwConfig& resolve_config(std::string_view text);

}  // namespace passim::hw
