// SPDX-License-Identifier: Apache-2.0
/// \file The accelerator model of any configuration: the Verilated models built into the
/// simulator for the named configurations, and for any other one (hw/config_spec.hpp) a model
/// Verilated on first use, compiled into a shared object and cached (sim/README.md "Any
/// configuration").
#pragma once

#include <filesystem>
#include <memory>
#include <ostream>
#include <span>
#include <string_view>
#include <utility>

#include "passim/hw/spec.hpp"
#include "passim/sim/accel_model.hpp"

namespace passim::sim {

/// Where models Verilated on first use are kept: $PASSIM_CACHE_DIR, else
/// $XDG_CACHE_HOME/passim, else $HOME/.cache/passim; each model in `rtl/<key>/`, the key a
/// hash of its parameters, the RTL sources and the simulator's interface headers (editing any
/// of them builds a new model). Throws std::runtime_error when none of the three is set.
[[nodiscard]] std::filesystem::path accel_cache_dir();

/// The units a waveform can be limited to (`--trace-scope`): each unit's name and its
/// instance below psm_accel ("softmax" -> "u_vector.u_softmax").
[[nodiscard]] std::span<const std::pair<std::string_view, std::string_view>> trace_scopes();

/// A model of `cfg` (with FST tracing support when `trace`): the simulator's own model when
/// `cfg` has a named configuration's numbers, else the cached model of `cfg`, Verilated and
/// compiled first if there is none (seconds to a minute; every step, its time and the cache
/// directory are written to `log`). With `trace_scope` (a unit of trace_scopes()) the model
/// is always built this way, its tracing limited to that unit's signals at Verilation (a
/// Verilator configuration file with `tracing_off`/`tracing_on -scope`). Concurrent
/// processes building the same model wait for one another (a lock file beside it). Throws
/// std::invalid_argument for an unknown unit, and std::runtime_error naming the
/// configuration, the failed step and its log file when Verilator or the compiler fails, or
/// when the sources this simulator was built from are gone.
[[nodiscard]] std::unique_ptr<AccelModel> make_accel_model(const hw::HwConfig& cfg, bool trace,
                                                           std::ostream& log,
                                                           std::string_view trace_scope = {});

}  // namespace passim::sim
