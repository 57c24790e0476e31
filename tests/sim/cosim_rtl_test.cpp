// SPDX-License-Identifier: Apache-2.0
// Random co-simulation of the whole accelerator (tiny) in the SystemC system model: seeded
// random programs of every opcode (tests/gen) run on SimDevice and on CpuDevice, and the DRAM,
// the modelled counters and the trace records must agree after every program; invalid
// programs must stop both with the same error and instruction index. Each test is one process
// (one SimDevice) with its own DRAM latency and bandwidth. The long campaign over every
// configuration is tests/sim/cosim_campaign.sh (passim_cosim).
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "cosim.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/sim/sim_device.hpp"
#include "program_gen.hpp"

namespace {

using namespace passim;

constexpr std::uint64_t kDramBytes = 256 * 1024;

/// The DRAM timing of one test: latency and bandwidth of the SystemC DRAM target.
struct Timing {
  double latency_ns;
  double bytes_per_ns;
};

/// Runs `programs` generated programs of seed `seed` on SimDevice (tiny) with `t` and on
/// CpuDevice; fails at the first mismatch with the seed, the program and what differed.
/// Returns the instructions retired.
std::uint64_t run_seed(std::uint64_t seed, int programs, Timing t, bool invalid) {
  sim::SimOptions opts;
  opts.dram_bytes = kDramBytes;
  opts.dram_latency_ns = t.latency_ns;
  opts.dram_bytes_per_ns = t.bytes_per_ns;
  opts.max_cycles = 20'000'000;  // a hang is a failure, not a stuck test
  sim::SimDevice dut(sim::make_accel_model_tiny(), opts);
  CpuDevice ref(hw::kTiny, kDramBytes);
  gen::ProgramGen g(hw::kTiny, kDramBytes, seed);
  const std::vector<std::uint8_t> image = g.initial_dram();
  ref.write_dram(0, image);
  dut.write_dram(0, image);
  std::uint64_t retired = 0;
  for (int p = 0; p < programs; ++p) {
    const gen::GenCase c = invalid ? g.next_invalid() : g.next_valid(24);
    const gen::CaseResult r = gen::run_case(ref, dut, c, kDramBytes);
    if (!r.ok()) {
      ADD_FAILURE() << "seed " << seed << " program " << p << " (" << c.len
                    << " instructions): " << r.mismatch;
      return retired;
    }
    EXPECT_EQ(r.errored, invalid) << "seed " << seed << " program " << p;
    retired += r.retired;
  }
  return retired;
}

TEST(CosimRtl, RandomProgramsAtTheDefaultLatency) {
  const std::uint64_t retired = run_seed(20261203, 1400, {50.0, 1.6}, false);
  EXPECT_GT(retired, 14000u);
  std::printf("retired %llu instructions\n", static_cast<unsigned long long>(retired));
}

TEST(CosimRtl, RandomProgramsAtAShortLatencyAndHighBandwidth) {
  (void)run_seed(7, 800, {10.0, 8.0}, false);
}

TEST(CosimRtl, RandomProgramsAtALongLatencyAndLowBandwidth) {
  (void)run_seed(11, 600, {420.0, 0.4}, false);
}

// Every kind of broken program: the same documented error and index from both devices.
TEST(CosimRtl, InvalidProgramsGetTheSameErrorFromBoth) {
  (void)run_seed(3, 3000, {50.0, 1.6}, true);
}

// Seeds that once found a mismatch, run again (seed, programs).
//   20261202: program 22, a SILU whose output rows started 17 words into its input rows: the
//             unit streams word by word, CpuDevice row by row, so the saturated counts
//             differed. Partial overlaps have no defined result; the generator now keeps a
//             vector opcode's result apart from its inputs (or exactly on src where allowed).
//             The parameter table added since changed the seed's programs; it stays a slice.
TEST(CosimRtl, RegressionSeeds) {
  const std::pair<std::uint64_t, int> seeds[] = {{20261202, 40}};
  for (const auto& [seed, programs] : seeds) {
    (void)run_seed(seed, programs, {50.0, 1.6}, false);
  }
}

}  // namespace
