// SPDX-License-Identifier: Apache-2.0
// `passim sweep` and `passim sweep collect` (sweep.hpp): the grid's points as commands,
// listed (--print-commands, for GNU parallel or a job array) or run here, and their reports
// gathered into one CSV.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <memory>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "options.hpp"
#include "sweep.hpp"

extern char** environ;

namespace passim::app {

namespace {

struct SweepOptions {
  SweepGrid grid;
  std::string grid_file;
  bool print_commands = false;
  int jobs = 1;
  std::string collect_dir;
  std::string collect_out;
};

/// The axes of a --grid JSON file into `g` (each an array of strings or numbers).
void read_grid_file(const std::string& path, SweepGrid& g) {
  if (std::filesystem::is_directory(path)) {
    throw UsageError(fmt::format("sweep --grid {}: expected a JSON file, found a directory", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(fmt::format("sweep --grid {}: cannot open the file", path));
  }
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const nlohmann::json j = nlohmann::json::parse(bytes, nullptr, false);
  if (!j.is_object()) {
    throw UsageError(fmt::format("{}: expected a JSON object of axes, found {}", path,
                                 j.is_discarded() ? "text that does not parse" : j.type_name()));
  }
  const std::map<std::string, std::vector<std::string>*> axes{
      {"model", &g.models},       {"config", &g.configs},
      {"seq", &g.seqs},           {"softmax", &g.softmax},
      {"norm", &g.norms},         {"dram_latency", &g.dram_latency},
      {"dram_bandwidth", &g.dram_bandwidth}};
  for (const auto& [key, value] : j.items()) {
    const auto it = axes.find(key);
    if (it == axes.end() || !value.is_array()) {
      throw UsageError(fmt::format("{}: {}: expected an array under one of model, config, seq, "
                                   "softmax, norm, dram_latency, dram_bandwidth", path, key));
    }
    it->second->clear();
    for (const auto& v : value) {
      if (!v.is_string() && !v.is_number()) {
        throw UsageError(fmt::format("{}: {}: expected strings or numbers, found {}", path, key,
                                     v.dump()));
      }
      it->second->push_back(v.is_string() ? v.get<std::string>() : v.dump());
    }
    if (key == "norm" && value.empty()) {
      throw UsageError(fmt::format("sweep --grid {}: the grid has no points (norm is empty)",
                                   path));
    }
  }
}

/// Starts `argv` with its output to `log`; the child's pid.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    throw std::runtime_error(fmt::format("sweep: cannot start {}", argv[0]));
  }
  return pid;
}

/// Runs the points, `jobs` at a time, each with its log beside its report; the failures.
int run_points(const std::vector<SweepPoint>& points, int jobs, std::ostream& err) {
  using Clock = std::chrono::steady_clock;
  std::map<pid_t, std::pair<std::size_t, Clock::time_point>> running;
  std::size_t next = 0, done = 0, failed = 0;
  while (done < points.size()) {
    while (next < points.size() && running.size() < std::size_t(jobs)) {
      const std::string log = points[next].report.substr(0, points[next].report.size() - 5) +
                              ".log";
      running[spawn(points[next].argv, log)] = {next, Clock::now()};
      ++next;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0 || running.count(pid) == 0) {
      continue;
    }
    const auto [index, t0] = running[pid];
    running.erase(pid);
    ++done;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    failed += ok ? 0 : 1;
    fmt::print(err, "sweep: [{}/{}] {}: {} ({:.1f} s){}\n", done, points.size(),
               points[index].report, ok ? "done" : "FAILED",
               std::chrono::duration<double>(Clock::now() - t0).count(),
               ok ? "" : fmt::format("; its output is in {}.log",
                                     points[index].report.substr(0, points[index].report.size() -
                                                                        5)));
  }
  return failed == 0 ? 0 : 1;
}

/// --out: a new directory, or one without reports, so that `sweep collect` gathers only this
/// grid's points. Throws UsageError naming --out.
void check_out_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw UsageError(fmt::format("sweep --out {}: expected a directory, found a file", dir));
  }
  if (fs::is_directory(dir, ec)) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".json") {
        throw UsageError(fmt::format("sweep --out {}: expected a new or empty directory, found "
                                     "reports of an earlier sweep ({}); remove them or choose "
                                     "another --out", dir, e.path().filename().string()));
      }
    }
  }
  fs::create_directories(dir, ec);
  if (ec) {
    throw UsageError(fmt::format("sweep --out {}: cannot create the directory: {}", dir,
                                 ec.message()));
  }
}

