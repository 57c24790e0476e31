// SPDX-License-Identifier: Apache-2.0
// Directed programs through SimDevice (the Verilated tiny psm_accel in its SystemC/TLM-2.0
// system model) against the ISA reference CpuDevice: DMA round trips, MATMUL in every output
// mode, every vector opcode, the performance counters, errors, the simulation watchdog and
// waveform tracing. The DRAM after every program must equal CpuDevice's, byte for byte.
// SystemC elaborates once per process: each TEST builds one SimDevice (ctest runs each in its
// own process; run the binary by hand with --gtest_filter=<one test>).
#include <array>
#include <cstdint>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>
#include <gtkwave/fstapi.h>

#include "accel_harness.hpp"
#include "rtl_session.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/sim/accel_build.hpp"
#include "passim/sim/host.hpp"
#include "passim/sim/sim_device.hpp"

namespace {

using namespace passim;
using passim::sim::SimDevice;
using passim::sim::SimOptions;
using passim::sim::test::bytes_of;
using passim::sim::test::check_records;
using passim::sim::test::index_of;
using passim::sim::test::Lockstep;
using passim::encode_param;
using passim::ProgramBuilder;
using passim::sim::test::random_values;
using passim::sim::test::record_of;

constexpr std::uint64_t kDram = 256 * 1024;
constexpr std::uint32_t kSeed = 1234;

// DRAM regions of the directed programs.
constexpr std::uint32_t kA = 0x0000;     // operand a
constexpr std::uint32_t kB = 0x8000;     // operand b
constexpr std::uint32_t kP = 0x10000;    // parameter entries
constexpr std::uint32_t kOut = 0x18000;  // results
constexpr std::uint32_t kOut2 = 0x20000;

SimOptions options() {
  SimOptions o;
  o.dram_bytes = kDram;
  return o;
}

std::uint64_t counter(const RunStats& s, hw::Counter c) { return s.counters.at(std::size_t(c)); }

std::uint32_t words(std::uint32_t n, std::size_t per_word) {
  return std::uint32_t((n + per_word - 1) / per_word);
}

/// Writes n Requant steps (mult in [2^30, 2^31), shift in [lo, hi]) at kP.
std::vector<Requant> write_steps(Lockstep& ls, std::mt19937& rng, std::size_t n, int lo, int hi,
                                 std::uint32_t at = kP) {
  std::vector<Requant> rq(n);
  std::vector<std::uint64_t> e(n);
  for (std::size_t i = 0; i < n; ++i) {
    rq[i] = {std::uniform_int_distribution<std::int32_t>(1 << 30, 0x7FFF'FFFF)(rng),
             std::uniform_int_distribution<std::int32_t>(lo, hi)(rng)};
    e[i] = encode_param(rq[i]);
  }
  ls.write(at, bytes_of(e));
  return rq;
}

TEST(AccelRtl, DmaRoundTripsThroughTlmDram) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed);
  ls.write(kA, random_values<std::uint8_t>(rng, 4096, 0, 255));
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kInput, .dram = kA + 1, .spad = 3, .rows = 4, .row_len = 37, .stride = 41});
  b.load({.mem = hw::Mem::kWeight, .dram = kA + 300, .rows = 5, .row_len = 22, .stride = 22});
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kA + 1001, .spad = 100, .rows = 3, .row_len = 17, .stride = 40});
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA + 2000, .spad = 200, .rows = 2, .row_len = 9, .stride = 36});
  b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kA + 3003, .spad = 10, .rows = 2, .row_len = 3, .stride = 29});
  b.store({.mem = hw::Mem::kInput, .dram = kOut + 5, .spad = 3, .rows = 4, .row_len = 38, .stride = 39});
  b.store({.mem = hw::Mem::kWeight, .dram = kOut + 400, .rows = 5, .row_len = 24, .stride = 24});
  b.store({.mem = hw::Mem::kVector, .dram = kOut + 700, .spad = 100, .rows = 3, .row_len = 18, .stride = 18});
  b.store({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kOut + 800, .spad = 200, .rows = 2, .row_len = 9, .stride = 36});
  b.store({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kOut + 1003, .spad = 10, .rows = 2, .row_len = 3, .stride = 24});
  const RunStats s = ls.run(b.program(), "DMA round trips");
  EXPECT_TRUE(s.has_cycles);
  EXPECT_EQ(s.instructions, b.program().size());
  EXPECT_EQ(counter(s, hw::Counter::kPassesDma), 4u + 5 + 3 + 2 + 2 + 4 + 5 + 3 + 2 + 2);
  EXPECT_GT(counter(s, hw::Counter::kMemStall), 0u) << "the DRAM has a 50 ns latency";
  EXPECT_GT(dev.sim_time_ns(), 0.0);
}

// MATMUL: shapes with k and n not multiples of R, C or L, raw int32 and every saturation
// width the compiler uses (8, 12 for queries and keys, 16, 32), in-place addresses.
TEST(AccelRtl, MatmulEveryOutputMode) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed);
  struct Shape {
    std::uint32_t m, k, n, out_bits;
    bool requant;
    int shift_lo, shift_hi;
  };
  const hw::HwConfig& c = dev.hw();
  for (const Shape sh : {Shape{1, 64, 8, 12, true, 36, 44}, Shape{3, 5, 7, 8, true, 30, 40},
                         Shape{2, 17, 13, 16, true, 28, 34}, Shape{1, 64, 40, 32, true, 20, 26},
                         Shape{4, 9, 6, 32, false, 0, 0}, Shape{1, 1, 1, 8, true, 0, 3},
                         Shape{5, 33, 21, 12, true, 24, 30}}) {
    const auto a = random_values<std::int8_t>(rng, sh.m * sh.k, -128, 127);
    const auto wt = random_values<std::int8_t>(rng, sh.k * sh.n, -128, 127);  // W^T (k, n)
    ls.write(kA, bytes_of(a));
    ls.write(kB, bytes_of(wt));
    if (sh.requant) {
      write_steps(ls, rng, sh.n, sh.shift_lo, sh.shift_hi);
    }
    const int esize = !sh.requant || sh.out_bits > 16 ? 2 : sh.out_bits > 8 ? 1 : 0;
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kInput, .dram = kA, .spad = 7, .rows = sh.m, .row_len = sh.k, .stride = sh.k});
    b.load({.mem = hw::Mem::kWeight, .dram = kB, .spad = 3, .rows = sh.k, .row_len = sh.n, .stride = sh.n});
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .spad = 5, .row_len = sh.n, .stride = sh.n * 8});
    MatmulOp mm;
    mm.m = sh.m;
    mm.k = sh.k;
    mm.n = sh.n;
    mm.a_addr = 7;
    mm.w_addr = 3;
    mm.dst = 11;
    mm.rq_addr = 5;
    mm.out_bits = sh.out_bits;
    mm.requant = sh.requant;
    b.matmul(mm);
    b.store({.mem = hw::Mem::kVector, .elem_log2 = unsigned(esize), .dram = kOut, .spad = 11, .rows = sh.m, .row_len = sh.n, .stride = sh.n << esize});
    const RunStats s = ls.run(b.program(), "MATMUL m " + std::to_string(sh.m) + " k " +
                                              std::to_string(sh.k) + " n " + std::to_string(sh.n) +
                                              " out_bits " + std::to_string(sh.out_bits));
    EXPECT_EQ(counter(s, hw::Counter::kPassesMatmul),
              words(sh.k, c.array_rows) * words(sh.n, c.array_cols))
        << "one pass per weight tile";
    EXPECT_GT(counter(s, hw::Counter::kBusyMatmul), 0u);
  }
}

