// SPDX-License-Identifier: Apache-2.0
/// \file The `passim` command-line application (kept as a library so tests can drive it).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "rtl_session.hpp"

namespace passim::app {

/// Runs the CLI with `args` (args[0] is the program name). Generated text goes to `out`,
/// everything else to `err`. Returns the process exit code: 0 on success, 1 on a bad input
/// or runtime error (with a message naming the file/field), 2 on a usage error (an unknown,
/// malformed or missing option, or one that does not apply to the backend or the model).
/// `rtl` provides `--backend rtl`; without it that backend reports that the simulator was
/// not built.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const RtlFactory& rtl = {});

/// The SystemC/Verilator session factory (only in builds with PASSIM_BUILD_SIM).
RtlFactory simulator_factory();

}  // namespace passim::app
