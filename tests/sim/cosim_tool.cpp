// SPDX-License-Identifier: Apache-2.0
// passim_cosim: the random co-simulation campaign of one configuration. Generates seeded
// random programs (tests/gen) until the accelerator (SimDevice, SystemC DRAM model) has retired
// --instructions instructions (or, with --invalid, has run --programs broken programs) and
// compares every program with CpuDevice. Prints one summary line; exits 1 at the first
// mismatch, after printing the seed, the program number and the difference.
//   passim_cosim --config small --seed 5 --instructions 100000 [--latency-ns 200]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <random>
#include <string>

#include <CLI/CLI.hpp>

#include "cosim.hpp"
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
  double latency_ns = -1;                ///< < 0: drawn from the seed
  double bytes_per_ns = -1;              ///< < 0: drawn from the seed
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
  if (o.latency_ns < 0) {
    o.latency_ns = double(std::uniform_int_distribution<int>(1, 50)(timing) * 10);
  }
  if (o.bytes_per_ns < 0) {
    o.bytes_per_ns = std::uniform_int_distribution<int>(1, 32)(timing) * 0.25;
  }
  const std::uint64_t bytes = o.dram_kib * 1024;
  sim::SimOptions opts;
  opts.dram_bytes = bytes;
  opts.dram_latency_ns = o.latency_ns;
  opts.dram_bytes_per_ns = o.bytes_per_ns;
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
              o.invalid ? " invalid" : "", o.latency_ns, o.bytes_per_ns,
              static_cast<unsigned long long>(programs), static_cast<unsigned long long>(retired),
              static_cast<unsigned long long>(errors), static_cast<unsigned long long>(mismatches),
              secs);
  return mismatches == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Random co-simulation of the accelerator against CpuDevice"};
  Options o;
  app.add_option("--config", o.config, "built-in configuration")
      ->check(CLI::IsMember({"tiny", "small", "base"}));
  app.add_option("--seed", o.seed, "generator seed");
  app.add_option("--instructions", o.instructions, "retired instructions to reach");
  app.add_option("--programs", o.programs, "programs to run with --invalid");
  app.add_flag("--invalid", o.invalid, "broken programs: both must report the same error");
  app.add_option("--latency-ns", o.latency_ns, "DRAM latency (default: drawn from the seed)");
  app.add_option("--bytes-per-ns", o.bytes_per_ns, "DRAM bandwidth (default: from the seed)");
  app.add_option("--max-ops", o.max_ops, "operations per program, at most")->check(
      CLI::Range(1, 200));
  app.add_option("--dram-kib", o.dram_kib, "DRAM size in KiB")->check(CLI::Range(256, 65536));
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "passim_cosim: %s\n", e.what());
    return 2;
  }
}
