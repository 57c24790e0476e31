// SPDX-License-Identifier: Apache-2.0
// Compiled programs (docs/isa.md) executed by the ISA reference device give exactly the
// cpu backend's tokens and int32 logits, on every named hardware configuration.
#include <memory>

#include <gtest/gtest.h>

#include "passim/compiler/compiler.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/eval/generate.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quant_model.hpp"
#include "passim/quant/quantize.hpp"
#include "test_data.hpp"

namespace {

class CompiledModel : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(passim::test::model_path())) {
      return;
    }
    const auto fm = passim::load_llama2c(passim::test::model_path());
    model_ = std::make_unique<passim::QuantModel>(
        passim::quantize(fm, passim::calibrate(fm, passim::self_generated_calibration(fm, 64))));
    tok_ = std::make_unique<passim::Tokenizer>(
        passim::Tokenizer::load(passim::test::tokenizer_path(), 512));
  }
  static void TearDownTestSuite() {
    model_.reset();
    tok_.reset();
  }
  void SetUp() override { PASSIM_REQUIRE_DATA(); }

  static inline std::unique_ptr<passim::QuantModel> model_;
  static inline std::unique_ptr<passim::Tokenizer> tok_;
};

TEST_P(CompiledModel, MatchesCpuBackendBitForBit) {
  const passim::hw::HwConfig* cfg = passim::hw::find_config(GetParam());
  ASSERT_NE(cfg, nullptr);
  passim::ModelCompiler probe(*model_, *cfg);
  passim::CpuDevice device(*cfg, probe.dram_bytes());
  passim::DeviceBackend dev(probe, device);
  passim::CpuBackend cpu(*model_);
  for (const char* prompt : {"Once upon a time", "The cat"}) {
    passim::GenerateOptions opts;
    opts.prompt = prompt;
    opts.steps = 16;
    const auto a = passim::generate(cpu, *tok_, opts, nullptr);
    const auto b = passim::generate(dev, *tok_, opts, nullptr);
    EXPECT_EQ(a.generated_tokens, b.generated_tokens) << "prompt " << prompt;
    const auto la = cpu.logits_i32();
    const auto lb = dev.logits_i32();
    ASSERT_TRUE(std::equal(la.begin(), la.end(), lb.begin(), lb.end()))
        << "final logits differ, prompt " << prompt;
  }
  EXPECT_GT(dev.stats().instructions, 0u);
  EXPECT_FALSE(dev.stats().has_cycles);  // the reference device has no counters
}

INSTANTIATE_TEST_SUITE_P(Configs, CompiledModel, ::testing::Values("tiny", "small", "base"));

TEST(ModelCompilerLimits, TinyKvWindowIsReportedNotOverrun) {
  PASSIM_REQUIRE_DATA();
  const auto fm = passim::load_llama2c(passim::test::model_path());
  const auto qm = passim::quantize(fm, passim::calibrate(fm, {{1, 403, 407}}));
  passim::ModelCompiler comp(qm, passim::hw::kTiny);
  ASSERT_GT(comp.max_positions(), 16);
  ASSERT_LT(comp.max_positions(), qm.config.seq_len);
  EXPECT_NO_THROW((void)comp.step(1, comp.max_positions() - 1));
  try {
    (void)comp.step(1, comp.max_positions());
    FAIL() << "expected an error past the KV window";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tiny"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("KV window"), std::string::npos) << e.what();
  }
  passim::ModelCompiler small(qm, passim::hw::kSmall);
  EXPECT_EQ(small.max_positions(), qm.config.seq_len);
}

}  // namespace
