// SPDX-License-Identifier: Apache-2.0
// The project's two character GPTs (models/ln-gpt, models/bn-gpt) on the Verilated tiny
// accelerator: DeviceBackend on SimDevice gives exactly the cpu backend's tokens and final
// int32 logits for 16 steps, for LayerNorm, BatchNorm as a one-pass op and BatchNorm folded
// into the next matmuls. Every run's records show LAYERNORM 3, BATCHNORM 1, GELU 1 and
// SOFTMAX 3 (online: 2) passes per row, and the folded model has no norm instruction at all.
// Needs only the committed models (no ../shared).
#include <filesystem>
#include <iostream>
#include <map>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "accel_harness.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/eval/generate.hpp"
#include "passim/io/gguf.hpp"
#include "passim/io/gguf_model.hpp"
#include "passim/model/weights.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quant_model.hpp"
#include "passim/quant/quantize.hpp"
#include "passim/sim/sim_device.hpp"
#include "test_data.hpp"

namespace {

using namespace passim;
namespace f = hw::fields;

/// Observes the simulated accelerator and checks every run: records against the program (one
/// per unit instruction, class sums = counters) and passes per opcode.
class PassChecker final : public RunObserver {
 public:
  explicit PassChecker(const hw::HwConfig& cfg) : cfg_(cfg) {}
  void on_run(std::span<const hw::Instr> program, const RunStats& s) override {
    const std::vector<hw::Instr> prog(program.begin(), program.end());
    const std::string what = "run " + std::to_string(runs_++);
    (void)sim::test::check_records(prog, s, what);
    sim::test::expect_classes_add_up(s, what);
    for (const InstrRecord& r : s.records) {
      const hw::Instr& in = prog.at(r.index);
      const auto op = static_cast<hw::Opcode>(hw::get_field(in, f::kOpcode));
      const std::uint64_t rows = hw::get_field(in, f::rmsnorm::kRows);
      auto& e = per_op_[std::string(hw::opcode_name(op))];
      e.first += 1;
      e.second += r.passes;
      switch (op) {
        case hw::Opcode::kLayernorm:
          EXPECT_EQ(r.passes, 3 * rows) << what;
          break;
        case hw::Opcode::kBatchnorm:
        case hw::Opcode::kGelu:
          EXPECT_EQ(r.passes, rows) << what;
          break;
        case hw::Opcode::kSoftmax:
          EXPECT_EQ(r.passes, (hw::get_field(in, f::softmax::kOnline) ? 2 : 3) * rows) << what;
          break;
        default:
          break;
      }
      EXPECT_EQ(r.passes, instr_passes(in, cfg_)) << what << " " << hw::opcode_name(op);
    }
    for (std::size_t k = 0; k < 6; ++k) {
      cycles_[k] += s.counters.at(std::size_t(hw::Counter::kCyclesMatmul) + k);
      passes_[k] += s.counters.at(std::size_t(hw::Counter::kPassesMatmul) + k);
    }
  }

  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> per_op_;  // count, passes
  std::array<std::uint64_t, 6> cycles_{}, passes_{};