int run_sweep(SweepOptions& o, std::ostream& out, std::ostream& err) {
  if (!o.grid_file.empty()) {
    read_grid_file(o.grid_file, o.grid);
  }
  namespace fs = std::filesystem;
  o.grid.out_dir = fs::absolute(o.grid.out_dir).lexically_normal().string();
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::vector<SweepPoint> points = sweep_points(o.grid, self);
  check_out_dir(o.grid.out_dir);
  fs::create_directories(o.grid.out_dir);
  std::ofstream list(std::filesystem::path(o.grid.out_dir) / "commands.txt");
  for (const SweepPoint& p : points) {
    list << shell_line(p.argv) << '\n';
  }
  if (o.print_commands) {
    for (const SweepPoint& p : points) {
      out << shell_line(p.argv) << '\n';
    }
    return 0;
  }
  fmt::print(err, "sweep: {} points, {} at a time; reports and logs in {}\n", points.size(),
             o.jobs, o.grid.out_dir);
  return run_points(points, o.jobs, err);
}

/// `sweep collect`: the CSV on `out` or in --output. A directory without reports, or a report
/// that is not a valid cycle report, is bad input (exit 2).
int collect_csv(const SweepOptions& o, std::ostream& out, std::ostream& err) {
  try {
    if (o.collect_out.empty()) {
      fmt::print(err, "sweep collect: {} rows\n", sweep_collect(o.collect_dir, out));
      return 0;
    }
    std::ostringstream csv;
    const std::size_t rows = sweep_collect(o.collect_dir, csv, o.collect_out);
    const std::string part = o.collect_out + ".part";  // whole, or not there at all
    std::ofstream f(part);
    if (!(f << csv.str()) || !f.flush()) {
      std::filesystem::remove(part);
      throw std::runtime_error(fmt::format("{}: cannot write", o.collect_out));
    }
    f.close();
    std::filesystem::rename(part, o.collect_out);
    fmt::print(err, "sweep collect: {} rows into {}\n", rows, o.collect_out);
    return 0;
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "run a grid of configurations x sequence lengths x models x Softmax modes x "
               "norms x DRAM timings on rtl or model, one report per point; collect them into "
               "a CSV");
  SweepGrid& g = o->grid;
  cmd->add_option("--model", g.models, "ln-gpt, bn-gpt, encoder (comma-separated)")
      ->delimiter(',')->capture_default_str();
  cmd->add_option("--config", g.configs, "configurations (tiny, small, base, RxC:lL...)")
      ->delimiter(',')->capture_default_str();
  cmd->add_option("--seq", g.seqs, "tokens: the prompt (prefill) or the encoder's sequence")
      ->delimiter(',')->capture_default_str();
  cmd->add_option("--softmax", g.softmax, "3pass, online")->delimiter(',')->capture_default_str();
  cmd->add_option("--norm", g.norms, "layer, batch: the character GPT with LayerNorm (ln-gpt) "
                                     "or BatchNorm (bn-gpt); default: each model's own")
      ->delimiter(',');
  cmd->add_option("--dram-latency", g.dram_latency, "ns")->delimiter(',')->capture_default_str();
  cmd->add_option("--dram-bandwidth", g.dram_bandwidth, "bytes per ns")
      ->delimiter(',')->capture_default_str();
  cmd->add_option("--decode-steps", g.decode_steps, "decoders: positions after the prompt")
      ->check(CLI::Range(0, 64))->capture_default_str();
  cmd->add_option("--backend,-b", g.backend, "rtl (the simulator) or model (the cycle model: "
                                             "the same cycles, much faster)")
      ->check(CLI::IsMember({"rtl", "model"}))->capture_default_str();
  cmd->add_option("--grid", o->grid_file, "the axes from a JSON file: {\"config\": [...], "
                                          "\"seq\": [...], ...} (replaces those options)");
  cmd->add_option("--out,-o", g.out_dir, "directory for the points' reports (NNNN.json)");
  cmd->add_flag("--print-commands", o->print_commands,
                "print one shell command per point instead of running them (GNU parallel, a "
                "Slurm job array)");
  cmd->add_option("--jobs,-j", o->jobs, "points run at a time")->check(CLI::Range(1, 256));
  CLI::App* collect = cmd->add_subcommand("collect", "the reports in a directory as one CSV");
  collect->add_option("dir", o->collect_dir, "the sweep's --out directory")->required();
  collect->add_option("--output,-o", o->collect_out, "write the CSV here (default: stdout)");
  return {[cmd] { return bool(*cmd); },
          [o, collect](std::ostream& out, std::ostream& err) {
            if (*collect) {
              return collect_csv(*o, out, err);
            }
            if (o->grid.out_dir.empty()) {
              throw UsageError("sweep: expected --out DIR for the points' reports, found none");
            }
            return run_sweep(*o, out, err);
          }};
}

}  // namespace passim::app
