// SPDX-License-Identifier: Apache-2.0
/// \file `passim sweep`: a grid of configurations, sequence lengths, models, Softmax modes,
/// norms and DRAM timings, each point one self-contained `passim run` or `passim encode`
/// command writing its own JSON report; and `passim sweep collect`, those reports as one CSV
/// (docs/reports.md "passim sweep").
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace passim::app {

/// The grid: every list is one axis, and the points are their product.
struct SweepGrid {
  std::vector<std::string> models{"ln-gpt"};     ///< ln-gpt, bn-gpt, encoder
  std::vector<std::string> configs{"small"};     ///< --config values
  std::vector<std::string> seqs{"32"};           ///< tokens in the prompt / the sequence
  std::vector<std::string> softmax{"3pass"};     ///< 3pass, online
  std::vector<std::string> norms{};              ///< layer, batch (character GPT); empty = own
  std::vector<std::string> dram_latency{"50"};   ///< ns
  std::vector<std::string> dram_bandwidth{"1.6"};  ///< bytes per ns
  int decode_steps = 1;                          ///< decoders: positions after the prompt
  std::string backend = "rtl";                   ///< rtl (the simulator) or model
  std::string out_dir;                           ///< each point writes <out_dir>/<index>.json
};

/// One point: its values on every axis, the command that runs it and the report it writes.
struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> axes;
  std::vector<std::string> argv;  ///< argv[0] is this passim executable
  std::string report;
};

/// The points of `grid`, in row-major order (the first axis slowest), with `passim` the
/// executable their commands call. Throws UsageError naming the axis and the value when a
/// value is not valid on it, and when the grid has no points.
[[nodiscard]] std::vector<SweepPoint> sweep_points(const SweepGrid& grid,
                                                   const std::string& passim);

/// `argv` as one line a POSIX shell (and GNU parallel) runs as is.
[[nodiscard]] std::string shell_line(const std::vector<std::string>& argv);

/// Writes one CSV row per report in `dir` (every `*.json`, by name) to `out`: the point's
/// parameters and its cycle figures (docs/reports.md "passim sweep collect"). Throws naming
/// the file and field of a report that is not a valid cycle report, and when `dir` holds no
/// report, before writing anything. `exclude` (the CSV being written, if it is in `dir`) is
/// not read. Returns the number of rows.
std::size_t sweep_collect(const std::string& dir, std::ostream& out,
                          const std::string& exclude = {});

}  // namespace passim::app
