// SPDX-License-Identifier: Apache-2.0
/// \file `passim report show` and `passim report compare`: the tables of a JSON report's
/// "cycles" section (docs/reports.md), read back from the file, and the deltas between two.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace passim::app {

/// A table: named columns and rows of numbers (null: no value, printed "-").
struct Table {
  std::string name;   ///< classes, phases, layers, opcodes, units, dma, throughput
  std::string title;  ///< one line above the text form
  std::vector<std::string> columns;  ///< the first names the row key
  struct Row {
    std::string key;
    std::vector<nlohmann::json> cells;  ///< one per column after the first
  };
  std::vector<Row> rows;
};

/// The table names, in the order show prints them.
[[nodiscard]] const std::vector<std::string>& report_table_names();

/// A report read from `path` with a "cycles" section, its fields checked
/// (check_cycle_report). Throws std::runtime_error naming the file and what was expected: not
/// JSON (or nested deeper than 64 levels), not a Passim report (no format_version 1), a
/// report without cycles (a float or cpu run), or a field of the wrong type or range.
[[nodiscard]] nlohmann::json read_cycle_report(const std::string& path);

/// The tables of report `r` (read_cycle_report), those named in `only` (all when empty).
[[nodiscard]] std::vector<Table> report_tables(const nlohmann::json& r,
                                               const std::vector<std::string>& only);

/// Throws std::runtime_error naming `file` and the JSON path when a field that `passim
/// report` reads is missing or of the wrong type or range (docs/reports.md).
void check_cycle_report(const nlohmann::json& r, const std::string& file);

/// The tables `passim report compare` prints: classes, phases, layers, opcodes.
[[nodiscard]] const std::vector<std::string>& compare_table_names();

/// Prints tables aligned, or as CSV (a header line, then rows; with several tables, each
/// preceded by "# <name>" and separated by a blank line).
void print_tables(const std::vector<Table>& tables, bool csv, std::ostream& out);

/// Why two reports cannot be compared (different models, tools, cycle sources or workloads:
/// the prompt and sampling, the encoder's sequence, the clips; or a partial run), or nullopt
/// when they can.
[[nodiscard]] std::optional<std::string> incomparable(const nlohmann::json& a,
                                                      const nlohmann::json& b);

/// The delta tables of B against A: per class, per phase, per layer and per opcode, each row
/// A's cycles, B's, B - A and the change in %, restricted to `only` when not empty.
[[nodiscard]] std::vector<Table> compare_tables(const nlohmann::json& a, const nlohmann::json& b,
                                                const std::vector<std::string>& only);

/// The totals and classes (cycles.total, by_phase.<p>.total, by_class.<c>.cycles) that grew
/// by more than `threshold_percent` from A to B, one line each ("total: 1000 -> 1060
/// (+6.0 %)"). Growth from 0 counts as a regression.
[[nodiscard]] std::vector<std::string> regressions(const nlohmann::json& a,
                                                   const nlohmann::json& b,
                                                   double threshold_percent);

}  // namespace passim::app
