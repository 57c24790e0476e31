// SPDX-License-Identifier: Apache-2.0
// Resident weights on the Verilated accelerator: a small random GPT on tiny and
// stories260K on base (whose weight scratchpad holds it) give exactly the cpu
// backend's int32 logits with the weights resident and streamed, over a
// whole-sequence prompt and decoding steps. The hardware's records show
// weight-scratchpad DMA only in the preload when resident, and in every pass
// when streamed.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <span>
#include <vector>

#include "gpt_fixture.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quantize.hpp"
#include "passim/sim/sim_device.hpp"
#include "test_data.hpp"

namespace {

using namespace passim;
namespace f = hw::fields;

/// Counts the executed DMA_LOADs into the weight scratchpad (from the
/// hardware's records) by phase.
class WeightLoadCounter final : public RunObserver {
 public:
  void on_run(std::span<const hw::Instr> program, const RunStats& s) override {
    for (const InstrRecord& r : s.records) {
      const hw::Instr& in = program[r.index];
      if (static_cast<hw::Opcode>(hw::get_field(in, f::kOpcode)) == hw::Opcode::kDmaLoad &&
          static_cast<hw::Mem>(hw::get_field(in, f::dma_load::kMem)) == hw::Mem::kWeight) {
        ++loads[std::size_t(s.phase)];
      }
    }
  }
  std::array<std::uint64_t, 3> loads{};
};

using ModelFactory = std::unique_ptr<sim::AccelModel> (*)(bool);

struct Outcome {
  std::vector<std::vector<std::int32_t>> logits;  ///< after the prompt, then each step
  std::array<std::uint64_t, 3> loads{};           ///< weight-tile loads by phase
  std::array<std::uint64_t, 3> cycles{};          ///< total cycles by phase
  bool resident = false;
};

/// A prompt of 5 positions as one pass, then 6 decoding steps, on `simdev`
/// (SystemC elaborates once per process, so both modes share one simulated
/// device; each backend rewrites DRAM).
Outcome run_on_rtl(const QuantModel& m, const hw::HwConfig& cfg, sim::SimDevice& simdev,
                   WeightLoadCounter& counter, WeightsMode mode) {
  const ModelCompiler c(m, cfg, {.weights = mode});
  counter.loads = {};
  DeviceBackend dev(c, simdev);
  Outcome out;
  out.resident = c.residency().weights;
  const std::vector<int> prompt = {1, 5, 3, 9, 2};
  dev.forward_sequence(prompt, 0);
  out.logits.emplace_back(dev.logits_i32().begin(), dev.logits_i32().end());
  for (int pos = 5; pos < 11; ++pos) {
    dev.forward((pos * 7 + 3) % m.config.vocab_size, pos);
    out.logits.emplace_back(dev.logits_i32().begin(), dev.logits_i32().end());
  }
  out.loads = counter.loads;
  for (const Phase p : {Phase::kDecode, Phase::kPrefill, Phase::kPreload}) {
    const auto& cnt = dev.stats(p).counters;
    out.cycles[std::size_t(p)] = cnt.empty() ? 0 : cnt[std::size_t(hw::Counter::kTotalCycles)];
  }
  return out;
}

/// The cpu backend's logits for the same positions.
std::vector<std::vector<std::int32_t>> run_on_cpu(const QuantModel& m) {
  CpuBackend cpu(m);
  std::vector<std::vector<std::int32_t>> out;
  const std::vector<int> prompt = {1, 5, 3, 9, 2};
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    cpu.forward(prompt[i], int(i));
  }
  out.emplace_back(cpu.logits_i32().begin(), cpu.logits_i32().end());
  for (int pos = 5; pos < 11; ++pos) {
    cpu.forward((pos * 7 + 3) % m.config.vocab_size, pos);
    out.emplace_back(cpu.logits_i32().begin(), cpu.logits_i32().end());
  }
  return out;
}

/// `wide`: the model's q, k and v run as wide tiles when resident.
void check_both_modes(const QuantModel& m, const hw::HwConfig& cfg, ModelFactory make,
                      bool wide) {
  const auto cpu = run_on_cpu(m);
  sim::SimOptions opts;
  opts.dram_bytes = (ModelCompiler(m, cfg).dram_bytes() + 4095) / 4096 * 4096;
  sim::SimDevice simdev(make(false), opts);
  WeightLoadCounter counter;
  simdev.add_observer(&counter);
  const Outcome res = run_on_rtl(m, cfg, simdev, counter, WeightsMode::kResident);
  const Outcome str = run_on_rtl(m, cfg, simdev, counter, WeightsMode::kStreamed);
  ASSERT_TRUE(res.resident);
  ASSERT_FALSE(str.resident);
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_EQ(res.logits[i], cpu[i]) << cfg.name << " resident, output " << i;
    ASSERT_EQ(str.logits[i], cpu[i]) << cfg.name << " streamed, output " << i;
  }
  constexpr auto kPre = std::size_t(Phase::kPreload), kFill = std::size_t(Phase::kPrefill),
                 kDec = std::size_t(Phase::kDecode);
  EXPECT_GT(res.loads[kPre], 0u);
  EXPECT_EQ(res.loads[kFill], 0u);
  EXPECT_EQ(res.loads[kDec], 0u);
  EXPECT_EQ(str.loads[kPre], 0u);
  EXPECT_EQ(str.loads[kDec],
            6 * str.loads[kFill]);               // every tile in each of 6 steps
  // Resident: every tile once. q, k and v are wide tiles (MATMULs, or MATMUL_HEADS where a
  // head is narrower than L) instead of one per head (ModelCompiler::qkv) where the layout's
  // tiles are as wide as the projections, so there may be fewer of them.
  EXPECT_LE(res.loads[kPre], str.loads[kFill]);
  if (wide) {
    EXPECT_LT(res.loads[kPre], str.loads[kFill]) << "wide q, k and v tiles when resident";
  }
  EXPECT_GT(res.cycles[kPre], 0u);
  EXPECT_EQ(str.cycles[kPre], 0u);
  EXPECT_LT(res.cycles[kDec], str.cycles[kDec]);
  std::cout << cfg.name << ": decode cycles per step resident " << res.cycles[kDec] / 6
            << ", streamed " << str.cycles[kDec] / 6 << "; preload " << res.cycles[kPre]
            << " cycles, " << res.loads[kPre] << " tiles\n";
}

TEST(ResidentRtl, RandomGptOnTinyResidentAndStreamedMatchCpuBackend) {
  const FloatModel fm = test::random_gpt(NormKind::kLayer, 31);
  const QuantModel m = quantize(fm, calibrate(fm, self_generated_calibration(fm, 24)));
  check_both_modes(m, hw::kTiny, &sim::make_accel_model_tiny, false);
}

TEST(ResidentRtl, Stories260KOnBaseResidentAndStreamedMatchCpuBackend) {
  PASSIM_REQUIRE_DATA();
  const FloatModel fm = load_llama2c(test::model_path());
  const QuantModel m = quantize(fm, calibrate(fm, self_generated_calibration(fm, 64)));
  check_both_modes(m, hw::kBase, &sim::make_accel_model_base, true);
}

}  // namespace
