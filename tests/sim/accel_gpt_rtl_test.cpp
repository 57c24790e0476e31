// SPDX-License-Identifier: Apache-2.0
// The ISA additions for GPT-style models on the whole accelerator (psm_accel, on tiny and
// small, stepped by LoopDevice) against the ISA reference CpuDevice: MATMUL with the parameter
// entries' biases, DMA_STORE `requant` to int8, int16 and int32, LAYERNORM, BATCHNORM and GELU
// (every int8 input). The DRAM after every program
// must equal CpuDevice's byte for byte; every run's records must show the passes of the ISA's
// passes column (instr_passes) and add up to the class counters, and the class cycle counters
// to the total.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "accel_harness.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/sim/sim_device.hpp"

namespace {

using namespace passim;
using passim::sim::LoopDevice;
using passim::sim::test::bytes_of;
using passim::sim::test::index_of;
using passim::sim::test::Lockstep;
using passim::encode_param;
using passim::ProgramBuilder;
using passim::sim::test::random_values;
using passim::sim::test::record_of;

constexpr std::uint64_t kDram = 256 * 1024;

// DRAM regions of the programs.
constexpr std::uint32_t kA = 0x0000;     // operand a / rows
constexpr std::uint32_t kB = 0x8000;     // weights, gains
constexpr std::uint32_t kP = 0x10000;    // parameter entries
constexpr std::uint32_t kOut = 0x18000;  // results
constexpr std::uint32_t kOut2 = 0x20000;

constexpr std::int32_t kBiasMax = (1 << (kRequantBiasBits - 1)) - 1;
constexpr std::int32_t kBiasMin = -(1 << (kRequantBiasBits - 1));

struct Config {
  const char* name;
  std::function<std::unique_ptr<sim::AccelModel>()> make;
};

std::ostream& operator<<(std::ostream& os, const Config& c) { return os << c.name; }

std::uint32_t words(std::uint32_t n, std::size_t per_word) {
  return std::uint32_t((n + per_word - 1) / per_word);
}

std::uint64_t counter(const RunStats& s, hw::Counter c) { return s.counters.at(std::size_t(c)); }

/// These programs come from a builder without the configuration: a BARRIER at every change of
/// unit, so no DMA hides behind compute and the class counters add up to the total exactly.
void expect_classes_sum_to_total(const RunStats& s, const std::string& what) {
  sim::test::expect_classes_add_up(s, what);
  EXPECT_EQ(counter(s, hw::Counter::kDmaHidden), 0u) << what;
}

class AccelGptRtl : public ::testing::TestWithParam<Config> {
 protected:
  AccelGptRtl() : dev_(GetParam().make(), options()), ls_(dev_, kDram) {}

  static sim::SimOptions options() {
    sim::SimOptions o;
    o.dram_bytes = kDram;
    return o;
  }

  /// Runs `prog` on both devices (Lockstep compares the DRAMs and checks the records).
  RunStats run(const std::vector<hw::Instr>& prog, const std::string& what) {
    const RunStats s = ls_.run(prog, std::string(GetParam().name) + ": " + what);
    expect_classes_sum_to_total(s, what);
    return s;
  }

  [[nodiscard]] const hw::HwConfig& cfg() const noexcept { return dev_.hw(); }