// MATMUL_ACT: two and three digit groups (a's row r holds group g at words (r * G + g) * KT,
// W^T group g's rows from g * k on), requantised or raw, with the result written as rows or
// transposed (column c as vector row c), against CpuDevice; passes are G * KT * NT and count
// in the attention class.
TEST(AccelRtl, MatmulActDigitGroupsAndTransposedResult) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed + 3);
  const hw::HwConfig& c = dev.hw();
  const std::uint32_t m = 3, k = 5, n = 6;  // tiny: KT = 3, NT = 2, ceil(m / L) = 2
  std::uint64_t cycles[2] = {};  // the MATMUL_ACT's record: rows, transposed
  for (const std::uint32_t g : {2u, 3u}) {
    for (const bool trans : {false, true}) {
      for (const std::uint32_t out_bits : {0u, 16u}) {
        ls.write(kA, bytes_of(random_values<std::int8_t>(rng, m * g * k, -128, 127)));
        ls.write(kB, bytes_of(random_values<std::int8_t>(rng, g * k * n, -128, 127)));
        write_steps(ls, rng, n, 36, 44);
        ProgramBuilder b;
        b.load({.mem = hw::Mem::kInput, .dram = kA, .spad = 4, .rows = m * g, .row_len = k, .stride = k});
        b.load({.mem = hw::Mem::kWeight, .dram = kB, .spad = 2, .rows = g * k, .row_len = n, .stride = n});
        b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .spad = 5, .row_len = n, .stride = n * 8});
        const hw::Instr barrier = hw::make_instr(hw::Opcode::kBarrier, 0);
        std::vector<hw::Instr> prog = b.body();
        prog.push_back(barrier);
        namespace f = hw::fields;
        hw::Instr mm = hw::make_instr(hw::Opcode::kMatmulAct, 0);
        hw::set_field(mm, f::matmul_act::kDigits, g);
        hw::set_field(mm, f::matmul_act::kTranspose, trans ? 1 : 0);
        hw::set_field(mm, f::matmul_act::kAAddr, 4);
        hw::set_field(mm, f::matmul_act::kWAddr, 2);
        hw::set_field(mm, f::matmul_act::kDstAddr, 9);
        hw::set_field(mm, f::matmul_act::kRqAddr, 5);
        hw::set_field(mm, f::matmul_act::kOutBits, out_bits);
        hw::set_field(mm, f::matmul_act::kM, m);
        hw::set_field(mm, f::matmul_act::kK, k);
        hw::set_field(mm, f::matmul_act::kN, n);
        prog.push_back(mm);
        prog.push_back(barrier);
        ProgramBuilder st;
        st.store({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kOut, .spad = 9, .rows = trans ? n : m, .row_len = trans ? m : n, .stride = (trans ? m : n) * 4});
        prog.insert(prog.end(), st.body().begin(), st.body().end());
        prog.push_back(hw::make_instr(hw::Opcode::kEnd, 0));
        const RunStats s = ls.run(prog, "MATMUL_ACT digits " + std::to_string(g) +
                                            (trans ? " transposed" : "") + " out_bits " +
                                            std::to_string(out_bits));
        EXPECT_EQ(counter(s, hw::Counter::kPassesAttention),
                  g * words(k, c.array_rows) * words(n, c.array_cols));
        EXPECT_GT(counter(s, hw::Counter::kCyclesAttention), 0u);
        for (const auto& r : s.records) {
          if (r.index == prog.size() - 4) {  // the MATMUL_ACT (then BARRIER, DMA_STORE, END)
            cycles[trans ? 1 : 0] = r.cycles;
          }
        }
      }
    }
    // The transposed copy-out: per block of L rows and one output word, a read per row, one
    // cycle, a vector write per column: ceil(n/C) m + ceil(m/L) n + ceil(n/C) ceil(m/L),
    // where the rows (write-bound here, C > L) take m ceil(n/L) + 2.
    const std::uint64_t nw = words(n, c.array_cols), mw = words(m, c.lanes);
    EXPECT_EQ(cycles[1] - cycles[0], nw * m + mw * n + nw * mw - (m * words(n, c.lanes) + 2))
        << "digits " << g;
  }
}

