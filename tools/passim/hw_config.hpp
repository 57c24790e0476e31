// SPDX-License-Identifier: Apache-2.0
/// \file `--config`: a named configuration, a spec `RxC:lL[:memory=depth]...`
/// (hw/config_spec.hpp) or a JSON file with a configuration's fields (docs/accelerator.md
/// "Any configuration").
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "passim/hw/spec.hpp"

namespace passim::app {

/// The configuration `text` names: "tiny", "small", "base", a spec such as "4x4:l4", or a
/// path ending in ".json" to an object with `array_rows`, `array_cols`, `lanes`, optional
/// `depths` {input, weight, vector, param, acc, prog} (the defaults of a spec) and an
/// optional `name`. The result lives as long as the process. Throws UsageError naming the
/// file, the field, the expected and the found value.
[[nodiscard]] const hw::HwConfig& config_arg(const std::string& text);

/// CLI11 check of `--config` with config_arg (its message on failure, exit 2).
[[nodiscard]] CLI::Validator config_validator();

}  // namespace passim::app