  LoopDevice dev_;
  Lockstep ls_;
};

// MATMUL: the parameter entries' biases at both ends of the 26-bit range, on sums of both
// signs, through identity, halving and saturating steps, to 8, 16 and 32 bits.
TEST_P(AccelGptRtl, MatmulAddsTheBiasOfEachColumn) {
  std::mt19937 rng(4242);
  struct Shape {
    std::uint32_t m, k, n, out_bits;
  };
  for (const Shape sh :
       {Shape{3, 37, 13, 32}, Shape{2, 1000, 8, 32}, Shape{5, 9, 11, 16}, Shape{4, 64, 6, 8}}) {
    auto a = random_values<std::int8_t>(rng, sh.m * sh.k, -128, 127);
    auto wt = random_values<std::int8_t>(rng, sh.k * sh.n, -128, 127);  // W^T (k, n)
    for (std::uint32_t i = 0; i < sh.k; ++i) {
      a[i] = 127;  // row 0 times column 0: the largest positive sum, k * 127 * 127
      a[sh.k + i] = -128;
      wt[i * sh.n] = 127;
    }
    const std::vector<std::int32_t> biases{kBiasMax, kBiasMin, kBiasMin + 1, -1, 0, 1, kBiasMax};
    const std::vector<Requant> steps{{1 << 30, 30},    {1 << 30, 31}, {0x7FFF'FFFF, 31},
                                     {0x7FFF'FFFF, 0}, {1 << 30, 38}, {987654321, 33}};
    std::vector<std::uint64_t> e(sh.n);
    for (std::uint32_t c = 0; c < sh.n; ++c) {
      Requant rq = steps[c % steps.size()];
      rq.bias = c < biases.size()
                    ? biases[c]
                    : std::uniform_int_distribution<std::int32_t>(kBiasMin, kBiasMax)(rng);
      e[c] = encode_param(rq);
    }
    ls_.write(kA, bytes_of(a));
    ls_.write(kB, bytes_of(wt));
    ls_.write(kP, bytes_of(e));
    const int esize = sh.out_bits == 32 ? 2 : sh.out_bits == 16 ? 1 : 0;
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kInput, .dram = kA, .rows = sh.m, .row_len = sh.k, .stride = sh.k});
    b.load({.mem = hw::Mem::kWeight, .dram = kB, .rows = sh.k, .row_len = sh.n, .stride = sh.n});
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .spad = 7, .row_len = sh.n, .stride = sh.n * 8});
    MatmulOp mm;
    mm.m = sh.m;
    mm.k = sh.k;
    mm.n = sh.n;
    mm.dst = 5;
    mm.rq_addr = 7;
    mm.out_bits = sh.out_bits;
    b.matmul(mm);
    b.store({.mem = hw::Mem::kVector, .elem_log2 = unsigned(esize), .dram = kOut, .spad = 5, .rows = sh.m, .row_len = sh.n, .stride = sh.n << esize});
    const auto prog = b.program();
    run(prog, "MATMUL " + std::to_string(sh.m) + "x" + std::to_string(sh.k) + "x" +
                  std::to_string(sh.n) + " out_bits " + std::to_string(sh.out_bits));
    if (sh.out_bits == 32) {  // column 0 has the identity step and the largest bias
      std::int32_t got = 0;
      dev_.read_dram(kOut, {reinterpret_cast<std::uint8_t*>(&got), 4});
      std::int64_t sum = 0;
      for (std::uint32_t i = 0; i < sh.k; ++i) {
        sum += std::int64_t{a[i]} * wt[i * sh.n];
      }
      EXPECT_EQ(got, sum + kBiasMax) << "the bias is added to row 0, column 0";
    }
  }
}

