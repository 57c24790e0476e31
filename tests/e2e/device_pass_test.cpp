// SPDX-License-Identifier: Apache-2.0
// Whole-sequence passes of compiled programs (ModelCompiler::pass) on the ISA reference device:
// a prompt in as few passes as the config holds, every matmul on n rows, gives exactly the cpu
// backend's int32 logits token by token, and decoding continues from the KV cache it filled.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "passim/compiler/compiler.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/io/gguf.hpp"
#include "passim/io/gguf_model.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quantize.hpp"
#include "test_data.hpp"

namespace {

using namespace passim;

struct Case {
  const char* model;  ///< "stories260K", "ln-gpt", "bn-gpt" (folded BatchNorm: "bn-gpt-folded")
  const char* config;
  AttentionUnit attention = AttentionUnit::kAuto;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.model << " on " << c.config << ", attention " << attention_unit_name(c.attention);
}

std::string case_name(const ::testing::TestParamInfo<Case>& p) {
  std::string s = std::string(p.param.model) + "_" + p.param.config;
  if (p.param.attention != AttentionUnit::kAuto) {
    s += std::string("_attention_") + attention_unit_name(p.param.attention);
  }
  for (char& c : s) {
    c = (c == '-') ? '_' : c;
  }
  return s;
}

/// The model of a case, quantised with a calibration of its own generated text.
QuantModel load_case(const std::string& name) {
  if (name == "stories260K") {
    const FloatModel fm = load_llama2c(test::model_path());
    return quantize(fm, calibrate(fm, self_generated_calibration(fm, 64)));
  }
  const bool folded = name == "bn-gpt-folded";
  const FloatModel fm =
      float_model_from_gguf(GgufFile::read(test::project_model_path(folded ? "bn-gpt" : name)));
  QuantOptions opts;
  opts.batchnorm = folded ? BatchNormMode::kFolded : BatchNormMode::kUnfused;
  return quantize(fm, calibrate(fm, self_generated_calibration(fm, 64)), opts);
}

/// `n` token ids of the model's vocabulary, a fixed pseudo-random sequence.
std::vector<int> some_tokens(const QuantModel& m, std::size_t n) {
  std::vector<int> t(n);
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = int((i * 37 + 11) % std::size_t(m.config.vocab_size));
  }
  return t;
}

/// MATMUL_ACTs and ATTN_VALUEs in `programs`.
std::pair<std::size_t, std::size_t> attention_ops(
    const std::vector<std::vector<hw::Instr>>& programs) {
  std::pair<std::size_t, std::size_t> n{};
  for (const auto& prog : programs) {
    for (const hw::Instr& in : prog) {
      const auto op = static_cast<hw::Opcode>(hw::get_field(in, hw::fields::kOpcode));
      n.first += op == hw::Opcode::kMatmulAct;
      n.second += op == hw::Opcode::kAttnValue;
    }
  }
  return n;
}

bool same_logits(std::span<const std::int32_t> a, std::span<const std::int32_t> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

class DevicePass : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (std::string(GetParam().model) == "stories260K") {
      PASSIM_REQUIRE_DATA();
    }
    model_ = std::make_unique<QuantModel>(load_case(GetParam().model));
    cfg_ = hw::find_config(GetParam().config);
    ASSERT_NE(cfg_, nullptr);
  }
  std::unique_ptr<QuantModel> model_;
  const hw::HwConfig* cfg_ = nullptr;
};

// 40 prompt positions in passes (fewer where the config's KV window is shorter, at least 32),
// then decoding steps to the window's end or 6: every step's int32 logits equal the cpu
// backend's, token by token.
TEST_P(DevicePass, PromptPassesThenDecodeEqualCpuTokenByToken) {
  const ModelCompiler comp(*model_, *cfg_, {.attention = GetParam().attention});
  CpuDevice device(*cfg_, comp.dram_bytes());
  DeviceBackend dev(comp, device);
  CpuBackend cpu(*model_);
  const std::size_t window = std::size_t(comp.max_positions());
  const std::vector<int> prompt = some_tokens(*model_, std::min<std::size_t>(40, window - 2));
  ASSERT_GE(prompt.size(), 32u) << "config " << cfg_->name << " holds a window of " << window;
  // Forced onto the array, the first pass's products run there (p v too with kArray).
  const AttentionUnit unit = GetParam().attention;
  if (unit == AttentionUnit::kArray || unit == AttentionUnit::kScores) {
    const std::size_t n = comp.rows_at(0, prompt.size());
    const auto [acts, values] = attention_ops(comp.pass(std::span(prompt).first(n), 0));
    EXPECT_GT(acts, 0u) << "no MATMUL_ACT in a pass of " << n;
    EXPECT_EQ(values > 0, unit == AttentionUnit::kScores) << values << " ATTN_VALUEs";
  }
  dev.forward_sequence(prompt, 0);
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    cpu.forward(prompt[i], int(i));
  }
  ASSERT_TRUE(same_logits(cpu.logits_i32(), dev.logits_i32())) << "after the prompt";
  EXPECT_GE(dev.sequence_passes(), 1u);
  EXPECT_LE(dev.sequence_passes(), prompt.size());
  int pos = int(prompt.size());
  for (int step = 0; step < 6 && pos < int(window); ++step, ++pos) {
    const int next = int((step * 13 + 5) % model_->config.vocab_size);
    dev.forward(next, pos);
    cpu.forward(next, pos);
    ASSERT_TRUE(same_logits(cpu.logits_i32(), dev.logits_i32())) << "decode step " << step;
  }
}

