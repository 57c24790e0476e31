// SPDX-License-Identifier: Apache-2.0
// Tokens per second of the float and cpu backends on stories260K (one thread), generating
// greedily from an empty prompt like llama2.c's `run -n 256`.
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <benchmark/benchmark.h>

#include "passim/eval/calibrate.hpp"
#include "passim/eval/generate.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/model/weights.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quant_model.hpp"
#include "passim/quant/quantize.hpp"

namespace {

std::filesystem::path data_dir() {
  const char* env = std::getenv("PASSIM_DATA");
  return env != nullptr && *env != '\0' ? std::filesystem::path(env) : PASSIM_DATA_DIR;
}

struct Stories {
  passim::FloatModel float_model;
  passim::QuantModel quant_model;
  passim::Tokenizer tok;
};

const Stories* stories() {
  static const std::unique_ptr<Stories> s = []() -> std::unique_ptr<Stories> {
    const auto model = data_dir() / "models" / "stories260K.bin";
    if (!std::filesystem::exists(model)) {
      return nullptr;
    }
    auto fm = passim::load_llama2c(model);
    auto calib = passim::calibrate(fm, passim::self_generated_calibration(fm, 128));
    auto qm = passim::quantize(fm, calib);
    auto tok = passim::Tokenizer::load(data_dir() / "models" / "tok512.bin", 512);
    return std::make_unique<Stories>(Stories{std::move(fm), std::move(qm), std::move(tok)});
  }();
  return s.get();
}

template <typename MakeBackend>
void run_generation(benchmark::State& state, MakeBackend make) {
  const Stories* s = stories();
  if (s == nullptr) {
    state.SkipWithError("stories260K not found; set PASSIM_DATA");
    return;
  }
  auto backend = make(*s);
  passim::GenerateOptions opts;
  opts.steps = static_cast<int>(state.range(0));
  long positions = 0;
  for (auto _ : state) {
    const auto r = passim::generate(*backend, s->tok, opts, nullptr);
    positions += r.steps;
    benchmark::DoNotOptimize(r.generated_tokens.data());
  }
  state.counters["tok/s"] =
      benchmark::Counter(double(positions), benchmark::Counter::kIsRate);
}

void BM_FloatBackend(benchmark::State& state) {
  run_generation(state, [](const Stories& s) {
    return std::make_unique<passim::FloatBackend>(s.float_model);
  });
}
void BM_CpuBackend(benchmark::State& state) {
  run_generation(state, [](const Stories& s) {
    return std::make_unique<passim::CpuBackend>(s.quant_model);
  });
}

BENCHMARK(BM_FloatBackend)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuBackend)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

}  // namespace