// DMA_STORE requant: int32 lanes over the whole range through param[0] to int8, int16 and
// int32, saturating at both ends, with rows of odd lengths at odd DRAM addresses and strides;
// the entry's bias bits are ignored. A plain store afterwards is unaffected.
TEST_P(AccelGptRtl, DmaStoreRequantSaturatesToEveryWidth) {
  std::mt19937 rng(777);
  for (const std::uint32_t len : {1u, 3u, 16u, 133u}) {
    const std::uint32_t rows = 3;
    auto x = random_values<std::int32_t>(rng, rows * len, std::numeric_limits<std::int32_t>::min(),
                                         std::numeric_limits<std::int32_t>::max());
    const std::vector<std::int32_t> corners{std::numeric_limits<std::int32_t>::min(),
                                            std::numeric_limits<std::int32_t>::max(),
                                            -257,
                                            255,
                                            -65537,
                                            65535,
                                            -3,
                                            3,
                                            -1,
                                            0};
    for (std::size_t i = 0; i < corners.size() && i < x.size(); ++i) {
      x[i] = corners[i];
    }
    // x / 2 (ties up): every int32 lane reaches both ends of int8 and int16, and 3 / 2 ties.
    const Requant rq{1 << 30, 31, kBiasMax};
    ls_.write(kA, bytes_of(x));
    ls_.write(kP, bytes_of(std::vector<std::uint64_t>{encode_param(rq)}));
    const std::uint32_t wl = words(len, cfg().lanes);
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .spad = 40, .rows = rows, .row_len = len, .stride = len * 4});
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .row_len = 1, .stride = 8});
    b.store({.mem = hw::Mem::kVector, .dram = kOut + 3, .spad = 40, .rows = rows, .row_len = len, .stride = len + 5, .requant = true});
    b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut + 0x1001, .spad = 40, .rows = rows, .row_len = len, .stride = 2 * len + 3, .requant = true});
    b.store({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kOut + 0x2002, .spad = 40 + wl, .rows = rows - 1, .row_len = len, .stride = 4 * len + 2, .requant = true});
    b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kOut2 + 1, .spad = 40, .rows = rows, .row_len = len, .stride = 2 * len + 1});
    const auto prog = b.program();
    const RunStats s = run(prog, "DMA_STORE requant len " + std::to_string(len));
    EXPECT_EQ(record_of(s, index_of(prog, hw::Opcode::kDmaStore)).passes, rows)
        << "one pass per row";
    // Spot checks against the definition (the Lockstep compared every byte with CpuDevice).
    std::int8_t lo8 = 0;
    dev_.read_dram(kOut + 3, {reinterpret_cast<std::uint8_t*>(&lo8), 1});
    EXPECT_EQ(lo8, -128);
    if (len >= 2) {
      std::int16_t hi16 = 0;
      dev_.read_dram(kOut + 0x1001 + 2, {reinterpret_cast<std::uint8_t*>(&hi16), 2});
      EXPECT_EQ(hi16, 32767);
    }
  }
}

TEST_P(AccelGptRtl, RequantStoreFromAnotherMemoryIsABadOperand) {
  for (const hw::Mem mem : {hw::Mem::kInput, hw::Mem::kWeight, hw::Mem::kParam}) {
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .row_len = 4, .stride = 16});
    b.store({.mem = mem, .elem_log2 = unsigned(mem == hw::Mem::kParam ? 3 : 0), .dram = kOut, .row_len = 4, .stride = 16, .requant = true});
    const auto prog = b.program();
    dev_.write_dram(ls_.prog_addr(),
                    {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
    try {
      (void)dev_.run(ls_.prog_addr(), std::uint32_t(prog.size()));
      ADD_FAILURE() << "expected bad_operand for mem " << int(mem);
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("bad_operand"), std::string::npos) << msg;
      EXPECT_NE(msg.find("instruction 1"), std::string::npos) << msg;
    }
  }
  // The device still runs programs afterwards.
  ProgramBuilder ok;
  ok.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = kA, .row_len = 4, .stride = 16});
  ok.store({.mem = hw::Mem::kVector, .dram = kOut, .row_len = 4, .stride = 4, .requant = true});
  run(ok.program(), "after errors");
}