 private:
  const hw::HwConfig& cfg_;
  std::uint64_t runs_ = 0;
};

struct Case {
  const char* model;
  BatchNormMode bn;
  kernels::SoftmaxMode softmax;
  AttentionUnit attention = AttentionUnit::kAuto;
};

void check_gpt(const Case& c) {
  const auto path = test::project_model_path(c.model);
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const GgufFile file = GgufFile::read(path);
  const FloatModel fm = float_model_from_gguf(file);
  const Tokenizer tok = tokenizer_from_gguf(file, fm.config.vocab_size);
  QuantOptions qo;
  qo.batchnorm = c.bn;
  const QuantModel model = quantize(fm, calibrate(fm, self_generated_calibration(fm, 64)), qo);
  const hw::HwConfig& cfg = hw::kTiny;
  const ModelCompiler probe(model, cfg, CompileOptions{c.softmax});
  sim::SimOptions opts;
  opts.dram_bytes = (probe.dram_bytes() + 4095) / 4096 * 4096;
  sim::SimDevice simdev(sim::make_accel_model_tiny(false), opts);
  PassChecker checked(cfg);
  simdev.add_observer(&checked);
  DeviceBackend dev(probe, simdev);
  CpuBackend cpu(model, kernels::SoftmaxOptions{c.softmax, cfg.lanes});
  int positions = 0;
  for (const char* prompt : {"ROMEO:", "JULIET:\nO Romeo"}) {
    GenerateOptions o;
    o.prompt = prompt;
    o.steps = 16 + int(std::string(prompt).size());
    o.prefill = false;  // position by position: every position's counts below
    const auto a = generate(cpu, tok, o, nullptr);
    const auto b = generate(dev, tok, o, nullptr);
    positions += b.steps;
    EXPECT_EQ(a.generated_tokens, b.generated_tokens) << c.model << " prompt " << prompt;
    EXPECT_GE(b.generated_tokens.size(), 16u);
    const auto la = cpu.logits_i32();
    const auto lb = dev.logits_i32();
    ASSERT_TRUE(std::equal(la.begin(), la.end(), lb.begin(), lb.end()))
        << c.model << ": final logits differ, prompt " << prompt;
  }
  const auto& ops = checked.per_op_;
  const auto count = [&](const char* op) { return ops.count(op) ? ops.at(op).first : 0u; };
  const auto n_layers = std::uint64_t(model.config.n_layers);
  const auto norms = std::uint64_t(positions) * (2 * n_layers + 1);
  const bool ln = model.config.norm == NormKind::kLayer;
  const bool folded = !ln && c.bn == BatchNormMode::kFolded;
  EXPECT_EQ(count("LAYERNORM"), ln ? norms : 0u);
  EXPECT_EQ(count("BATCHNORM"), ln || folded ? 0u : norms);
  EXPECT_EQ(count("RMSNORM"), 0u);
  EXPECT_EQ(count("GELU"), std::uint64_t(positions) * n_layers);
  EXPECT_EQ(count("ROPE"), 0u);
  const auto norm_class = std::size_t(hw::OpClass::kNorm);
  EXPECT_EQ(checked.passes_[norm_class], ln ? 3 * norms : (folded ? 0u : norms));
  EXPECT_EQ(checked.cycles_[norm_class] == 0, folded);
  std::cout << c.model << (folded ? " folded" : "") << ": " << positions << " positions;";
  for (const auto& [op, e] : ops) {
    std::cout << " " << op << " " << e.first << "x/" << e.second << " passes;";
  }
  std::cout << "\n";
}

/// 32 prompt positions as whole-sequence passes on the tiny RTL (as few as its scratchpads
/// hold), then 2 decoding steps: the int32 logits equal the cpu backend's position by position.
void check_gpt_prefill(const Case& c) {
  const auto path = test::project_model_path(c.model);
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const FloatModel fm = float_model_from_gguf(GgufFile::read(path));
  QuantOptions qo;
  qo.batchnorm = c.bn;
  const QuantModel model = quantize(fm, calibrate(fm, self_generated_calibration(fm, 64)), qo);
  const ModelCompiler probe(model, hw::kTiny, {.softmax = c.softmax, .attention = c.attention});
  sim::SimOptions opts;
  opts.dram_bytes = (probe.dram_bytes() + 4095) / 4096 * 4096;
  sim::SimDevice simdev(sim::make_accel_model_tiny(false), opts);
  PassChecker checked(hw::kTiny);
  simdev.add_observer(&checked);
  DeviceBackend dev(probe, simdev);
  CpuBackend cpu(model, kernels::SoftmaxOptions{c.softmax, hw::kTiny.lanes});
  std::vector<int> tokens(34);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    tokens[i] = int((i * 37 + 11) % std::size_t(model.config.vocab_size));
  }
  const std::span<const int> prompt(tokens.data(), 32);
  if (c.attention != AttentionUnit::kAuto) {  // forced: the first pass's q k^T on the array
    EXPECT_GT(sim::test::count_opcode(probe.pass(prompt.first(probe.rows_at(0, 32)), 0),
                                      hw::Opcode::kMatmulAct), 0u);
  }
  dev.forward_sequence(prompt, 0);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i >= 32) {
      dev.forward(tokens[i], int(i));
    }
    cpu.forward(tokens[i], int(i));
    if (i >= 31) {
      const auto la = cpu.logits_i32(), lb = dev.logits_i32();
      ASSERT_TRUE(std::equal(la.begin(), la.end(), lb.begin(), lb.end()))
          << c.model << ": logits differ at position " << i;
    }
  }
  std::cout << c.model << ": a prompt of 32 in " << dev.sequence_passes() << " passes\n";
}

TEST(GptModelRtl, LayerNormPrefillOnTinyMatchesCpuBackend) {
  check_gpt_prefill({"ln-gpt", BatchNormMode::kUnfused, kernels::SoftmaxMode::kThreePass});
}

TEST(GptModelRtl, LayerNormPrefillArrayAttentionOnTinyMatchesCpuBackend) {
  check_gpt_prefill({"ln-gpt", BatchNormMode::kUnfused, kernels::SoftmaxMode::kThreePass,
                     AttentionUnit::kArray});
}

TEST(GptModelRtl, BatchNormPrefillScoresOnArrayOnTinyMatchesCpuBackend) {
  check_gpt_prefill({"bn-gpt", BatchNormMode::kUnfused, kernels::SoftmaxMode::kOnline,
                     AttentionUnit::kScores});
}

TEST(GptModelRtl, FoldedBatchNormPrefillOnTinyMatchesCpuBackend) {
  check_gpt_prefill({"bn-gpt", BatchNormMode::kFolded, kernels::SoftmaxMode::kThreePass});
}

TEST(GptModelRtl, LayerNormOnTinyMatchesCpuBackend) {
  check_gpt({"ln-gpt", BatchNormMode::kUnfused, kernels::SoftmaxMode::kThreePass});
}

TEST(GptModelRtl, LayerNormOnlineSoftmaxOnTinyMatchesCpuBackend) {
  check_gpt({"ln-gpt", BatchNormMode::kUnfused, kernels::SoftmaxMode::kOnline});
}

TEST(GptModelRtl, BatchNormOnTinyMatchesCpuBackend) {
  check_gpt({"bn-gpt", BatchNormMode::kUnfused, kernels::SoftmaxMode::kThreePass});
}

TEST(GptModelRtl, FoldedBatchNormOnTinyMatchesCpuBackend) {
  check_gpt({"bn-gpt", BatchNormMode::kFolded, kernels::SoftmaxMode::kThreePass});
}

}  // namespace
