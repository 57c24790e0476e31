// SPDX-License-Identifier: Apache-2.0
// The `passim` command line: the commands (cmd_*.cpp) on one CLI11 application, and how errors
// become exit codes.
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "app.hpp"
#include "commands.hpp"
#include "options.hpp"

namespace passim::app {

namespace {

/// Every option of the chosen command but --prompt takes a non-empty value: `--model ""`
/// would fall back to the built-in model and `--report ""` would write nothing, both
/// silently. Throws UsageError naming the option.
void refuse_empty_values(const CLI::App& app) {
  for (const CLI::App* cmd : app.get_subcommands()) {
    for (const CLI::Option* opt : cmd->get_options()) {
      if (opt->get_type_size() == 0 || opt->count() == 0 || opt->check_name("--prompt")) {
        continue;  // a flag, not given, or the prompt (empty is run.c's default)
      }
      for (const std::string& v : opt->results()) {
        if (v.empty()) {
          throw UsageError(
              fmt::format("{}: expected a value, found an empty string", opt->get_name()));
        }
      }
    }
  }
}

/// Throws UsageError when `word`, where a command belongs, names none of `app`'s commands
/// (CLI11 alone would only say that a command is required).
void check_command_name(CLI::App& app, const std::string& word) {
  if (word == "-h" || word == "--help" || word == "--version") {
    return;
  }
  if (!word.empty() && word.front() == '-') {
    throw UsageError(fmt::format("{}: expected a command, --help or --version first, found an "
                                 "unknown option", word));
  }
  std::vector<std::string> names;
  for (const CLI::App* cmd : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (cmd->get_name() == word) {
      return;
    }
    names.push_back(cmd->get_name());
  }
  throw UsageError(fmt::format("{}: expected a command ({}), found an unknown one", word,
                               fmt::join(names, ", ")));
}

/// The command `args` chooses, run: its exit code (run_cli without the output check).
int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                const RtlFactory& rtl) {
  CLI::App app{"passim: a fixed-point Transformer runtime and the accelerator that runs it",
               "passim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("passim ") + kVersion);
  const std::vector<Command> commands = {add_run_command(app, rtl), add_encode_command(app, rtl),
                                         add_classify_command(app, rtl), add_quantize_command(app),
                                         add_perplexity_command(app),
                                         add_accuracy_command(app), add_report_command(app),
                                         add_sweep_command(app)};
  // CLI11 wants argv reversed. `--opt=` with nothing after the '=' becomes `--opt ""`: CLI11
  // alone would take the next argument as its value.
  std::vector<std::string> rev;
  for (auto it = args.rbegin(); it + 1 != args.rend(); ++it) {
    if (it->size() > 3 && it->starts_with("--") && it->back() == '=') {
      rev.emplace_back();
      rev.push_back(it->substr(0, it->size() - 1));
    } else {
      rev.push_back(*it);
    }
  }
  try {
    if (args.size() > 1) {
      check_command_name(app, args[1]);
    }
    app.parse(rev);
  } catch (const CLI::ParseError& e) {
    std::ostringstream o, e2;
    const int code = app.exit(e, o, e2);
    out << o.str();
    // Usage errors read like every other error; --help and --version are not errors.
    err << (code == 0 || e2.str().empty() ? "" : "passim: error: ") << e2.str();
    return code == 0 ? 0 : 2;
  } catch (const UsageError& e) {
    fmt::print(err, "passim: error: {}\nRun with --help for more information.\n", e.what());
    return 2;
  }
  try {
    refuse_empty_values(app);
    for (const Command& c : commands) {
      if (c.chosen()) {
        return c.run(out, err);
      }
    }
  } catch (const UsageError& e) {
    fmt::print(err, "passim: error: {}\nRun with --help for more information.\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(err, "passim: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(err, "passim: error: {}\n", e.what());
    return 1;
  }
  return 2;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const RtlFactory& rtl) {
  const int code = run_command(args, out, err, rtl);
  // A result that never reached standard output (a full disk, a closed pipe) is a failure,
  // not a success with nothing shown.
  out.flush();
  if (!out) {
    fmt::print(err, "passim: error: standard output: expected the output written, found a "
                    "failed write (is the disk full, or the output closed?)\n");
    return code == 0 ? 1 : code;
  }
  return code;
}

}  // namespace passim::app
