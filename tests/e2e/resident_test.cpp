// SPDX-License-Identifier: Apache-2.0
// Resident weights (CompileOptions::weights): when every weight tile fits the
// config's weight scratchpad the compiler gives each a fixed home, preload()
// loads them once and no later program loads a weight tile; the ISA reference
// device then gives exactly the cpu backend's int32 logits, like the streamed
// programs. A model that does not fit stays streamed, with exactly the programs
// of --weights streamed, or is refused when residency is forced.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "gpt_fixture.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quantize.hpp"
#include "test_data.hpp"

namespace {

using namespace passim;
namespace f = hw::fields;

/// DMA_LOADs into the weight scratchpad in `programs`.
std::size_t weight_loads(const std::vector<std::vector<hw::Instr>>& programs) {
  std::size_t n = 0;
  for (const auto& prog : programs) {
    n += std::size_t(std::count_if(prog.begin(), prog.end(), [](const hw::Instr& in) {
      return static_cast<hw::Opcode>(hw::get_field(in, hw::fields::kOpcode)) ==
                 hw::Opcode::kDmaLoad &&
             static_cast<hw::Mem>(hw::get_field(in, hw::fields::dma_load::kMem)) ==
                 hw::Mem::kWeight;
    }));
  }
  return n;
}

QuantModel random_layernorm_gpt() {
  const FloatModel fm = test::random_gpt(NormKind::kLayer, 21);
  return quantize(fm, calibrate(fm, self_generated_calibration(fm, 24)));
}

TEST(ResidentWeights, SmallModelIsResidentOnTinyWithNoTileLoadsAfterThePreload) {
  const QuantModel m = random_layernorm_gpt();
  const ModelCompiler res(m, hw::kTiny, {.weights = WeightsMode::kAuto});
  const ModelCompiler str(m, hw::kTiny, {.weights = WeightsMode::kStreamed});
  ASSERT_TRUE(res.residency().weights) << res.residency().reason;
  // tiny's 256 parameter entries cannot hold the tiles' steps as well: they
  // stay streamed.
  EXPECT_FALSE(res.residency().params);
  EXPECT_GT(res.residency().param_base + res.residency().param_entries, hw::kTiny.param_depth);
  EXPECT_FALSE(str.residency().weights);
  EXPECT_LE(res.residency().weight_words, hw::kTiny.weight_depth);
  EXPECT_EQ(weight_loads(res.preload()), res.residency().tiles.size());
  EXPECT_TRUE(str.preload().empty());
  const int tokens[] = {1, 4, 2, 7};
  EXPECT_EQ(weight_loads(res.step(3, 5)), 0u);
  EXPECT_EQ(weight_loads(res.pass(tokens, 0)), 0u);
  EXPECT_EQ(weight_loads(str.step(3, 5)), str.residency().tiles.size());
}

// With attention's products on the array, the plan is the same, and the operands it loads
// into the weight scratchpad (identity, K^T, V) are no weight tiles and land above the tiles.
TEST(ResidentWeights, ArrayAttentionLoadsItsOperandsAboveTheResidentTiles) {
  const QuantModel m = random_layernorm_gpt();
  const ModelCompiler vec(m, hw::kTiny, {.attention = AttentionUnit::kVector});
  const ModelCompiler arr(m, hw::kTiny, {.attention = AttentionUnit::kArray});
  ASSERT_TRUE(arr.residency().weights) << arr.residency().reason;
  EXPECT_EQ(arr.residency().weight_words, vec.residency().weight_words);
  EXPECT_EQ(arr.residency().tiles.size(), vec.residency().tiles.size());
  const int tokens[] = {1, 4, 2, 7};
  std::size_t operands = 0;
  for (const auto& prog : arr.pass(tokens, 0)) {
    for (const hw::Instr& in : prog) {
      EXPECT_FALSE(arr.loads_weight_tile(in));
      if (static_cast<hw::Opcode>(hw::get_field(in, f::kOpcode)) == hw::Opcode::kDmaLoad &&
          static_cast<hw::Mem>(hw::get_field(in, f::dma_load::kMem)) == hw::Mem::kWeight) {
        ++operands;
        EXPECT_GE(hw::get_field(in, f::dma_load::kSpadAddr), arr.residency().weight_words);
      }
    }
  }
  EXPECT_GT(operands, 0u);
}

TEST(ResidentWeights, ResidentAndStreamedGiveTheCpuBackendsLogitsOnCpuDevice) {
  const QuantModel m = random_layernorm_gpt();
  for (const WeightsMode mode : {WeightsMode::kResident, WeightsMode::kStreamed}) {
    const ModelCompiler c(m, hw::kTiny, {.weights = mode});
    CpuDevice dev(hw::kTiny, (c.dram_bytes() + 4095) / 4096 * 4096);
    DeviceBackend backend(c, dev);
    CpuBackend cpu(m);
    const int prompt[] = {1, 4, 2, 7, 3};
    backend.forward_sequence(prompt, 0);
    for (std::size_t i = 0; i < std::size(prompt); ++i) {
      cpu.forward(prompt[i], int(i));
    }
    for (int pos = 5; pos < 12; ++pos) {
      ASSERT_TRUE(std::ranges::equal(backend.logits_i32(), cpu.logits_i32()))
          << weights_mode_name(mode) << " position " << pos;
      const int tok = (pos * 5 + 1) % m.config.vocab_size;
      backend.forward(tok, pos);
      cpu.forward(tok, pos);
    }
    EXPECT_TRUE(std::ranges::equal(backend.logits_i32(), cpu.logits_i32()));
    const bool resident = mode == WeightsMode::kResident;
    EXPECT_EQ(backend.weight_tile_loads(Phase::kPreload),
              resident ? c.residency().tiles.size() : 0u);
    EXPECT_EQ(backend.weight_tile_loads(Phase::kDecode) == 0, resident);
    EXPECT_EQ(backend.weight_tile_loads(Phase::kPrefill) == 0, resident);
  }
}

// The preload's load of a resident block of vector steps carries the layer of the first
// instruction that reads the block, so the report attributes its cycles there.
TEST(ResidentWeights, PreloadedVectorStepsCarryTheLayerOfTheirFirstUse) {
  const QuantModel m = random_layernorm_gpt();
  const ModelCompiler res(m, hw::kBase, {.weights = WeightsMode::kResident});
  ASSERT_TRUE(res.residency().params) << res.residency().reason;
  ASSERT_FALSE(res.residency().steps.empty());
  std::map<std::size_t, std::uint32_t> first_use;  // parameter entry -> layer
  for (const auto& prog : res.step(3, 5)) {
    for (const hw::Instr& in : prog) {
      if (hw::unit_of(hw::Opcode(hw::get_field(in, f::kOpcode))) == hw::Unit::kVector) {
        first_use.emplace(hw::get_field(in, f::rmsnorm::kParamAddr),
                          hw::get_field(in, f::kLayer));
      }
    }
  }
  std::set<std::uint32_t> layers;
  for (const auto& [dram, s] : res.residency().steps) {
    ASSERT_TRUE(first_use.contains(s.addr)) << "no instruction reads entry " << s.addr;
    EXPECT_EQ(s.layer, first_use.at(s.addr)) << "steps at entry " << s.addr;
    layers.insert(s.layer);
    bool loaded = false;
    for (const auto& prog : res.preload()) {
      for (const hw::Instr& in : prog) {
        if (hw::get_field(in, f::kOpcode) == std::uint32_t(hw::Opcode::kDmaLoad) &&
            hw::get_field(in, f::dma_load::kMem) == std::uint32_t(hw::Mem::kParam) &&
            hw::get_field(in, f::dma_load::kSpadAddr) == s.addr) {
          EXPECT_EQ(hw::get_field(in, f::kLayer), s.layer) << "preload of entry " << s.addr;
          loaded = true;
        }
      }
    }
    EXPECT_TRUE(loaded) << "entry " << s.addr << " is never preloaded";
  }
  EXPECT_GT(layers.size(), 1u) << "the blocks of every layer went to one layer";
}

TEST(ResidentWeights, ModelThatDoesNotFitStaysStreamedOrIsRefused) {
  PASSIM_REQUIRE_DATA();
  const FloatModel fm = load_llama2c(test::model_path());
  const QuantModel m = quantize(fm, calibrate(fm, self_generated_calibration(fm, 16)));
  const ModelCompiler autom(m, hw::kTiny);
  const ModelCompiler str(m, hw::kTiny, {.weights = WeightsMode::kStreamed});
  EXPECT_FALSE(autom.residency().weights);
  EXPECT_NE(autom.residency().reason.find("weight scratchpad"), std::string::npos)
      << autom.residency().reason;
  EXPECT_TRUE(autom.preload().empty());
  EXPECT_EQ(autom.step(5, 3), str.step(5, 3));  // exactly today's programs
  EXPECT_THROW(ModelCompiler(m, hw::kTiny, {.weights = WeightsMode::kResident}),
               std::runtime_error);
  const ModelCompiler base(m, hw::kBase);  // base's weight scratchpad holds stories260K
  EXPECT_TRUE(base.residency().weights) << base.residency().reason;
  EXPECT_TRUE(base.residency().params);  // and its steps, above the entries every pass uses
  EXPECT_GE(base.residency().param_base, base.layout().max_rows);
}

}  // namespace