// A pass that starts later in the sequence (the KV cache already holds earlier positions)
// equals the cpu backend too, and one too many rows is refused with the limit in the message.
TEST_P(DevicePass, LaterPassAndTooManyRows) {
  const ModelCompiler comp(*model_, *cfg_, {.attention = GetParam().attention});
  CpuDevice device(*cfg_, comp.dram_bytes());
  DeviceBackend dev(comp, device);
  CpuBackend cpu(*model_);
  const std::vector<int> tokens = some_tokens(*model_, 12);
  for (std::size_t i = 0; i < 5; ++i) {
    dev.forward(tokens[i], int(i));
    cpu.forward(tokens[i], int(i));
  }
  const std::size_t n = comp.rows_at(5, 7);
  ASSERT_GE(n, 1u);
  for (std::size_t i = 5; i < 5 + n; ++i) {
    cpu.forward(tokens[i], int(i));
  }
  dev.forward_sequence(std::span<const int>(tokens).subspan(5, n), 5);
  EXPECT_EQ(dev.sequence_passes(), 1u);
  EXPECT_TRUE(same_logits(cpu.logits_i32(), dev.logits_i32()));

  const std::size_t most = comp.rows_at(0, 100000);
  ASSERT_GE(most, 1u);
  const std::vector<int> too_many = some_tokens(*model_, most + 1);
  try {
    (void)comp.pass(too_many, 0);
    FAIL() << "a pass of " << most + 1 << " rows was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("at most {}", most)), std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, DevicePass,
    ::testing::Values(Case{"stories260K", "tiny"}, Case{"stories260K", "small"},
                      Case{"stories260K", "base"}, Case{"ln-gpt", "tiny"},
                      Case{"ln-gpt", "small"}, Case{"ln-gpt", "base"}, Case{"bn-gpt", "tiny"},
                      Case{"bn-gpt", "base"}, Case{"bn-gpt-folded", "small"},
                      Case{"stories260K", "tiny", AttentionUnit::kArray},
                      Case{"stories260K", "base", AttentionUnit::kArray},
                      Case{"stories260K", "small", AttentionUnit::kScores},
                      Case{"ln-gpt", "tiny", AttentionUnit::kArray},
                      Case{"ln-gpt", "small", AttentionUnit::kArray},
                      Case{"ln-gpt", "base", AttentionUnit::kScores},
                      Case{"bn-gpt", "tiny", AttentionUnit::kScores},
                      Case{"bn-gpt-folded", "base", AttentionUnit::kArray}),
    case_name);

// A sequence longer than the context is refused before anything runs.
TEST(DevicePassLimits, SequenceBeyondTheContextIsRefused) {
  const QuantModel m = load_case("ln-gpt");
  const ModelCompiler comp(m, hw::kBase);
  CpuDevice device(hw::kBase, comp.dram_bytes());
  DeviceBackend dev(comp, device);
  const std::vector<int> tokens = some_tokens(m, std::size_t(m.config.seq_len) + 1);
  EXPECT_THROW(dev.forward_sequence(tokens, 0), std::runtime_error);
  EXPECT_EQ(comp.rows_at(m.config.seq_len, 4), 0u);
}

}  // namespace

namespace {

/// What the DMA instructions of `progs` move, counted by (opcode, DmaMoves), with a check
/// that every load into the weight scratchpad moves weights.
std::map<std::pair<hw::Opcode, DmaMoves>, int> count_moves(
    const ModelCompiler& c, const std::vector<std::vector<hw::Instr>>& progs) {
  std::map<std::pair<hw::Opcode, DmaMoves>, int> n;
  for (const auto& prog : progs) {
    for (const hw::Instr& in : prog) {
      const auto op = static_cast<hw::Opcode>(hw::get_field(in, hw::fields::kOpcode));
      const DmaMoves moves = c.dma_moves(in);
      const bool dma = op == hw::Opcode::kDmaLoad || op == hw::Opcode::kDmaStore;
      EXPECT_EQ(moves == DmaMoves::kNone, !dma) << hw::opcode_name(op);
      const auto mem = static_cast<hw::Mem>(hw::get_field(in, hw::fields::dma_load::kMem));
      if (op == hw::Opcode::kDmaLoad && mem == hw::Mem::kWeight) {
        EXPECT_EQ(moves, DmaMoves::kWeights);
      }
      ++n[{op, moves}];
    }
  }
  return n;
}

}  // namespace

// The report's DMA split: a decoding step loads weights, loads and appends the KV cache and
// round-trips activations through DRAM; a prefill pass does all three as well.
TEST(DmaMoves, StepAndPassMoveWeightsKvCacheAndActivations) {
  const QuantModel m = load_case("ln-gpt");
  const ModelCompiler c(m, hw::kTiny);
  for (const bool prefill : {false, true}) {
    const std::vector<int> tokens = some_tokens(m, 2);
    const auto progs = prefill ? c.pass(tokens, 0) : c.step(tokens[0], 3);
    const auto n = count_moves(c, progs);
    SCOPED_TRACE(prefill ? "prefill" : "decode");
    EXPECT_GT(n.count({hw::Opcode::kDmaLoad, DmaMoves::kWeights}), 0u);
    EXPECT_GT(n.count({hw::Opcode::kDmaStore, DmaMoves::kKvCache}), 0u);
    EXPECT_GT(n.count({hw::Opcode::kDmaStore, DmaMoves::kActivations}), 0u);
    EXPECT_GT(n.count({hw::Opcode::kDmaLoad, DmaMoves::kActivations}), 0u);
    EXPECT_EQ(n.count({hw::Opcode::kDmaStore, DmaMoves::kWeights}), 0u)
        << "nothing writes the model image";
  }
  EXPECT_GT(count_moves(c, c.step(1, 3)).count({hw::Opcode::kDmaLoad, DmaMoves::kKvCache}), 0u)
      << "a later position reads the cache back";
}