// MATMUL with dst_stride: the rows of a column tile land inside rows of a wider matrix (the
// words between them keep their contents), like a projection's tiles over a whole sequence.
TEST(AccelRtl, MatmulRowsWithAStride) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed + 1);
  const std::uint32_t m = 5, k = 9, n = 6, lanes = std::uint32_t(dev.hw().lanes);
  const std::uint32_t stride = words(n, lanes) + 3, span = m * stride * lanes;
  ls.write(kA, bytes_of(random_values<std::int8_t>(rng, m * k, -128, 127)));
  ls.write(kB, bytes_of(random_values<std::int8_t>(rng, k * n, -128, 127)));
  ls.write(kOut2, bytes_of(random_values<std::int32_t>(rng, span, -1000, 1000)));
  write_steps(ls, rng, n, 24, 30);
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kOut2, .spad = 40, .row_len = span, .stride = span * 4});
  b.load({.mem = hw::Mem::kInput, .dram = kA, .rows = m, .row_len = k, .stride = k});
  b.load({.mem = hw::Mem::kWeight, .dram = kB, .rows = k, .row_len = n, .stride = n});
  b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .row_len = n, .stride = n * 8});
  for (const std::size_t col : {std::size_t{0}, std::size_t{1}}) {  // two tiles side by side
    MatmulOp mm;
    mm.m = m;
    mm.k = k;
    mm.n = n;
    mm.dst = 40 + col * words(n, lanes);
    mm.dst_stride = stride;
    mm.out_bits = col == 0 ? 12 : 32;
    b.matmul(mm);
  }
  b.store({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kOut, .spad = 40, .row_len = span, .stride = span * 4});
  const RunStats s = ls.run(b.program(), "MATMUL with dst_stride");
  EXPECT_EQ(counter(s, hw::Counter::kPassesMatmul), 2 * words(k, dev.hw().array_rows) *
                                                       words(n, dev.hw().array_cols));
}

TEST(AccelRtl, SoftmaxRowsHaveThreePasses) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed);
  for (const std::uint32_t len : {1u, 2u, 7u, 64u, 133u}) {
    const std::uint32_t rows = 3;
    ls.write(kA, bytes_of(random_values<std::int32_t>(rng, rows * len, -40000, 40000)));
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .spad = 20, .rows = rows, .row_len = len, .stride = len * 4});
    b.vector({.op = hw::Opcode::kSoftmax, .src = 20, .dst = 20, .len = len, .rows = rows});  // in place
    b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut, .spad = 20, .rows = rows, .row_len = len, .stride = len * 2});
    const auto prog = b.program();
    const RunStats s = ls.run(prog, "SOFTMAX len " + std::to_string(len));
    EXPECT_EQ(counter(s, hw::Counter::kPassesSoftmax), 3u * rows);
    EXPECT_GT(counter(s, hw::Counter::kCyclesSoftmax), 0u);
    const InstrRecord r = record_of(s, index_of(prog, hw::Opcode::kSoftmax));
    EXPECT_EQ(r.passes, 3u * rows) << "the SOFTMAX record: 3 passes per row, len " << len;
    EXPECT_EQ(r.unit, 2u);
    EXPECT_EQ(r.cycles, counter(s, hw::Counter::kCyclesSoftmax));
    EXPECT_EQ(r.stall_cycles, 0u);
  }
}

TEST(AccelRtl, RmsNormRowsHaveTwoPasses) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed);
  for (const std::uint32_t len : {1u, 5u, 64u, 172u}) {
    const std::uint32_t rows = 2;
    ls.write(kA, bytes_of(random_values<std::int16_t>(rng, rows * len, -32768, 32767)));
    ls.write(kB, bytes_of(random_values<std::int16_t>(rng, len, -20000, 20000)));
    const std::uint64_t eps = std::uniform_int_distribution<std::uint64_t>(0, 1 << 20)(rng);
    ls.write(kP, bytes_of(std::vector<std::uint64_t>{eps}));
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kA, .rows = rows, .row_len = len, .stride = len * 2});
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB, .spad = 400, .row_len = len, .stride = len * 2});
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .spad = 9, .row_len = 1, .stride = 8});
    b.vector({.op = hw::Opcode::kRmsnorm, .src2 = 400, .dst = 200, .param = 9, .len = len, .rows = rows, .gain_frac_bits = 12});
    b.store({.mem = hw::Mem::kVector, .dram = kOut, .spad = 200, .rows = rows, .row_len = len, .stride = len});
    const auto prog = b.program();
    const RunStats s = ls.run(prog, "RMSNORM len " + std::to_string(len));
    EXPECT_EQ(counter(s, hw::Counter::kPassesNorm), 2u * rows);
    const InstrRecord r = record_of(s, index_of(prog, hw::Opcode::kRmsnorm));
    EXPECT_EQ(r.passes, 2u * rows) << "the RMSNORM record: 2 passes per row, len " << len;
    EXPECT_EQ(r.cycles, counter(s, hw::Counter::kCyclesNorm));
  }
}

