// SPDX-License-Identifier: Apache-2.0
// The `saturated` counter (docs/isa.md, "Performance counters"): programs whose steps clamp
// some of their results, on SimDevice (the Verilated tiny psm_accel) against CpuDevice. For
// each clamping unit the counter and the instruction's record must be equal to CpuDevice's
// count, above 0 and below the number of results (so a unit that never flags, or always
// flags, fails). Lockstep also compares the DRAM byte for byte and every modelled counter.
// SystemC elaborates once per process: one SimDevice per TEST.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "accel_harness.hpp"
#include "passim/sim/host.hpp"
#include "passim/sim/sim_device.hpp"

namespace {

using namespace passim;
using passim::sim::SimDevice;
using passim::sim::test::bytes_of;
using passim::sim::test::index_of;
using passim::sim::test::Lockstep;
using passim::sim::test::random_values;
using passim::sim::test::record_of;

constexpr std::uint64_t kDram = 256 * 1024;
constexpr std::uint32_t kA = 0x0000, kB = 0x8000, kP = 0x10000, kOut = 0x18000;

passim::sim::SimOptions options() {
  passim::sim::SimOptions o;
  o.dram_bytes = kDram;
  return o;
}

/// Runs `b`'s program and checks the `saturated` counter against CpuDevice and the record of
/// its first `op` instruction: 0 < saturated < results.
void expect_some_clamped(Lockstep& ls, const ProgramBuilder& b, hw::Opcode op,
                         std::uint64_t results, const std::string& what) {
  const auto prog = b.program();
  const RunStats s = ls.run(prog, what);
  const auto sat = s.counters.at(std::size_t(hw::Counter::kSaturated));
  EXPECT_EQ(sat, ls.reference_stats().counters.at(std::size_t(hw::Counter::kSaturated)))
      << what;
  EXPECT_GT(sat, 0u) << what << ": nothing clamped";
  EXPECT_LT(sat, results) << what << ": everything clamped";
  EXPECT_EQ(record_of(s, index_of(prog, op)).saturated, sat) << what << ": its record";
}

/// Steps with mult in [2^30, 2^31) and shift in [lo, hi], as parameter entries at `at`.
void write_steps(Lockstep& ls, std::mt19937& rng, std::size_t n, int lo, int hi,
                 std::uint32_t at = kP) {
  std::vector<std::uint64_t> e(n);
  for (auto& x : e) {
    x = encode_param(Requant{std::uniform_int_distribution<std::int32_t>(1 << 30, 0x7FFF'FFFF)(rng),
                             std::uniform_int_distribution<std::int32_t>(lo, hi)(rng)});
  }
  ls.write(at, bytes_of(e));
}

TEST(SaturatedRtl, MatmulAndRequantStoreCountTheirClampedResults) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(7);
  const std::uint32_t m = 4, k = 64, n = 8;
  ls.write(kA, bytes_of(random_values<std::int8_t>(rng, m * k, -128, 127)));
  ls.write(kB, bytes_of(random_values<std::int8_t>(rng, k * n, -128, 127)));
  write_steps(ls, rng, n, 34, 37);  // |sum| ~ 2^15 times ~2^-6: some beyond int8
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kInput, .dram = kA, .rows = m, .row_len = k, .stride = k});
  b.load({.mem = hw::Mem::kWeight, .dram = kB, .rows = k, .row_len = n, .stride = n});
  b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .row_len = n, .stride = n * 8});
  b.matmul({.m = m, .k = k, .n = n, .dst = 10, .out_bits = 8, .requant = true});
  b.store({.mem = hw::Mem::kVector, .dram = kOut, .spad = 10, .rows = m, .row_len = n, .stride = n});
  expect_some_clamped(ls, b, hw::Opcode::kMatmul, m * n, "MATMUL out_bits 8");

  const std::uint32_t rows = 3, len = 21;  // int32 lanes stored as int8 through param entry 0
  ls.write(kA, bytes_of(random_values<std::int32_t>(rng, rows * len, -30000, 30000)));
  write_steps(ls, rng, 1, 36, 36);
  ProgramBuilder st;
  st.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .rows = rows, .row_len = len, .stride = len * 4});
  st.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .row_len = 1, .stride = 8});
  st.store({.mem = hw::Mem::kVector, .dram = kOut, .rows = rows, .row_len = len, .stride = len, .requant = true});
  expect_some_clamped(ls, st, hw::Opcode::kDmaStore, rows * len, "DMA_STORE requant int8");
}

TEST(SaturatedRtl, VectorUnitsCountTheirClampedResults) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(11);
  const std::uint32_t rows = 2, len = 19;
  const auto load16 = [&](ProgramBuilder& b, std::uint32_t dram, std::uint32_t spad,
                          std::uint32_t r) {
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = dram, .spad = spad, .rows = r, .row_len = len, .stride = len * 2});
  };
  ls.write(kA, bytes_of(random_values<std::int16_t>(rng, rows * len, -32768, 32767)));
  ls.write(kB, bytes_of(random_values<std::int16_t>(rng, rows * len, -32768, 32767)));
  {  // ADD: saturate(a + b, 16)
    ProgramBuilder b;
    load16(b, kA, 0, rows);
    load16(b, kB, 100, rows);
    b.vector({.op = hw::Opcode::kAdd, .src2 = 100, .dst = 200, .len = len, .rows = rows});
    expect_some_clamped(ls, b, hw::Opcode::kAdd, rows * len, "ADD");
  }
  {  // RMSNORM with gains up to +-1250 (Q.4): all but the smallest products clamp at int8
    ls.write(kB, bytes_of(random_values<std::int16_t>(rng, len, -20000, 20000)));
    ls.write(kP, bytes_of(std::vector<std::uint64_t>{16}));
    ProgramBuilder b;
    load16(b, kA, 0, rows);
    load16(b, kB, 400, 1);
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .spad = 9, .row_len = 1, .stride = 8});
    b.vector({.op = hw::Opcode::kRmsnorm, .src2 = 400, .dst = 200, .param = 9, .len = len, .rows = rows, .gain_frac_bits = 4});
    expect_some_clamped(ls, b, hw::Opcode::kRmsnorm, rows * len, "RMSNORM");
  }
  {  // ROPE on int16 values: rotations beyond 12 bits clamp
    const std::uint32_t hs = 8, heads = 4, half = hs / 2;
    ls.write(kA, bytes_of(random_values<std::int16_t>(rng, heads * hs, -4000, 4000)));
    ls.write(kB, bytes_of(std::vector<std::int16_t>{11585, 16384, 0, -16384}));  // cos, Q1.14
    ls.write(kB + 64, bytes_of(std::vector<std::int16_t>{11585, 0, 16384, 0}));  // sin
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kA, .rows = heads, .row_len = hs, .stride = hs * 2});
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB, .spad = 500, .row_len = half, .stride = half * 2});
    const std::size_t sin_at = 500 + (half + dev.hw().lanes - 1) / dev.hw().lanes;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB + 64, .spad = sin_at, .row_len = half, .stride = half * 2});
    b.vector({.op = hw::Opcode::kRope, .src2 = 500, .len = hs, .rows = heads});
    expect_some_clamped(ls, b, hw::Opcode::kRope, heads * hs, "ROPE");
  }
}

}  // namespace
