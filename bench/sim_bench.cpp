// SPDX-License-Identifier: Apache-2.0
// Simulation speed of the Verilated accelerator: cycles per second of SimDevice (the model
// stepped inside one SC_THREAD, TLM-2.0 DRAM with a quantum keeper) against LoopDevice (the
// same Verilated model stepped in a plain C++ loop, fixed-latency DRAM) on tiny, and SimDevice
// on small and base, on the same work: decoding steps of the compiled stories260K model
// (BM_SimDeviceBasePrefill: ln-gpt's 120-character prompt as one prefill pass on base).
//
// SystemC elaborates once per process, so main() runs every benchmark the filter selects in a
// process of its own (itself, with a filter naming that one benchmark), and exits 1 when any of
// them failed. One at a time:
//   passim_sim_bench --benchmark_filter=BM_LoopDevice
//   passim_sim_bench --benchmark_filter=BM_SimDevice/
//   passim_sim_bench --benchmark_filter=BM_SimDeviceSyncEveryCycle
//   passim_sim_bench --benchmark_filter=BM_SimDeviceSmall
//   passim_sim_bench --benchmark_filter=BM_SimDeviceBase/
//   passim_sim_bench --benchmark_filter=BM_SimDeviceBaseResident
//   passim_sim_bench --benchmark_filter=BM_SimDeviceBasePrefill
// (each benchmark builds its device once and runs a fixed number of iterations).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "passim/compiler/compiler.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/device/records.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/eval/load.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/quant/quant_model.hpp"
#include "passim/quant/quantize.hpp"
#include "passim/sim/sim_device.hpp"