// LAYERNORM: random rows, a constant row (its output is the bias), a row alternating +-1
// around a large mean, and a row of the int16 extremes; gains at several fraction widths, the
// bias row right after the gain row. Three passes per row.
TEST_P(AccelGptRtl, LayerNormRowsHaveThreePasses) {
  std::mt19937 rng(9001);
  for (const std::uint32_t len : {1u, 2u, 3u, 5u, 16u, 77u, 130u}) {
    const std::uint32_t rows = 5;
    auto x = random_values<std::int16_t>(rng, rows * len, -32768, 32767);
    for (std::uint32_t i = 0; i < len; ++i) {
      x[len + i] = -1234;                                            // constant row
      x[2 * len + i] = std::int16_t(30000 + (i % 2 == 0 ? 1 : -1));  // +-1 around 30000
      x[3 * len + i] = i % 2 == 0 ? std::int16_t(-32768) : std::int16_t(32767);
    }
    const auto gain = random_values<std::int16_t>(rng, len, -32768, 32767);
    const auto bias = random_values<std::int16_t>(rng, len, -400, 400);
    const std::uint32_t frac = len % 3 == 0 ? 13 : len % 3 == 1 ? 11 : 0;
    const std::uint64_t eps = len == 5 ? 0 : std::uint64_t{len} << 6;
    const std::uint32_t wl = words(len, cfg().lanes);
    ls_.write(kA, bytes_of(x));
    ls_.write(kB, bytes_of(gain));
    ls_.write(kB + 0x1000, bytes_of(bias));
    ls_.write(kP, bytes_of(std::vector<std::uint64_t>{eps}));
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kA, .rows = rows, .row_len = len, .stride = len * 2});
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB, .spad = 600, .row_len = len, .stride = len * 2});
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB + 0x1000, .spad = 600 + wl, .row_len = len, .stride = len * 2});
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .spad = 9, .row_len = 1, .stride = 8});
    b.vector({.op = hw::Opcode::kLayernorm, .src2 = 600, .dst = 300, .param = 9, .len = len, .rows = rows, .gain_frac_bits = unsigned(frac)});
    b.store({.mem = hw::Mem::kVector, .dram = kOut, .spad = 300, .rows = rows, .row_len = len, .stride = len});
    const auto prog = b.program();
    const RunStats s = run(prog, "LAYERNORM len " + std::to_string(len));
    const InstrRecord r = record_of(s, index_of(prog, hw::Opcode::kLayernorm));
    EXPECT_EQ(r.passes, 3u * rows) << "3 passes per row, len " << len;
    EXPECT_EQ(r.cycles, counter(s, hw::Counter::kCyclesNorm));
    EXPECT_EQ(counter(s, hw::Counter::kPassesNorm), 3u * rows);
    std::vector<std::int8_t> got(len);
    dev_.read_dram(kOut + len, {reinterpret_cast<std::uint8_t*>(got.data()), len});
    for (std::uint32_t i = 0; i < len; ++i) {
      EXPECT_EQ(got[i], saturate(bias[i], 8)) << "a constant row gives its bias, lane " << i;
    }
  }
}

// BATCHNORM: one pass per row with the per-tensor step at param_addr (its bias bits ignored).
TEST_P(AccelGptRtl, BatchNormRowsHaveOnePass) {
  std::mt19937 rng(9002);
  for (const std::uint32_t len : {1u, 7u, 64u, 129u}) {
    const std::uint32_t rows = 3;
    const auto x = random_values<std::int16_t>(rng, rows * len, -32768, 32767);
    const auto gain = random_values<std::int16_t>(rng, len, -32768, 32767);
    const auto bias = random_values<std::int16_t>(rng, len, -32768, 32767);
    Requant rq = make_requant(1.0 / double(1 << (18 + len % 5)));
    rq.bias = kBiasMin;  // ignored outside MATMUL
    const std::uint32_t wl = words(len, cfg().lanes);
    ls_.write(kA, bytes_of(x));
    ls_.write(kB, bytes_of(gain));
    ls_.write(kB + 0x1000, bytes_of(bias));
    ls_.write(kP, bytes_of(std::vector<std::uint64_t>{encode_param(rq)}));
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kA, .rows = rows, .row_len = len, .stride = len * 2});
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB, .spad = 700, .row_len = len, .stride = len * 2});
    b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB + 0x1000, .spad = 700 + wl, .row_len = len, .stride = len * 2});
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .spad = 4, .row_len = 1, .stride = 8});
    b.vector({.op = hw::Opcode::kBatchnorm, .src2 = 700, .param = 4, .len = len, .rows = rows});  // in place
    b.store({.mem = hw::Mem::kVector, .dram = kOut, .rows = rows, .row_len = len, .stride = len});
    const auto prog = b.program();
    const RunStats s = run(prog, "BATCHNORM len " + std::to_string(len));
    EXPECT_EQ(record_of(s, index_of(prog, hw::Opcode::kBatchnorm)).passes, rows);
    EXPECT_EQ(counter(s, hw::Counter::kPassesNorm), rows);
  }
}

