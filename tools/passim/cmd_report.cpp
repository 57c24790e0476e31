// SPDX-License-Identifier: Apache-2.0
// `passim report show` and `passim report compare`: a report's tables, and two reports'
// deltas with a regression threshold.
#include <cmath>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "options.hpp"
#include "report_tables.hpp"

namespace passim::app {
namespace {

struct ReportOptions {
  std::vector<std::string> files;   ///< show: one report; compare: A and B
  std::vector<std::string> tables;  ///< empty: all
  std::string threshold;            ///< compare: "5%" or "5"
  bool threshold_given = false;     ///< --threshold was on the command line
  bool csv = false;
  bool force = false;
};

/// `--threshold`: a percentage, "5%" or "5", 0 to 10000. Throws UsageError otherwise.
double parse_threshold(const std::string& s) {
  std::string digits = s;
  if (!digits.empty() && digits.back() == '%') {
    digits.pop_back();
  }
  if (!real_in(0, 10000)(digits).empty()) {
    throw UsageError(fmt::format("--threshold {}: expected a percentage from 0 to 10000 "
                                 "(\"5%\" or \"5\")", s));
  }
  return std::stod(digits);
}

/// A notice on `err` when report `r` is of a run the watchdog stopped.
void notice_partial(const nlohmann::json& r, const std::string& path, std::ostream& err) {
  if (r.value("partial", false)) {
    const auto by = r.find("stopped_by");
    fmt::print(err, "notice: {} is a partial run ({}): its cycles cover the run up to the "
               "stop\n", path, by != r.end() && by->is_string() ? by->get<std::string>()
                                                                : "stopped");
  }
}

int show(const ReportOptions& o, std::ostream& out, std::ostream& err) {
  const nlohmann::json r = read_cycle_report(o.files.at(0));
  notice_partial(r, o.files[0], err);
  print_tables(report_tables(r, o.tables), o.csv, out);
  return 0;
}

/// 0: no regression (or no --threshold), 1: a total or class grew beyond the threshold.
int compare(const ReportOptions& o, std::ostream& out, std::ostream& err) {
  const double threshold = o.threshold_given ? parse_threshold(o.threshold) : -1;
  // Read and checked: every field the tables and the threshold use is there and in range.
  const nlohmann::json a = read_cycle_report(o.files.at(0)), b = read_cycle_report(o.files.at(1));
  if (const auto why = incomparable(a, b)) {
    if (!o.force) {
      throw UsageError(fmt::format("{} and {} cannot be compared: {}; --force compares them "
                                   "anyway", o.files[0], o.files[1], *why));
    }
    fmt::print(err, "notice: comparing anyway (--force): {}\n", *why);
  }
  for (std::size_t i = 0; i < 2; ++i) {
    const nlohmann::json& r = i == 0 ? a : b;
    fmt::print(err, "{}: {} {} on {}{}\n", i == 0 ? "A" : "B", o.files[i], r.value("tool", "?"),
               r.value("backend", "?"), r.value("partial", false) ? " (partial: stopped)" : "");
  }
  print_tables(compare_tables(a, b, o.tables), o.csv, out);
  if (threshold < 0) {
    return 0;
  }
  const std::vector<std::string> worse = regressions(a, b, threshold);
  if (worse.empty()) {
    fmt::print(err, "no total or class grew by more than {} %\n", threshold);
    return 0;
  }
  fmt::print(err, "regression: {} grew by more than {} %:\n  {}\n", worse.size(), threshold,
             fmt::join(worse, "\n  "));
  return 1;
}

void add_table_options(CLI::App* cmd, ReportOptions& o, const std::vector<std::string>& names) {
  cmd->add_option("--table", o.tables, fmt::format("only these tables: {}", fmt::join(names, ", ")))
      ->check(CLI::IsMember(names));
  cmd->add_flag("--csv", o.csv, "print CSV (one table: header and rows; several: each after a "
                                "'# <table>' line)");
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand("report", "read JSON cycle reports: show one, compare two");
  cmd->require_subcommand(1);
  CLI::App* show_cmd = cmd->add_subcommand("show", "print a report's cycle tables");
  show_cmd->add_option("report", o->files, "a report of --backend rtl (passim ... --report)")
      ->required()->expected(1);
  add_table_options(show_cmd, *o, report_table_names());
  CLI::App* cmp = cmd->add_subcommand(
      "compare", "B against A per class, phase, layer and opcode; exit 1 when a total or class "
                 "grows beyond --threshold");
  cmp->add_option("reports", o->files, "A.json B.json")->required()->expected(2);
  cmp->add_option("--threshold", o->threshold,
                  "exit 1 when a total (whole run or phase) or a class's cycles grow by more "
                  "than this percentage, e.g. 5%");
  cmp->add_flag("--force", o->force, "compare reports of different models, measurements or "
                                     "workloads, or a partial run");
  add_table_options(cmp, *o, compare_table_names());
  return {[cmd] { return bool(*cmd); },
          [o, show_cmd, cmp](std::ostream& out, std::ostream& err) {
            if (*show_cmd) {
              return show(*o, out, err);
            }
            o->threshold_given = cmp->count("--threshold") > 0;
            try {
              return compare(*o, out, err);
            } catch (const UsageError&) {
              throw;
            } catch (const std::exception& e) {
              // 1 means a regression here: any other failure is 2.
              fmt::print(err, "passim: error: {}\n", e.what());
              return 2;
            }
          }};
}

}  // namespace passim::app