namespace {

using namespace passim;

std::filesystem::path model_path() {
  const char* env = std::getenv("PASSIM_DATA");
  const std::filesystem::path dir = (env != nullptr && *env != '\0') ? env : PASSIM_DATA_DIR;
  return dir / "models" / "stories260K.bin";
}

/// The device `make` builds, or null after marking the benchmark skipped with the error's
/// message: a second SystemC device in one process is refused (SimDevice elaborates once).
template <typename Make>
auto make_or_skip(benchmark::State& state, Make make) -> decltype(make()) {
  try {
    return make();
  } catch (const std::runtime_error& e) {
    state.SkipWithError(e.what());
    return nullptr;
  }
}

/// Runs `steps` decoding steps (positions 0..steps-1) of stories260K on `device` per
/// iteration and reports simulated cycles per second of wall time. The speed benchmarks
/// stream the weights (the workload every earlier figure was measured on); with resident
/// weights the preload runs once before the timed steps, and the weight-preload bound of a
/// weight-stationary array (weights / R cycles per token) is reported next to the cycles.
template <typename MakeDevice>
void run_steps(benchmark::State& state, MakeDevice make, const hw::HwConfig& cfg = hw::kTiny,
               WeightsMode weights = WeightsMode::kStreamed) {
  if (!std::filesystem::exists(model_path())) {
    state.SkipWithError("stories260K not found (set PASSIM_DATA)");
    return;
  }
  const auto fm = load_llama2c(model_path());
  const QuantModel model = quantize(fm, calibrate(fm, {{1, 403, 407}}));
  const ModelCompiler probe(model, cfg, {.weights = weights});
  sim::SimOptions opts;
  opts.dram_bytes = (probe.dram_bytes() + 4095) / 4096 * 4096;
  auto device = make_or_skip(state, [&] { return make(opts); });
  if (!device) {
    return;
  }
  DeviceBackend backend(probe, *device);
  const int steps = static_cast<int>(state.range(0));
  if (probe.residency().weights) {
    backend.forward(1, 0);  // the preload and position 0, outside the timed steps
  }
  const std::uint64_t c0 = device->cycles();
  for (auto _ : state) {
    for (int pos = 0; pos < steps; ++pos) {
      backend.forward(pos == 0 ? 1 : 403, pos);
    }
  }
  const auto cycles = static_cast<double>(device->cycles() - c0);
  state.counters["cycles_per_s"] = benchmark::Counter(cycles, benchmark::Counter::kIsRate);
  state.counters["cycles_per_token"] =
      cycles / static_cast<double>(state.iterations() * std::uint64_t(steps));
  if (probe.residency().weights) {
    state.counters["weight_bound_cycles_per_token"] =
        static_cast<double>(probe.residency().weight_bytes) / double(cfg.array_rows);
  }
}

void BM_LoopDevice(benchmark::State& state) {
  run_steps(state, [](const sim::SimOptions& o) {
    return std::make_unique<sim::LoopDevice>(sim::make_accel_model_tiny(), o);
  });
}

void BM_SimDevice(benchmark::State& state) {
  run_steps(state, [](const sim::SimOptions& o) {
    return std::make_unique<sim::SimDevice>(sim::make_accel_model_tiny(), o);
  });
}

// SimDevice on the two larger configurations. The rate moves with the machine's load: compare
// two builds by running their benchmarks interleaved on the same machine (bench/README.md).
void BM_SimDeviceSmall(benchmark::State& state) {
  run_steps(
      state,
      [](const sim::SimOptions& o) {
        return std::make_unique<sim::SimDevice>(sim::make_accel_model_small(), o);
      },
      hw::kSmall);
}

void BM_SimDeviceBase(benchmark::State& state) {
  run_steps(
      state,
      [](const sim::SimOptions& o) {
        return std::make_unique<sim::SimDevice>(sim::make_accel_model_base(), o);
      },
      hw::kBase);
}

// stories260K decoding on base with its weights resident in the weight scratchpad (loaded
// once): cycles per token against the weight-preload bound (weights / R).
void BM_SimDeviceBaseResident(benchmark::State& state) {
  run_steps(
      state,
      [](const sim::SimOptions& o) {
        return std::make_unique<sim::SimDevice>(sim::make_accel_model_base(), o);
      },
      hw::kBase, WeightsMode::kResident);
}

/// Sums the counters and the MATMULs' multiply-accumulates of every run.
class MacCounter final : public RunObserver {
 public:
  void on_run(std::span<const hw::Instr> program, const RunStats& stats) override {
    counters.resize(stats.counters.size());
    for (std::size_t i = 0; i < stats.counters.size(); ++i) {
      counters[i] += stats.counters[i];
    }
    for (const InstrRecord& r : stats.records) {
      // The weight matmuls (op class matmul: MATMUL, MATMUL_HEADS), whose cycles the matmul
      // class counts; attention's MATMUL_ACT counts in the attention class.
      const bool matmul = r.index < program.size() &&
                          hw::get_field(program[r.index], hw::fields::kOpClass) ==
                              std::uint32_t(hw::OpClass::kMatmul) &&
                          hw::unit_of(static_cast<hw::Opcode>(hw::get_field(
                              program[r.index], hw::fields::kOpcode))) == hw::Unit::kMatmul;
      if (matmul) {
        macs += instr_macs(program[r.index]);
      }
    }
  }
  std::vector<std::uint64_t> counters;
  std::uint64_t macs = 0;
};

// ln-gpt's prompt prefill on base: the first 120 characters of tinyshakespeare as one
// whole-sequence pass, and the array's MAC utilisation while a MATMUL is in flight (MACs over
// matmul-class cycles x R x C, from the RTL's counters and records).
void BM_SimDeviceBasePrefill(benchmark::State& state) {
  const std::filesystem::path text = model_path().parent_path().parent_path() / "text" /
                                     "tinyshakespeare.txt";
  if (!std::filesystem::exists(text)) {
    state.SkipWithError("tinyshakespeare.txt not found (set PASSIM_DATA)");
    return;
  }
  ModelSource src;
  src.path = PASSIM_MODELS_DIR "/ln-gpt/ln-gpt.gguf";
  LoadedModel m = read_model(src);
  quantise_in_memory(m, "", BatchNormMode::kUnfused, [](std::string_view) {});
  std::ifstream in(text);
  std::string prompt(std::size_t(state.range(0)), ' ');
  in.read(prompt.data(), std::streamsize(prompt.size()));
  const std::vector<int> tokens = m.tokenizer->encode(prompt, false, false);
  const ModelCompiler probe(*m.quant_model, hw::kBase);
  sim::SimOptions opts;
  opts.dram_bytes = (probe.dram_bytes() + 4095) / 4096 * 4096;
  auto device = make_or_skip(state, [&] {
    return std::make_unique<sim::SimDevice>(sim::make_accel_model_base(), opts);
  });
  if (!device) {
    return;
  }
  MacCounter mc;
  device->add_observer(&mc);
  DeviceBackend backend(probe, *device);
  for (auto _ : state) {
    backend.forward_sequence(tokens, 0);
  }
  const auto at = [&](hw::Counter c) { return double(mc.counters.at(std::size_t(c))); };
  const double macs_per_cycle = double(hw::kBase.macs());
  state.counters["prompt_tokens"] = double(tokens.size());
  state.counters["cycles"] = at(hw::Counter::kTotalCycles);
  state.counters["matmul_class_mac_util"] =
      double(mc.macs) / (at(hw::Counter::kCyclesMatmul) * macs_per_cycle);
  state.counters["mac_util"] = double(mc.macs) / (at(hw::Counter::kTotalCycles) * macs_per_cycle);
}

// The same with a 10 ns TLM quantum: SystemC synchronises (a wait()) after every cycle, which is
// what temporal decoupling avoids.
void BM_SimDeviceSyncEveryCycle(benchmark::State& state) {
  run_steps(state, [](sim::SimOptions o) {
    o.quantum_ns = 1000.0 / o.clock_mhz;
    return std::make_unique<sim::SimDevice>(sim::make_accel_model_tiny(), o);
  });
}

// One device per benchmark run: a fixed iteration count keeps Google Benchmark from calling
// the function again (SimDevice may be built once per process). UseRealTime: cycles per
// second of wall time, the number a user waits for.
BENCHMARK(BM_LoopDevice)->Arg(2)->Iterations(2)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_SimDevice)->Arg(2)->Iterations(2)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_SimDeviceSmall)->Arg(16)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_SimDeviceBase)->Arg(16)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_SimDeviceBaseResident)
    ->Arg(64)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();