// GELU over every int8 input (two rows of 128, in place), at three input scales.
TEST_P(AccelGptRtl, GeluEveryInt8Input) {
  std::vector<std::int8_t> x(256);
  for (int i = 0; i < 256; ++i) {
    x[std::size_t(i)] = static_cast<std::int8_t>(i - 128);
  }
  ls_.write(kA, bytes_of(x));
  for (const int log2_scale : {-3, -4, -5}) {
    const double s_in = std::ldexp(1.0, log2_scale);
    const std::vector<std::uint64_t> rq{encode_param(make_requant(1024.0 * s_in)),
                                        encode_param(make_requant(s_in / 65536.0 / s_in))};
    ls_.write(kP, bytes_of(rq));
    ProgramBuilder b;
    b.load({.mem = hw::Mem::kVector, .dram = kA, .spad = 10, .rows = 2, .row_len = 128, .stride = 128});
    b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .spad = 30, .row_len = 2, .stride = 16});
    b.vector({.op = hw::Opcode::kGelu, .src = 10, .dst = 10, .param = 30, .len = 128, .rows = 2});
    b.store({.mem = hw::Mem::kVector, .dram = kOut, .spad = 10, .rows = 2, .row_len = 128, .stride = 128});
    const auto prog = b.program();
    const RunStats s = run(prog, "GELU scale 2^" + std::to_string(log2_scale));
    const InstrRecord r = record_of(s, index_of(prog, hw::Opcode::kGelu));
    EXPECT_EQ(r.passes, 2u) << "one pass per row";
    EXPECT_EQ(r.cycles, counter(s, hw::Counter::kCyclesOtherVector));
    EXPECT_EQ(counter(s, hw::Counter::kPassesOtherVector), 2u);
  }
}

