// SPDX-License-Identifier: Apache-2.0
/// \file The accelerator model of any configuration: the Verilated models built into the
/// simulator for the named configurations, and for any other one (hw/config_spec.hpp) a model
/// Verilated on first use, compiled into a shared object and cached (sim/README.md "Any
/// configuration").
#pragma once

#include <filesystem>
#include <memory>
#include <ostream>

#include "passim/hw/spec.hpp"
#include "passim/sim/accel_model.hpp"

namespace passim::sim {

/// Where models Verilated on first use are kept: $PASSIM_CACHE_DIR, else
/// $XDG_CACHE_HOME/passim, else $HOME/.cache/passim; each model in `rtl/<key>/`, the key a
/// hash of its parameters, the RTL sources and the simulator's interface headers (editing any
/// of them builds a new model). Throws std::runtime_error when none of the three is set.
[[nodiscard]] std::filesystem::path accel_cache_dir();

/// A model of `cfg` (with FST tracing support when `trace`): the simulator's own model when
/// `cfg` has a named configuration's numbers, else the cached model of `cfg`, Verilated and
/// compiled first if there is none (minutes; every step, its time and the cache directory
/// are written to `log`). Concurrent processes building the same model wait for one another
/// (a lock file beside it). Throws std::runtime_error naming the configuration, the failed
/// step and its log file when Verilator or the compiler fails, or when the sources this
/// simulator was built from are gone.
[[nodiscard]] std::unique_ptr<AccelModel> make_accel_model(const hw::HwConfig& cfg, bool trace,
                                                           std::ostream& log);

}  // namespace passim::sim