// A MATMUL copies its requantisation steps under the array's run when the vector unit is idle
// at its start; a vector instruction issued right behind it waits for that copy-in (a unit
// stall), and a MATMUL that starts under a busy vector unit copies its steps in first. Both
// orders, without BARRIERs, give CpuDevice's results.
TEST(AccelRtl, MatmulCopyInAndVectorInstructionsOverlap) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed + 2);
  const std::uint32_t m = 3, k = 9, n = 7, len = 23, rows = 3;
  ls.write(kA, bytes_of(random_values<std::int8_t>(rng, m * k, -128, 127)));
  ls.write(kB, bytes_of(random_values<std::int8_t>(rng, k * n, -128, 127)));
  write_steps(ls, rng, n, 24, 30);  // MATMUL steps at kP
  ls.write(kOut2, bytes_of(random_values<std::int16_t>(rng, rows * len, -32768, 32767)));
  const std::vector<std::uint64_t> act{encode_param(make_requant(4.0)),
                                       encode_param(make_requant(1.0 / 32768))};
  ls.write(kOut2 + 0x1000, bytes_of(act));
  ProgramBuilder loads;
  loads.load({.mem = hw::Mem::kInput, .dram = kA, .rows = m, .row_len = k, .stride = k});
  loads.load({.mem = hw::Mem::kWeight, .dram = kB, .rows = k, .row_len = n, .stride = n});
  loads.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .spad = 5, .row_len = n, .stride = n * 8});
  loads.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kOut2 + 0x1000, .spad = 40, .row_len = 2, .stride = 16});
  loads.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut2, .rows = rows, .row_len = len, .stride = len * 2});
  ProgramBuilder ops;  // one instruction each, taken apart below
  ops.matmul({.m = m, .k = k, .n = n, .dst = 100, .rq_addr = 5, .out_bits = 12});
  ops.matmul({.m = m, .k = k, .n = n, .dst = 150, .rq_addr = 5, .out_bits = 16});
  ProgramBuilder silu;
  silu.vector({.op = hw::Opcode::kSilu, .param = 40, .len = len, .rows = rows});
  ProgramBuilder stores;
  stores.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut, .rows = rows, .row_len = len, .stride = len * 2});
  stores.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut + 0x400, .spad = 100, .rows = m, .row_len = n, .stride = n * 2});
  stores.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut + 0x800, .spad = 150, .rows = m, .row_len = n, .stride = n * 2});
  // `order`: the instructions between the loads and the stores, without BARRIERs.
  const auto program = [&](std::initializer_list<hw::Instr> order) {
    std::vector<hw::Instr> prog = loads.body();
    prog.push_back(hw::make_instr(hw::Opcode::kBarrier, 0));
    prog.insert(prog.end(), order);
    prog.push_back(hw::make_instr(hw::Opcode::kBarrier, 0));
    prog.insert(prog.end(), stores.body().begin(), stores.body().end());
    prog.push_back(hw::make_instr(hw::Opcode::kEnd, 0));
    return prog;
  };
  // The vector unit is idle at the MATMUL's start: its steps are copied under the run, and
  // SILU waits for that copy-in (more unit stall than with a BARRIER between the two, where
  // the loads' and stores' waits for the DMA are the same), then runs beside it.
  const hw::Instr barrier = hw::make_instr(hw::Opcode::kBarrier, 0);
  const RunStats apart = ls.run(program({ops.body()[0], barrier, silu.body()[0]}), "apart");
  const RunStats first = ls.run(program({ops.body()[0], silu.body()[0]}), "MATMUL, then SILU");
  EXPECT_GT(counter(first, hw::Counter::kUnitStall), counter(apart, hw::Counter::kUnitStall))
      << "SILU waits for the copy-in";
  EXPECT_LT(counter(first, hw::Counter::kTotalCycles), counter(apart, hw::Counter::kTotalCycles))
      << "and then runs beside the MATMUL";
  // The MATMUL starts under SILU: its steps are copied in first.
  const RunStats second = ls.run(program({silu.body()[0], ops.body()[1]}), "SILU, then MATMUL");
  EXPECT_GT(counter(second, hw::Counter::kBusyMatmul), 0u);
}

TEST(AccelRtl, SiluRopeAddMulEmbed) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed);
  const std::uint32_t len = 23, rows = 3;
  {  // SILU: x as Q.8, sigmoid Q0.15
    ls.write(kA, bytes_of(random_values<std::int16_t>(rng, rows * len, -32768, 32767)));
    const std::vector<std::uint64_t> rq{encode_param(make_requant(4.0)),
                                        encode_param(make_requant(1.0 / 32768))};
    ls.write(kP, bytes_of(rq));
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kA, .rows = rows, .row_len = len, .stride = len * 2});
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .spad = 30, .row_len = 2, .stride = 16});
    b.vector({.op = hw::Opcode::kSilu, .param = 30, .len = len, .rows = rows});
    b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut, .rows = rows, .row_len = len, .stride = len * 2});
    const RunStats s = ls.run(b.program(), "SILU");
    EXPECT_EQ(counter(s, hw::Counter::kPassesOtherVector), rows);
  }
  {  // ROPE: heads of 12-bit values, Q1.14 tables of one position
    const std::uint32_t hs = 8, heads = 4, half = hs / 2;
    ls.write(kA, bytes_of(random_values<std::int16_t>(rng, heads * hs, -2048, 2047)));
    std::vector<std::int16_t> cos(half), sin(half);
    for (std::uint32_t j = 0; j < half; ++j) {
      const double ang = 0.37 * (j + 1);
      cos[j] = std::int16_t(std::nearbyint(std::cos(ang) * 16384));
      sin[j] = std::int16_t(std::nearbyint(std::sin(ang) * 16384));
    }
    ls.write(kB, bytes_of(cos));
    ls.write(kB + 64, bytes_of(sin));
    const std::uint32_t tab = 500;
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kA, .rows = heads, .row_len = hs, .stride = hs * 2});
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB, .spad = tab, .row_len = half, .stride = half * 2});
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB + 64, .spad = tab + words(half, dev.hw().lanes), .row_len = half, .stride = half * 2});
    b.vector({.op = hw::Opcode::kRope, .src2 = tab, .len = hs, .rows = heads});
    b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut, .rows = heads, .row_len = hs, .stride = hs * 2});
    ls.run(b.program(), "ROPE");
  }
  {  // ADD (saturating), MUL (per-channel steps), EMBED (one step per row)
    ls.write(kA, bytes_of(random_values<std::int16_t>(rng, rows * len, -32768, 32767)));
    ls.write(kB, bytes_of(random_values<std::int16_t>(rng, rows * len, -32768, 32767)));
    write_steps(ls, rng, len, 14, 24);
    write_steps(ls, rng, rows, 20, 30, kP + 0x1000);
    const std::uint32_t wl = words(len, dev.hw().lanes);
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kA, .rows = rows, .row_len = len, .stride = len * 2});
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB, .spad = 100, .rows = rows, .row_len = len, .stride = len * 2});
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .row_len = len, .stride = len * 8});
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP + 0x1000, .spad = 100, .row_len = rows, .stride = rows * 8});
    b.vector({.op = hw::Opcode::kAdd, .src2 = 100, .dst = 200, .len = len, .rows = rows});
    b.vector({.op = hw::Opcode::kMul, .src2 = 100, .dst = 300, .len = len, .rows = rows});
    b.vector({.op = hw::Opcode::kEmbed, .src = 100, .dst = 400, .param = 100, .len = len, .rows = rows});  // the low 8 bits of b
    b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut, .spad = 200, .rows = rows, .row_len = len, .stride = len * 2});
    b.store({.mem = hw::Mem::kVector, .dram = kOut + 0x1000, .spad = 300, .rows = rows, .row_len = len, .stride = len});
    b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut + 0x2000, .spad = 400, .rows = rows, .row_len = len, .stride = len * 2});
    b.vector({.op = hw::Opcode::kAdd, .src2 = 100, .len = len, .rows = rows});  // in place
    b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut + 0x3000, .rows = rows, .row_len = wl * 2, .stride = wl * 4});
    const RunStats s = ls.run(b.program(), "ADD, MUL, EMBED");
    EXPECT_EQ(counter(s, hw::Counter::kPassesOtherVector), 4u * rows);
  }
}