// A GPT-style sequence in one program: LAYERNORM -> requantising store and reload -> MATMUL
// with biases -> GELU, BATCHNORM on the residual; per class the record passes add up to the
// counters, and the class cycles to the total (checked by run()).
TEST_P(AccelGptRtl, GptSequenceClassTotals) {
  std::mt19937 rng(9003);
  const std::uint32_t dim = 24, hidden = 12, rows = 2;
  const std::uint32_t wd = words(dim, cfg().lanes);
  ls_.write(kA, bytes_of(random_values<std::int16_t>(rng, rows * dim, -20000, 20000)));
  ls_.write(kB, bytes_of(random_values<std::int16_t>(rng, dim, 3000, 16000)));  // gain
  ls_.write(kB + 0x400, bytes_of(random_values<std::int16_t>(rng, dim, -50, 50)));
  ls_.write(kB + 0x800, bytes_of(random_values<std::int8_t>(rng, dim * hidden, -127, 127)));
  std::vector<std::uint64_t> e{encode_param(make_requant(1.0 / 256))};  // entry 0: DMA step
  e.push_back(std::uint64_t{1} << 12);                                 // entry 1: eps
  for (std::uint32_t c = 0; c < hidden; ++c) {                         // 2..: matmul steps
    Requant rq = make_requant(1.0 / 64);
    rq.bias = std::uniform_int_distribution<std::int32_t>(-30000, 30000)(rng);
    e.push_back(encode_param(rq));
  }
  e.push_back(encode_param(make_requant(1024.0 / 16)));            // GELU to_q10
  e.push_back(encode_param(make_requant(1.0 / 65536)));            // GELU out_rq
  e.push_back(encode_param(make_requant(1.0 / double(1 << 20))));  // BATCHNORM step
  ls_.write(kP, bytes_of(e));
  const std::uint32_t gelu_prm = 2 + hidden, bn_prm = gelu_prm + 2;
  ProgramBuilder b;
  b.set_layer(1);
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kA, .rows = rows, .row_len = dim, .stride = dim * 2});
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB, .spad = 100, .row_len = dim, .stride = dim * 2});
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = kB + 0x400, .spad = 100 + wd, .row_len = dim, .stride = dim * 2});
  b.load({.mem = hw::Mem::kParam, .elem_log2 = 3, .dram = kP, .row_len = std::uint32_t(e.size()), .stride = std::uint32_t(e.size()) * 8});
  b.load({.mem = hw::Mem::kWeight, .dram = kB + 0x800, .rows = dim, .row_len = hidden, .stride = hidden});
  b.vector({.op = hw::Opcode::kLayernorm, .src2 = 100, .dst = 200, .param = 1, .len = dim, .rows = rows, .gain_frac_bits = 12});
  b.store({.mem = hw::Mem::kVector, .dram = kOut, .rows = rows, .row_len = dim, .stride = dim, .requant = true});  // residual -> int8
  b.store({.mem = hw::Mem::kVector, .dram = kOut + 0x100, .spad = 200, .rows = rows, .row_len = dim, .stride = dim});
  b.load({.mem = hw::Mem::kInput, .dram = kOut + 0x100, .rows = rows, .row_len = dim, .stride = dim});
  MatmulOp mm;
  mm.m = rows;
  mm.k = dim;
  mm.n = hidden;
  mm.dst = 300;
  mm.rq_addr = 2;
  b.matmul(mm);
  b.vector({.op = hw::Opcode::kGelu, .src = 300, .dst = 300, .param = gelu_prm, .len = hidden, .rows = rows});
  b.vector({.op = hw::Opcode::kBatchnorm, .src2 = 100, .dst = 400, .param = bn_prm, .len = dim, .rows = rows});
  b.store({.mem = hw::Mem::kVector, .dram = kOut2, .spad = 300, .rows = rows, .row_len = hidden, .stride = hidden});
  b.store({.mem = hw::Mem::kVector, .dram = kOut2 + 0x100, .spad = 400, .rows = rows, .row_len = dim, .stride = dim});
  const auto prog = b.program();
  const RunStats s = run(prog, "GPT sequence");
  EXPECT_EQ(counter(s, hw::Counter::kPassesNorm), 3u * rows + rows) << "LAYERNORM + BATCHNORM";
  EXPECT_EQ(counter(s, hw::Counter::kPassesOtherVector), rows) << "GELU";
  EXPECT_EQ(counter(s, hw::Counter::kPassesMatmul),
            words(dim, cfg().array_rows) * words(hidden, cfg().array_cols));
}

TEST_P(AccelGptRtl, BadNormOperandsStopTheRun) {
  const auto expect_error = [&](const std::vector<hw::Instr>& prog, const std::string& what) {
    dev_.write_dram(ls_.prog_addr(),
                    {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
    try {
      (void)dev_.run(ls_.prog_addr(), std::uint32_t(prog.size()));
      ADD_FAILURE() << "expected " << what;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("instruction 0"), std::string::npos) << e.what();
    }
  };
  ProgramBuilder p1;
  p1.vector({.op = hw::Opcode::kLayernorm, .src2 = 10, .dst = 20, .len = 4, .gain_frac_bits = 14});
  expect_error(p1.program(), "bad_operand");
  ProgramBuilder p2;  // the bias row after the gain row leaves the scratchpad
  p2.vector({.op = hw::Opcode::kBatchnorm, .src2 = std::uint32_t(cfg().vector_depth) - 1, .dst = 20, .len = 1});
  expect_error(p2.program(), "spad_range");
  ProgramBuilder p3;  // out_rq at param_addr + 1 is past the param memory
  p3.vector({.op = hw::Opcode::kGelu, .param = std::uint32_t(cfg().param_depth) - 1, .len = 4});
  expect_error(p3.program(), "spad_range");
}

INSTANTIATE_TEST_SUITE_P(
    Configs, AccelGptRtl,
    ::testing::Values(Config{"tiny", [] { return sim::make_accel_model_tiny(); }},
                      Config{"small", [] { return sim::make_accel_model_small(); }}),
    [](const ::testing::TestParamInfo<Config>& i) { return std::string(i.param.name); });

}  // namespace