BENCHMARK(BM_SimDeviceBasePrefill)
    ->Arg(120)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();
BENCHMARK(BM_SimDeviceSyncEveryCycle)
    ->Arg(1)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

/// Counts the runs that ended in an error while printing them as usual.
class CountingReporter : public benchmark::ConsoleReporter {
 public:
  CountingReporter()
      : ConsoleReporter(isatty(STDOUT_FILENO) != 0 ? OO_Color : OO_None) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      errors_ += run.error_occurred ? 1 : 0;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  [[nodiscard]] int errors() const noexcept { return errors_; }

 private:
  int errors_ = 0;
};

/// Names of the benchmarks the command line selects, from a child that lists them.
std::vector<std::string> selected(const std::string& self, const std::vector<std::string>& args) {
  std::string cmd = "'" + self + "' --benchmark_list_tests=true";
  for (const std::string& a : args) {
    if (a.find('\'') != std::string::npos) {
      throw std::invalid_argument("argument with a quote: " + a);
    }
    cmd += " '" + a + "'";
  }
  std::vector<std::string> names;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    throw std::runtime_error("cannot list the benchmarks: popen failed");
  }
  char line[512];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::string name(line);
    while (!name.empty() && (name.back() == '\n' || name.back() == '\r')) {
      name.pop_back();
    }
    if (!name.empty()) {
      names.push_back(name);
    }
  }
  return pclose(pipe) == 0 ? names : std::vector<std::string>{};
}

/// Runs `self --benchmark_filter=^name$ args...` and returns its exit status (1 if it died).
int run_child(const std::string& self, const std::string& name,
              const std::vector<std::string>& args) {
  std::vector<std::string> argv_s{self, "--benchmark_filter=^" + name + "$"};
  for (const std::string& a : args) {
    if (a.rfind("--benchmark_filter", 0) != 0) {
      argv_s.push_back(a);
    }
  }
  std::vector<char*> argv;
  for (std::string& a : argv_s) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("PASSIM_SIM_BENCH_ONE", "1", 1);
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) {
    return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const bool listing = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a.rfind("--benchmark_list_tests", 0) == 0;
  });
  if (std::getenv("PASSIM_SIM_BENCH_ONE") != nullptr || listing) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
      return 2;
    }
    CountingReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return reporter.errors() == 0 ? 0 : 1;
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  if (self.find('\'') != std::string::npos) {
    std::fprintf(stderr, "passim_sim_bench: cannot run from a path with a quote: %s\n",
                 self.c_str());
    return 1;
  }
  const std::vector<std::string> names = selected(self, args);
  if (names.empty()) {
    std::fprintf(stderr, "passim_sim_bench: no benchmark matches the filter\n");
    return 1;
  }
  int failed = 0;
  for (const std::string& name : names) {
    failed += run_child(self, name, args) == 0 ? 0 : 1;
  }
  return failed == 0 ? 0 : 1;
}