TEST(AccelRtl, AttentionScoreAndValue) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed);
  for (const std::uint32_t t_len : {1u, 2u, 9u, 40u}) {
    const std::uint32_t hs = 8;
    const std::uint32_t wh = words(hs, dev.hw().lanes);
    ls.write(kA, bytes_of(random_values<std::int16_t>(rng, hs, -2048, 2047)));          // q
    ls.write(kB, bytes_of(random_values<std::int16_t>(rng, t_len * hs, -2048, 2047)));  // K
    ls.write(kB + 0x4000, bytes_of(random_values<std::int8_t>(rng, t_len * hs, -128, 127)));
    const std::vector<std::uint64_t> rq{encode_param(make_requant(1.0 / 256)),
                                        encode_param(make_requant(1.0 / 32768))};
    ls.write(kP, bytes_of(rq));
    const std::uint32_t q = 0, kwin = 10, vwin = kwin + t_len * wh, sc = vwin + t_len * wh;
    const std::uint32_t pr = sc + words(t_len, dev.hw().lanes),
                        out = pr + words(t_len, dev.hw().lanes);
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kA, .spad = q, .row_len = hs, .stride = hs * 2});
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB, .spad = kwin, .rows = t_len, .row_len = hs, .stride = hs * 2});
    b.load({.mem = hw::Mem::kVector, .dram = kB + 0x4000, .spad = vwin, .rows = t_len, .row_len = hs, .stride = hs});
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .row_len = 2, .stride = 16});
    b.vector({.op = hw::Opcode::kAttnScore, .src = q, .src2 = kwin, .dst = sc, .len = hs, .rows = t_len});
    b.vector({.op = hw::Opcode::kSoftmax, .src = sc, .dst = pr, .len = t_len});
    b.vector({.op = hw::Opcode::kAttnValue, .src = pr, .src2 = vwin, .dst = out, .param = 1, .len = hs, .rows = t_len});
    b.store({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kOut, .spad = sc, .row_len = t_len, .stride = t_len * 4});
    b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut + 0x1000, .spad = pr, .row_len = t_len, .stride = t_len * 2});
    b.store({.mem = hw::Mem::kVector, .dram = kOut2, .spad = out, .row_len = hs, .stride = hs});
    const RunStats s = ls.run(b.program(), "ATTN t_len " + std::to_string(t_len));
    EXPECT_EQ(counter(s, hw::Counter::kPassesAttention), 2u * t_len) << "one per cached position";
  }
}

// The class counters split the busy cycles exactly (the units never overlap: BARRIERs), the
// busy and retired counts are consistent, and the records add up to the counters.
TEST(AccelRtl, CountersAndRecordsAddUp) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed);
  ls.write(kA, bytes_of(random_values<std::int32_t>(rng, 256, -30000, 30000)));
  ls.write(kB, bytes_of(random_values<std::int8_t>(rng, 64 * 8, -128, 127)));
  write_steps(ls, rng, 8, 30, 40);
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .rows = 2, .row_len = 64, .stride = 256});
  b.set_layer(1);
  b.vector({.op = hw::Opcode::kSoftmax, .len = 64, .rows = 2});
  b.set_layer(2);
  b.load({.mem = hw::Mem::kInput, .dram = kB, .row_len = 64, .stride = 64});
  b.load({.mem = hw::Mem::kWeight, .dram = kB, .rows = 64, .row_len = 8, .stride = 8});
  b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .row_len = 8, .stride = 64});
  MatmulOp mm;
  mm.k = 64;
  mm.n = 8;
  mm.dst = 200;
  b.set_layer(3);
  b.matmul(mm);
  b.set_layer(4);
  b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut, .rows = 2, .row_len = 64, .stride = 128});
  b.raw(hw::make_instr(hw::Opcode::kNop, 4));
  b.store({.mem = hw::Mem::kVector, .dram = kOut + 1024, .spad = 200, .row_len = 8, .stride = 8});
  const auto prog = b.program();
  const RunStats s = ls.run(prog, "counters");
  const std::uint64_t total = counter(s, hw::Counter::kTotalCycles);
  std::uint64_t classes = 0;
  for (auto c = std::size_t(hw::Counter::kCyclesMatmul);
       c <= std::size_t(hw::Counter::kCyclesControl); ++c) {
    classes += s.counters[c];
  }
  EXPECT_EQ(classes, total);
  EXPECT_EQ(s.instructions, prog.size());
  EXPECT_EQ(counter(s, hw::Counter::kPassesSoftmax), 6u);
  EXPECT_EQ(counter(s, hw::Counter::kPassesControl), 0u);
  EXPECT_LE(counter(s, hw::Counter::kBusyDma) + counter(s, hw::Counter::kBusyMatmul) +
                counter(s, hw::Counter::kBusyVector),
            total);
  EXPECT_EQ(counter(s, hw::Counter::kBusyMatmul), counter(s, hw::Counter::kCyclesMatmul));
  EXPECT_GT(counter(s, hw::Counter::kUnitStall), 0u) << "back-to-back DMAs wait for the DMA";
  // Records: one per DMA, matmul and vector instruction. The back-to-back DMAs issue in
  // the cycle their predecessor's record is presented; each record still has its own index.
  const auto sums = check_records(prog, s, "counters");
  std::uint64_t control = 0;
  for (const hw::Instr& in : prog) {
    const auto op = static_cast<hw::Opcode>(hw::get_field(in, hw::fields::kOpcode));
    control += hw::unit_of(op) == hw::Unit::kControl ? 1 : 0;
  }
  EXPECT_EQ(control, 6u) << "4 BARRIERs, 1 NOP, END";
  EXPECT_EQ(s.records.size(), prog.size() - control);
  std::array<std::uint64_t, 3> busy{};
  for (const InstrRecord& r : s.records) {
    busy.at(r.unit) += r.cycles;
  }
  EXPECT_EQ(busy[0], counter(s, hw::Counter::kBusyDma));
  EXPECT_EQ(busy[1], counter(s, hw::Counter::kBusyMatmul));
  EXPECT_EQ(busy[2], counter(s, hw::Counter::kBusyVector));
  EXPECT_EQ(sums.passes[std::size_t(hw::OpClass::kSoftmax)], 6u);
  EXPECT_EQ(record_of(s, index_of(prog, hw::Opcode::kSoftmax)).passes, 6u);
  EXPECT_EQ(record_of(s, index_of(prog, hw::Opcode::kMatmul)).passes,
            words(64, dev.hw().array_rows) * words(8, dev.hw().array_cols));
}

