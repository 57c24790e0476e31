// SPDX-License-Identifier: Apache-2.0
/// \file The `passim` commands, one file each (cmd_<name>.cpp): each registers its options on
/// the CLI11 application and returns what runs it once the command line is parsed.
#pragma once

#include <functional>
#include <ostream>

#include <CLI/CLI.hpp>

#include "rtl_session.hpp"

namespace passim::app {

/// A registered command. `chosen` tells whether the command line named it; `run` runs it,
/// printing generated text on `out` and everything else on `err`, and returns the exit code.
/// Both may be called only after the application parsed the command line.
struct Command {
  std::function<bool()> chosen;
  std::function<int(std::ostream& out, std::ostream& err)> run;
};

/// `passim run`: generate text on the float, cpu or rtl backend (`rtl` makes simulator
/// sessions; without it `--backend rtl` reports that the simulator was not built).
[[nodiscard]] Command add_run_command(CLI::App& app, const RtlFactory& rtl);
/// `passim encode`: one sequence through a random post-norm encoder, in one pass.
[[nodiscard]] Command add_encode_command(CLI::App& app, const RtlFactory& rtl);
/// `passim classify`: keyword spotting with a TFLite keyword model on WAV clips.
[[nodiscard]] Command add_classify_command(CLI::App& app, const RtlFactory& rtl);
/// `passim quantize`: write the integer model (.psm).
[[nodiscard]] Command add_quantize_command(CLI::App& app);
/// `passim perplexity`: perplexity of a text.
[[nodiscard]] Command add_perplexity_command(CLI::App& app);
/// `passim accuracy`: the integer model against float, layer by layer.
[[nodiscard]] Command add_accuracy_command(CLI::App& app);
/// `passim report show|compare`: a JSON report's cycle tables, and two reports' deltas.
/// compare exits 0, 1 when a total or class regressed beyond --threshold, 2 on any error.
[[nodiscard]] Command add_report_command(CLI::App& app);
/// `passim sweep [collect]`: a grid of rtl runs, one report each, and those reports as a CSV.
[[nodiscard]] Command add_sweep_command(CLI::App& app);

}  // namespace passim::app
