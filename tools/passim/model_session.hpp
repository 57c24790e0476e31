// SPDX-License-Identifier: Apache-2.0
/// \file `--backend model`: the compiled model on ModelDevice, the analytical cycle model
/// (runtime/include/passim/device/model_device.hpp, docs/cycle-model.md), behind the same
/// session interface as the simulator, so that every table and report reads the same.
#pragma once

#include "rtl_session.hpp"

namespace passim::app {

/// Makes sessions that run a compiled model on ModelDevice with the options' clock and DRAM
/// timing; their cycles are the closed forms' (the report's `cycles.source` is "model").
[[nodiscard]] RtlFactory model_factory();

}  // namespace passim::app