// A DRAM latency of 2 us (200 cycles): each DMA instruction waits for its first response,
// and its record shows that wait as stall cycles; the other units have no stall signal.
TEST(AccelRtl, DmaRecordsCountMemoryStalls) {
  SimOptions o = options();
  o.dram_latency_ns = 2000.0;
  SimDevice dev(sim::make_accel_model_tiny(), o);
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed);
  ls.write(kA, random_values<std::uint8_t>(rng, 1024, 0, 255));
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kInput, .dram = kA, .rows = 2, .row_len = 16, .stride = 16});
  b.load({.mem = hw::Mem::kWeight, .dram = kA + 64, .rows = 16, .row_len = 4, .stride = 4});
  MatmulOp mm;
  mm.m = 2;
  mm.k = 16;
  mm.n = 4;
  mm.requant = false;
  b.matmul(mm);
  b.store({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kOut, .rows = 2, .row_len = 4, .stride = 16});
  const auto prog = b.program();
  const RunStats s = ls.run(prog, "slow DRAM records");
  std::uint64_t dma_stall = 0;
  for (const InstrRecord& r : s.records) {
    if (r.unit == 0) {
      EXPECT_GE(r.stall_cycles, 150u) << "DMA instruction " << r.index << " waits ~200 cycles";
      dma_stall += r.stall_cycles;
    } else {
      EXPECT_EQ(r.stall_cycles, 0u) << "instruction " << r.index;
    }
  }
  EXPECT_EQ(s.records.size(), 4u);
  // The memory-stall counter also counts the program fetch.
  EXPECT_LE(dma_stall, counter(s, hw::Counter::kMemStall));
  const InstrRecord m = record_of(s, index_of(prog, hw::Opcode::kMatmul));
  EXPECT_EQ(m.passes, words(16, dev.hw().array_rows) * words(4, dev.hw().array_cols));
  EXPECT_EQ(m.cycles, counter(s, hw::Counter::kBusyMatmul));
}

// LoopDevice (no SystemC) returns the same kind of records.
TEST(AccelRtl, LoopDeviceReturnsRecords) {
  sim::LoopDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  std::mt19937 rng(kSeed);
  ls.write(kA, bytes_of(random_values<std::int32_t>(rng, 2 * 40, -40000, 40000)));
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .rows = 2, .row_len = 40, .stride = 160});
  b.vector({.op = hw::Opcode::kSoftmax, .len = 40, .rows = 2});
  b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut, .rows = 2, .row_len = 40, .stride = 80});
  const auto prog = b.program();
  const RunStats s = ls.run(prog, "LoopDevice");
  ASSERT_EQ(s.records.size(), 3u);
  EXPECT_EQ(record_of(s, index_of(prog, hw::Opcode::kSoftmax)).passes, 6u);
  EXPECT_EQ(record_of(s, 0).passes, 2u) << "one DMA pass per row";
}

TEST(AccelRtl, BadInstructionsStopTheRunWithTheirIndex) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  Lockstep ls(dev, kDram);
  const auto expect_error = [&](const std::vector<hw::Instr>& prog, const std::string& what,
                                std::uint32_t index) {
    dev.write_dram(ls.prog_addr(),
                   {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
    try {
      (void)dev.run(ls.prog_addr(), std::uint32_t(prog.size()));
      ADD_FAILURE() << "expected " << what;
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
      EXPECT_NE(msg.find("instruction " + std::to_string(index)), std::string::npos) << msg;
    }
  };
  ProgramBuilder p1;
  p1.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .row_len = 4, .stride = 16});
  hw::Instr unknown = hw::make_instr(hw::Opcode::kNop, 0);
  hw::set_field(unknown, hw::fields::kOpcode, 0x7F);
  p1.raw(unknown);
  expect_error(p1.program(), "bad_opcode", 1);  // raw(): no BARRIER before it
  ProgramBuilder p2;
  MatmulOp mm;
  mm.k = 0;
  p2.matmul(mm);
  expect_error(p2.program(), "bad_operand", 0);
  ProgramBuilder p3;
  p3.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .spad = std::uint32_t(dev.hw().vector_depth) - 1, .row_len = 8, .stride = 32});
  expect_error(p3.program(), "spad_range", 0);
  ProgramBuilder p4;
  p4.vector({.op = hw::Opcode::kRope, .len = 7});
  expect_error(p4.program(), "bad_operand", 0);
  ProgramBuilder p5;  // result rows closer than a row's words
  MatmulOp narrow;
  narrow.m = 2;
  narrow.k = 4;
  narrow.n = 8;
  narrow.dst_stride = 1;
  p5.matmul(narrow);
  expect_error(p5.program(), "bad_operand", 0);
  // The device still runs programs after errors.
  ProgramBuilder ok;
  ok.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .row_len = 4, .stride = 16});
  ok.store({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kOut, .row_len = 4, .stride = 16});
  ls.run(ok.program(), "after errors");
}

TEST(AccelRtl, RtlWatchdogStopsALongRun) {
  SimOptions o = options();
  o.rtl_watchdog = 40;
  SimDevice dev(sim::make_accel_model_tiny(), o);
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .rows = 8, .row_len = 64, .stride = 256});
  const auto prog = b.program();
  dev.write_dram(0x30000, {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
  try {
    (void)dev.run(0x30000, std::uint32_t(prog.size()));
    FAIL() << "expected the watchdog";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("watchdog"), std::string::npos) << e.what();
  }
}

