// SPDX-License-Identifier: Apache-2.0
// MAC utilisation of the matmul unit, measured on the Verilated RTL: psm_matmul with the base
// array (16 x 16) and the base configuration's input and weight memories (spec/passim.json),
// driven by the testbench driver of tests/sim/common/matmul_driver.hpp, which models those
// memories behind the unit's read ports. Each benchmark loads one GEMM into the memories, runs
// it, checks the result against passim::kernels::matmul_i8 + passim::requantize exactly, and
// reports
//   busy_cycles  cycles with busy_o high (the unit's perf_busy_cycles_o)
//   closed_form  passim::sim::matmul_busy_cycles() (docs/cycle-model.md)
//   mac_util     useful MACs / offered MACs = m * k * n / (busy * R * C)
//   feed_util    perf_mac_cycles_o / busy: fraction of cycles the array takes a new row
//   sim_cycles/s simulation speed (wall time)
// Run:  passim_matmul_bench --benchmark_filter=BM_MatmulRtl16x16/256/256/256
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "Vpsm_matmul_16x16.h"
#include "matmul_driver.hpp"
#include "passim/fixed_point.hpp"

namespace {

using passim::Requant;
using passim::sim::MatmulConfig;
using passim::sim::MatmulJob;
using passim::sim::MatmulShape;

// Must match the parameters bench/CMakeLists.txt verilates Vpsm_matmul_16x16 with.
constexpr MatmulConfig kBase{.rows = 16,
                             .cols = 16,
                             .in_depth = 4096,
                             .wgt_depth = 8192,
                             .acc_depth = 256,
                             .out_depth = 4096,
                             .rq_depth = 256};

/// Random int8 operands and per-column requant steps that map a k-long dot product into
/// roughly the int8 range (like a real layer), from a fixed seed.
MatmulJob random_job(const MatmulShape& s, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> i8(-128, 127);
  MatmulJob job;
  job.shape = s;
  job.a.resize(s.m * s.k);
  job.w.resize(s.n * s.k);
  for (auto& x : job.a) {
    x = static_cast<std::int8_t>(i8(rng));
  }
  for (auto& x : job.w) {
    x = static_cast<std::int8_t>(i8(rng));
  }
  int acc_bits = 15;  // |a * w| <= 2^14, then one bit per doubling of k
  for (std::size_t kk = s.k; kk > 1; kk >>= 1) {
    ++acc_bits;
  }
  std::uniform_int_distribution<std::int32_t> mult(1 << 30, 0x7fffffff);
  job.rq.resize(s.n);
  for (auto& rq : job.rq) {
    rq = Requant{mult(rng), 31 + acc_bits - 8 - 4};  // typical sums land well inside int8
  }
  job.out_bits = 8;
  job.requant_en = true;
  return job;
}

void BM_MatmulRtl16x16(benchmark::State& state) {
  const MatmulShape s{static_cast<std::size_t>(state.range(0)),
                      static_cast<std::size_t>(state.range(1)),
                      static_cast<std::size_t>(state.range(2))};
  if (!passim::sim::fits(kBase, s)) {
    state.SkipWithError((passim::sim::to_string(s) + " exceeds the memories").c_str());
    return;
  }
  const std::uint32_t seed = 256;
  const MatmulJob job = random_job(s, seed);
  passim::sim::MatmulDriver<Vpsm_matmul_16x16> drv(kBase, seed + 1);
  drv.load(job);

  passim::sim::MatmulRunStats stats;
  for (auto _ : state) {
    stats = drv.run(job);
  }

  if (drv.read_output(s) != passim::sim::matmul_golden(job)) {
    state.SkipWithError("the RTL result differs from matmul_i8 + requantize");
    return;
  }
  const auto busy = static_cast<double>(stats.perf_busy);
  const auto macs = static_cast<double>(s.m * s.k * s.n);
  const auto offered = busy * static_cast<double>(kBase.rows * kBase.cols);
  state.counters["busy_cycles"] = busy;
  state.counters["closed_form"] = static_cast<double>(passim::sim::matmul_busy_cycles(kBase, s));
  state.counters["mac_util"] = macs / offered;
  state.counters["feed_util"] = static_cast<double>(stats.perf_mac) / busy;
  state.counters["sim_cycles/s"] = benchmark::Counter(
      busy * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// The 256^3 GEMM of the brief, a prefill-sized and a decode (m = 1) product on the same weights.
// Arguments: m, k, n.
BENCHMARK(BM_MatmulRtl16x16)
    ->Args({256, 256, 256})
    ->Args({64, 256, 256})
    ->Args({1, 256, 256})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
