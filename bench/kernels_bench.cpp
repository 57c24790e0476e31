// SPDX-License-Identifier: Apache-2.0
// Throughput of the golden integer kernels on the CPU.
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "passim/kernels/matmul.hpp"
#include "passim/kernels/softmax.hpp"

namespace {

std::vector<std::int8_t> random_i8(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<std::int8_t> v(n);
  for (auto& x : v) {
    x = static_cast<std::int8_t>(d(rng));
  }
  return v;
}

void BM_MatmulI8(benchmark::State& state) {
  const auto m = std::size_t(state.range(0)), k = std::size_t(state.range(1));
  const auto n = std::size_t(state.range(2));
  const auto a = random_i8(m * k, 1);
  const auto w = random_i8(n * k, 2);
  std::vector<std::int32_t> out(m * n);
  for (auto _ : state) {
    passim::kernels::matmul_i8(a, w, out, m, k, n);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["MAC/s"] =
      benchmark::Counter(double(m * k * n) * double(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatmulI8)->Args({1, 64, 512})->Args({1, 172, 64})->Args({64, 64, 64});

void BM_SoftmaxI16(benchmark::State& state) {
  const auto n = std::size_t(state.range(0));
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(-20000, 20000);
  std::vector<std::int32_t> x(n);
  for (auto& v : x) {
    v = d(rng);
  }
  std::vector<std::uint32_t> e(n);
  std::vector<std::int16_t> out(n);
  for (auto _ : state) {
    passim::kernels::softmax_i16(x, e, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(std::int64_t(n) * state.iterations());
}
BENCHMARK(BM_SoftmaxI16)->Arg(64)->Arg(512);

}  // namespace