// SimOptions::max_cycles ends a run that takes too long, names the busy unit and returns the
// counters so far; the device stays usable.
TEST(AccelRtl, SimulationWatchdogNamesTheBusyUnit) {
  SimOptions o = options();
  o.max_cycles = 300;
  SimDevice dev(sim::make_accel_model_tiny(), o);
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kWeight, .dram = kA, .rows = 64, .row_len = 40, .stride = 40});
  MatmulOp mm;
  mm.k = 64;
  mm.n = 40;
  mm.requant = false;
  b.matmul(mm);
  const auto prog = b.program();
  dev.write_dram(0x30000, {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
  try {
    (void)dev.run(0x30000, std::uint32_t(prog.size()));
    FAIL() << "expected a timeout";
  } catch (const sim::SimTimeout& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("300 cycles"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dma"), std::string::npos) << msg;
    EXPECT_NE(msg.find("DMA_LOAD"), std::string::npos) << msg;
    EXPECT_TRUE(e.stats().has_cycles);
    EXPECT_GE(counter(e.stats(), hw::Counter::kTotalCycles), 290u);
  }
  ProgramBuilder ok;
  ok.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .row_len = 4, .stride = 16});
  const auto p2 = ok.program();
  dev.write_dram(0x30000, {reinterpret_cast<const std::uint8_t*>(p2.data()), p2.size() * 16});
  EXPECT_NO_THROW((void)dev.run(0x30000, std::uint32_t(p2.size())));
}

// The partial counters of a stopped run are one consistent snapshot: no cycle counter exceeds
// the total, even when the DRAM never answers and the DMA stalls in every cycle (the counters
// were read while the run went on, and mem_stall came out above total).
TEST(AccelRtl, WatchdogCountersNeverExceedTheTotal) {
  SimOptions o = options();
  o.max_cycles = 3000;
  o.dram_latency_ns = 1e9;  // a DRAM that never answers within the run
  SimDevice dev(sim::make_accel_model_tiny(), o);
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .row_len = 64, .stride = 256});
  const auto prog = b.program();
  dev.write_dram(0x30000, {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
  try {
    (void)dev.run(0x30000, std::uint32_t(prog.size()));
    FAIL() << "expected a timeout";
  } catch (const sim::SimTimeout& e) {
    const std::uint64_t total = counter(e.stats(), hw::Counter::kTotalCycles);
    EXPECT_GE(total, 2900u);
    for (const hw::Counter c :
         {hw::Counter::kBusyMatmul, hw::Counter::kBusyVector, hw::Counter::kBusyDma,
          hw::Counter::kCyclesDma, hw::Counter::kCyclesControl, hw::Counter::kMemStall,
          hw::Counter::kUnitStall, hw::Counter::kDmaHidden, hw::Counter::kDmaExposed}) {
      EXPECT_LE(counter(e.stats(), c), total) << "counter " << int(c);
    }
    EXPECT_GT(counter(e.stats(), hw::Counter::kMemStall), total / 2);
  }
}

// Watchdog and error messages name an instruction by opcode, index and layer; the compiler's
// classifier layer (n_layers, SimOptions::head_layer) reads "head".
TEST(AccelRtl, InstructionDescriptionNamesTheHead) {
  const hw::Instr head = hw::make_instr(hw::Opcode::kMatmul, 5);
  const hw::Instr last = hw::make_instr(hw::Opcode::kMatmul, 4);
  EXPECT_EQ(sim::describe_instruction(head, 7), "(MATMUL #7, layer 5)");
  EXPECT_EQ(sim::describe_instruction(head, 7, 5), "(MATMUL #7, head)");
  EXPECT_EQ(sim::describe_instruction(last, 7, 5), "(MATMUL #7, layer 4)");
}

// The clock gates (small and base; tiny is built ungated, like an FPGA): a DMA, a MATMUL and a
// SOFTMAX each stopped while busy, by the simulation watchdog (CTRL.soft_reset) or by the RTL
// watchdog (the controller aborts the units), leave the device usable: the next program's
// DRAM matches CpuDevice.
TEST(AccelRtl, GatedUnitsRecoverFromAStoppedRun) {
  constexpr std::uint64_t kLimit = 1500;  // cycles: every long instruction below takes more
  for (const bool rtl_watchdog : {false, true}) {
    SimOptions o = options();
    if (rtl_watchdog) {
      o.rtl_watchdog = kLimit;
    } else {
      o.max_cycles = kLimit;
    }
    sim::LoopDevice dev(sim::make_accel_model_small(), o);
    Lockstep ls(dev, kDram);
    std::mt19937 rng(kSeed);
    ProgramBuilder long_dma;  // 32 KB: 4096 beats
    long_dma.load({.mem = hw::Mem::kWeight, .dram = kA, .rows = 512, .row_len = 64, .stride = 64});
    ProgramBuilder long_matmul;  // 16 x 256 x 128 on 8 x 8: 512 tiles of 16 cycles
    MatmulOp big;
    big.m = 16;
    big.k = 256;
    big.n = 128;
    big.requant = false;
    long_matmul.matmul(big);
    ProgramBuilder long_softmax;  // one 4096-element row: about 2,100 cycles
    long_softmax.vector({.op = hw::Opcode::kSoftmax, .len = 4096});
    const std::pair<const char*, const ProgramBuilder*> cases[] = {
        {"dma", &long_dma}, {"matmul", &long_matmul}, {"vector", &long_softmax}};
    for (const auto& [unit, builder] : cases) {
      const std::string what = std::string(rtl_watchdog ? "RTL watchdog, " : "max_cycles, ") + unit;
      const auto prog = builder->program();
      ls.write(ls.prog_addr(), {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
      try {
        (void)dev.run(ls.prog_addr(), std::uint32_t(prog.size()));
        ADD_FAILURE() << what << ": expected the run to be stopped";
      } catch (const std::runtime_error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(rtl_watchdog ? "watchdog" : unit), std::string::npos) << what << ": "
                                                                                  << msg;
      }
      // A short program on every gated unit: SOFTMAX and MATMUL round trips.
      const auto logits = random_values<std::int32_t>(rng, 64, -40000, 40000);
      const auto a = random_values<std::int8_t>(rng, 2 * 24, -128, 127);
      const auto wt = random_values<std::int8_t>(rng, 24 * 12, -128, 127);
      ls.write(kA, bytes_of(logits));
      ls.write(kB, bytes_of(a));
      ls.write(kB + 0x1000, bytes_of(wt));
      ProgramBuilder ok;
      ok.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .spad = 20, .row_len = 64, .stride = 256});
      ok.vector({.op = hw::Opcode::kSoftmax, .src = 20, .dst = 20, .len = 64});
      ok.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut, .spad = 20, .row_len = 64, .stride = 128});
      ok.load({.mem = hw::Mem::kInput, .dram = kB, .rows = 2, .row_len = 24, .stride = 24});
      ok.load({.mem = hw::Mem::kWeight, .dram = kB + 0x1000, .rows = 24, .row_len = 12, .stride = 12});
      MatmulOp mm;
      mm.m = 2;
      mm.k = 24;
      mm.n = 12;
      mm.dst = 40;
      mm.requant = false;
      ok.matmul(mm);
      ok.store({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kOut2, .spad = 40, .rows = 2, .row_len = 12, .stride = 48});
      (void)ls.run(ok.program(), what + ", then a short program");
    }
  }
}

