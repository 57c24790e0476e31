// SPDX-License-Identifier: Apache-2.0
// passim_cosim: the random co-simulation campaign of one configuration. Generates seeded
// random programs (tests/gen) until the accelerator (SimDevice, SystemC DRAM model) has retired
// --instructions instructions (or, with --invalid, has run --programs broken programs) and
// compares every program with CpuDevice. Prints one summary line; exits 1 at the first
// mismatch, after printing the seed, the program number and the difference.
//   passim_cosim --config small --seed 5 --instructions 100000 [--latency-ns 200]
// Bad options are usage errors (exit 2): counts are decimal digits in a stated range, and the
// DRAM timing is checked by the simulator (SimOptions).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include <CLI/CLI.hpp>

#include "cosim.hpp"
#include "options.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/sim/sim_device.hpp"
#include "program_gen.hpp"

namespace {

using namespace passim;

struct Options {
  std::string config = "tiny";
  std::uint64_t seed = 1;
  std::uint64_t instructions = 100'000;  ///< retired instructions to reach (valid programs)
  std::uint64_t programs = 2000;         ///< programs to run with --invalid
  bool invalid = false;
  std::optional<double> latency_ns;      ///< unset: drawn from the seed
  std::optional<double> bytes_per_ns;    ///< unset: drawn from the seed
  std::size_t max_ops = 24;
  std::uint64_t dram_kib = 1024;
};

std::unique_ptr<sim::AccelModel> model_of(const std::string& config) {
  if (config == "tiny") {
    return sim::make_accel_model_tiny();
  }
  if (config == "small") {
    return sim::make_accel_model_small();
  }
  return sim::make_accel_model_base();
}

int run(Options o) {
  std::mt19937_64 timing(o.seed ^ 0x5EED);
  const double latency_draw = std::uniform_int_distribution<int>(1, 50)(timing) * 10;
  const double bytes_draw = std::uniform_int_distribution<int>(1, 32)(timing) * 0.25;
  const double latency_ns = o.latency_ns.value_or(latency_draw);
  const double bytes_per_ns = o.bytes_per_ns.value_or(bytes_draw);
  const std::uint64_t bytes = o.dram_kib * 1024;
  sim::SimOptions opts;
  opts.dram_bytes = bytes;
  opts.dram_latency_ns = latency_ns;
  opts.dram_bytes_per_ns = bytes_per_ns;
  opts.max_cycles = 100'000'000;  // a hang ends the campaign as a mismatch
  sim::SimDevice dut(model_of(o.config), opts);
  CpuDevice ref(dut.hw(), bytes);
  gen::ProgramGen g(dut.hw(), bytes, o.seed);
  const std::vector<std::uint8_t> image = g.initial_dram();
  ref.write_dram(0, image);
  dut.write_dram(0, image);
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t retired = 0, programs = 0, errors = 0, mismatches = 0;
  while (o.invalid ? programs < o.programs : retired < o.instructions) {
    const gen::GenCase c = o.invalid ? g.next_invalid() : g.next_valid(o.max_ops);
    const gen::CaseResult r = gen::run_case(ref, dut, c, bytes);
    ++programs;
    retired += r.retired;
    errors += r.errored ? 1 : 0;
    if (!r.ok()) {
      ++mismatches;
      std::printf("MISMATCH config %s seed %llu program %llu: %s\n", o.config.c_str(),
                  static_cast<unsigned long long>(o.seed),
                  static_cast<unsigned long long>(programs - 1), r.mismatch.c_str());
      std::printf("PROG_ADDR %#llx PROG_LEN %u%s\n%s",
                  static_cast<unsigned long long>(c.prog_addr), c.len,
                  c.invalid ? (" " + c.corruption).c_str() : "", gen::listing(c.image).c_str());
      break;  // the devices' states now differ: later programs would prove nothing
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("config %s seed %llu%s latency %.0f ns bandwidth %.2f B/ns: programs %llu "
              "retired %llu errors %llu mismatches %llu wall %.1f s\n",
              o.config.c_str(), static_cast<unsigned long long>(o.seed),
              o.invalid ? " invalid" : "", latency_ns, bytes_per_ns,
              static_cast<unsigned long long>(programs), static_cast<unsigned long long>(retired),
              static_cast<unsigned long long>(errors), static_cast<unsigned long long>(mismatches),
              secs);
  return mismatches == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  using passim::app::decimal_in;
  CLI::App app{"Random co-simulation of the accelerator against CpuDevice"};
  Options o;
  app.add_option("--config", o.config, "built-in configuration")
      ->check(CLI::IsMember({"tiny", "small", "base"}));
  app.add_option("--seed", o.seed, "generator seed")
      ->transform(decimal_in(0, std::numeric_limits<std::uint64_t>::max()));
  app.add_option("--instructions", o.instructions, "retired instructions to reach")
      ->transform(decimal_in(1, 10'000'000'000));
  app.add_option("--programs", o.programs, "programs to run with --invalid")
      ->transform(decimal_in(1, 100'000'000));
  app.add_flag("--invalid", o.invalid, "broken programs: both must report the same error");
  double latency_ns = 0;
  double bytes_per_ns = 0;
  // A latency of 10^5 ns is 10^4 cycles per beat at 100 MHz: longer ones only make each
  // program slower to simulate (the drawn ones are 10 to 500 ns).
  const CLI::Option* latency =
      app.add_option("--latency-ns", latency_ns, "DRAM latency (default: drawn from the seed)")
          ->check(CLI::Range(0.0, 1e5));
  const CLI::Option* bandwidth =
      app.add_option("--bytes-per-ns", bytes_per_ns, "DRAM bandwidth (default: from the seed)")
          ->check(CLI::Range(0.01, 1e3));
  app.add_option("--max-ops", o.max_ops, "operations per program, at most")
      ->transform(decimal_in(1, 200));
  app.add_option("--dram-kib", o.dram_kib, "DRAM size in KiB")->transform(decimal_in(256, 65536));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the message, or the help
    return code == 0 ? 0 : 2;
  }
  if (latency->count() > 0) {
    o.latency_ns = latency_ns;
  }
  if (bandwidth->count() > 0) {
    o.bytes_per_ns = bytes_per_ns;
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "passim_cosim: %s\n", e.what());
    return 2;
  }
}