// A slow DRAM channel: 0.1 byte/ns = 8 cycles per beat at 100 MHz.
TEST(AccelRtl, DramBandwidthLimitsTheDma) {
  SimOptions o = options();
  o.dram_bytes_per_ns = 0.1;
  SimDevice dev(sim::make_accel_model_tiny(), o);
  Lockstep ls(dev, kDram);
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .row_len = 512, .stride = 2048});  // 256 beats
  const RunStats s = ls.run(b.program(), "slow DRAM");
  EXPECT_GE(counter(s, hw::Counter::kBusyDma), 256u * 8);
  EXPECT_GE(counter(s, hw::Counter::kMemStall), 256u * 6);
}

// The waveform's time is the simulated clock's: picoseconds, one period per cycle (it was
// 10 ps per cycle, 1000x off, whatever the clock). At 50 MHz, not the default 100 (one
// SimDevice per process).
TEST(AccelRtl, FstTraceIsWrittenInTheClocksTime) {
  for (const double mhz : {50.0}) {
    const auto path = std::filesystem::temp_directory_path() / "passim_accel_rtl_test.fst";
    std::filesystem::remove(path);
    std::uint64_t total = 0;
    {
      SimOptions o = options();
      o.trace_path = path.string();
      o.clock_mhz = mhz;
      SimDevice dev(sim::make_accel_model_tiny(true), o);
      Lockstep ls(dev, kDram);
      ProgramBuilder b;
      b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .row_len = 16, .stride = 64});
      total = counter(ls.run(b.program(), "traced"), hw::Counter::kTotalCycles);
    }
    ASSERT_TRUE(std::filesystem::exists(path));
    EXPECT_GT(std::filesystem::file_size(path), 1000u);
    void* reader = fstReaderOpen(path.string().c_str());
    ASSERT_NE(reader, nullptr);
    const int exponent = fstReaderGetTimescale(reader);
    const std::uint64_t end = fstReaderGetEndTime(reader);
    fstReaderClose(reader);
    const auto period_ps = std::uint64_t(1e6 / mhz);
    EXPECT_EQ(exponent, -12) << "timescale 1e" << exponent << " s, expected 1 ps";
    // The waveform covers reset, the program fetch and the run: at least the run's cycles.
    EXPECT_GE(end, total * period_ps) << mhz << " MHz, " << total << " cycles";
    EXPECT_LT(end, (total + 200) * period_ps) << mhz << " MHz, " << total << " cycles";
    std::filesystem::remove(path);
  }
}

// --trace-window: the waveform starts at the window's first cycle and ends in its last.
TEST(AccelRtl, FstTraceWindow) {
  const auto path = std::filesystem::temp_directory_path() / "passim_accel_rtl_window.fst";
  std::filesystem::remove(path);
  constexpr std::uint64_t kFirst = 40, kEnd = 120, kPeriodPs = 10'000;  // 100 MHz
  {
    SimOptions o = options();
    o.trace_path = path.string();
    o.trace_window = {kFirst, kEnd};
    SimDevice dev(sim::make_accel_model_tiny(true), o);
    Lockstep ls(dev, kDram);
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .rows = 8, .row_len = 64,
            .stride = 256});
    const RunStats st = ls.run(b.program(), "traced window");
    ASSERT_GT(counter(st, hw::Counter::kTotalCycles), kEnd) << "the run must outlast the window";
  }
  void* reader = fstReaderOpen(path.string().c_str());
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(fstReaderGetStartTime(reader), kFirst * kPeriodPs);
  EXPECT_EQ(fstReaderGetEndTime(reader), (kEnd - 1) * kPeriodPs + kPeriodPs / 2);
  fstReaderClose(reader);
  std::filesystem::remove(path);
}

// The CLI's defaults of the memory timing are the simulator's.
TEST(AccelRtl, CliMemoryTimingDefaultsAreTheSimulators) {
  const passim::app::RtlOptions cli;
  const SimOptions sim;
  EXPECT_EQ(cli.clock_mhz, sim.clock_mhz);
  EXPECT_EQ(cli.dram_latency_ns, sim.dram_latency_ns);
  EXPECT_EQ(cli.dram_bytes_per_ns, sim.dram_bytes_per_ns);
}

TEST(AccelRtl, OneSimDevicePerProcess) {
  SimDevice dev(sim::make_accel_model_tiny(), options());
  ProgramBuilder b;
  const auto prog = b.program();
  dev.write_dram(0, {reinterpret_cast<const std::uint8_t*>(prog.data()), 16});
  (void)dev.run(0, 1);
  EXPECT_THROW(SimDevice(sim::make_accel_model_tiny(), options()), std::runtime_error);
}

}  // namespace

// --trace-scope's units on the command line are the ones the model builder maps to instances.
TEST(AccelRtl, CliTraceScopeUnitsAreTheSimulators) {
  const auto scopes = passim::sim::trace_scopes();
  ASSERT_EQ(scopes.size(), passim::app::kTraceScopeUnits.size());
  for (std::size_t i = 0; i < scopes.size(); ++i) {
    EXPECT_EQ(scopes[i].first, passim::app::kTraceScopeUnits[i]) << "unit " << i;
  }
}
