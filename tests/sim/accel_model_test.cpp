// SPDX-License-Identifier: Apache-2.0
// The compiled stories260K model on the Verilated tiny and small accelerators: DeviceBackend
// on SimDevice (SystemC/TLM-2.0) gives exactly the cpu backend's tokens and final int32
// logits. Every run's counters, read from the RTL, split the total cycles exactly by op class,
// and SOFTMAX and RMSNORM rows show 3 (online Softmax: 2) and 2 passes, in the counters and in
// each instruction's trace record; the records add up to the class counters. The per-token
// cycles are printed and recorded. The online Softmax runs on tiny against the cpu backend
// with the same online Softmax in tiny's lane order.
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "accel_harness.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/device/records.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/eval/generate.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/kernels/softmax.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quant_model.hpp"
#include "passim/quant/quantize.hpp"
#include "passim/sim/sim_device.hpp"
#include "test_data.hpp"

namespace {

using namespace passim;

/// Observes the device under test and checks every run's counters and records against the
/// program it ran: classes add up, one record per unit instruction, SOFTMAX (3, or 2 with
/// `online`) / RMSNORM (2) passes per row.
class CheckedRuns final : public RunObserver {
 public:
  explicit CheckedRuns(const hw::HwConfig& cfg) : cfg_(cfg) {}
  void on_run(std::span<const hw::Instr> program, const RunStats& s) override {
    const std::vector<hw::Instr> prog(program.begin(), program.end());
    std::uint64_t softmax_rows = 0, softmax_passes = 0, norm_rows = 0;
    for (const hw::Instr& in : prog) {
      const auto op = static_cast<hw::Opcode>(hw::get_field(in, hw::fields::kOpcode));
      if (op == hw::Opcode::kSoftmax) {
        softmax_rows += hw::get_field(in, hw::fields::softmax::kRows);
        softmax_passes += softmax_passes_of(in);
        online_rows_ += hw::get_field(in, hw::fields::softmax::kOnline) *
                        hw::get_field(in, hw::fields::softmax::kRows);
      } else if (op == hw::Opcode::kRmsnorm) {
        norm_rows += hw::get_field(in, hw::fields::rmsnorm::kRows);
      }
    }
    EXPECT_TRUE(s.has_cycles);
    const auto c = [&](hw::Counter k) { return s.counters.at(std::size_t(k)); };
    sim::test::expect_classes_add_up(s, "run " + std::to_string(runs_));
    EXPECT_EQ(c(hw::Counter::kPassesSoftmax), softmax_passes) << "run " << runs_;
    EXPECT_EQ(c(hw::Counter::kPassesNorm), 2 * norm_rows) << "run " << runs_;
    EXPECT_EQ(s.instructions, prog.size());
    const std::string what = "run " + std::to_string(runs_);
    (void)sim::test::check_records(prog, s, what, &cfg_);
    for (const InstrRecord& r : s.records) {
      const hw::Instr& in = prog.at(r.index);
      const auto op = static_cast<hw::Opcode>(hw::get_field(in, hw::fields::kOpcode));
      if (op == hw::Opcode::kSoftmax) {
        EXPECT_EQ(r.passes, softmax_passes_of(in)) << what;
      } else if (op == hw::Opcode::kRmsnorm) {
        EXPECT_EQ(r.passes, 2 * hw::get_field(in, hw::fields::rmsnorm::kRows)) << what;
      }
    }
    records_ += s.records.size();
    softmax_rows_ += softmax_rows;
    softmax_passes_ += softmax_passes;
    norm_rows_ += norm_rows;
    ++runs_;
  }
  /// Passes of one SOFTMAX instruction: 3 per row, 2 with `online`.
  static std::uint64_t softmax_passes_of(const hw::Instr& in) {
    const bool online = hw::get_field(in, hw::fields::softmax::kOnline) != 0;
    return (online ? 2u : 3u) * std::uint64_t{hw::get_field(in, hw::fields::softmax::kRows)};
  }

  const hw::HwConfig& cfg_;
  std::uint64_t runs_ = 0, softmax_rows_ = 0, softmax_passes_ = 0, online_rows_ = 0;
  std::uint64_t norm_rows_ = 0, records_ = 0;
};

int steps_from_env(int fallback) {
  const char* s = std::getenv("PASSIM_RTL_STEPS");
  return (s != nullptr && *s != '\0') ? std::atoi(s) : fallback;
}

using ModelFactory = std::unique_ptr<sim::AccelModel> (*)(bool);

void check_model(const hw::HwConfig& cfg, ModelFactory make_model,
                 kernels::SoftmaxMode softmax = kernels::SoftmaxMode::kThreePass) {
  const bool online = softmax == kernels::SoftmaxMode::kOnline;
  const auto fm = load_llama2c(test::model_path());
  const QuantModel model = quantize(fm, calibrate(fm, self_generated_calibration(fm, 64)));
  const Tokenizer tok = Tokenizer::load(test::tokenizer_path(), 512);
  const ModelCompiler probe(model, cfg, CompileOptions{softmax});
  sim::SimOptions opts;
  opts.dram_bytes = (probe.dram_bytes() + 4095) / 4096 * 4096;
  sim::SimDevice sim(make_model(false), opts);
  CheckedRuns checked(cfg);
  sim.add_observer(&checked);
  DeviceBackend dev(probe, sim);
  CpuBackend cpu(model, kernels::SoftmaxOptions{softmax, cfg.lanes});
  const int steps = steps_from_env(16);
  int positions = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const char* prompt : {"Once upon a time", "The cat"}) {
    GenerateOptions o;
    o.prompt = prompt;
    o.steps = steps;
    o.prefill = false;  // position by position: every position's counts below
    const auto a = generate(cpu, tok, o, nullptr);
    const auto b = generate(dev, tok, o, nullptr);
    positions += b.steps;
    EXPECT_EQ(a.generated_tokens, b.generated_tokens) << "prompt " << prompt;
    EXPECT_EQ(a.text, b.text) << "prompt " << prompt;
    const auto la = cpu.logits_i32();
    const auto lb = dev.logits_i32();
    ASSERT_TRUE(std::equal(la.begin(), la.end(), lb.begin(), lb.end()))
        << "final logits differ, prompt " << prompt;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const RunStats& s = dev.stats();
  const auto c = [&](hw::Counter k) { return s.counters.at(std::size_t(k)); };
  const std::uint64_t total = c(hw::Counter::kTotalCycles);
  ASSERT_GT(positions, 0);
  EXPECT_EQ(c(hw::Counter::kPassesSoftmax), (online ? 2 : 3) * checked.softmax_rows_);
  EXPECT_EQ(checked.online_rows_, online ? checked.softmax_rows_ : 0);
  EXPECT_EQ(checked.softmax_rows_, std::uint64_t(positions) *
                                       std::uint64_t(model.config.n_layers * model.config.n_heads));
  EXPECT_EQ(c(hw::Counter::kPassesNorm), 2 * checked.norm_rows_);
  EXPECT_EQ(checked.norm_rows_,
            std::uint64_t(positions) * std::uint64_t(2 * model.config.n_layers + 1));
  std::cout << cfg.name << (online ? " (online Softmax)" : "") << ": " << positions
            << " positions, " << checked.runs_ << " programs, " << s.instructions
            << " instructions (" << checked.records_ << " with a record), " << total
            << " cycles = " << total / std::uint64_t(positions) << " cycles/token; "
            << sim.cycles() << " simulated cycles in " << wall << " s ("
            << double(sim.cycles()) / wall / 1e6 << " Mcycles/s incl. the cpu backend)\n";
  const auto& names = passim::kOpClassNames;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::uint64_t cyc = s.counters[std::size_t(hw::Counter::kCyclesMatmul) + k];
    std::cout << "  cycles_" << names[k] << " " << cyc << " ("
              << 100.0 * double(cyc) / double(total) << " %), passes "
              << s.counters[std::size_t(hw::Counter::kPassesMatmul) + k] << "\n";
  }
  std::cout << "  mem_stall " << c(hw::Counter::kMemStall) << ", unit_stall "
            << c(hw::Counter::kUnitStall) << ", busy dma/matmul/vector " << c(hw::Counter::kBusyDma)
            << "/" << c(hw::Counter::kBusyMatmul) << "/" << c(hw::Counter::kBusyVector) << "\n";
  ::testing::Test::RecordProperty("cycles_per_token",
                                  std::to_string(total / std::uint64_t(positions)));
}

/// A 40-position prompt as whole-sequence passes on the RTL (as few as `cfg` holds), then 4
/// decoding steps: the int32 logits after the prompt and after each step equal the cpu
/// backend's, position by position. CheckedRuns checks every run's records and passes.
void check_prefill(const hw::HwConfig& cfg, ModelFactory make_model,
                   AttentionUnit attention = AttentionUnit::kAuto) {
  const auto fm = load_llama2c(test::model_path());
  const QuantModel model = quantize(fm, calibrate(fm, self_generated_calibration(fm, 64)));
  const ModelCompiler probe(model, cfg, {.attention = attention});
  sim::SimOptions opts;
  opts.dram_bytes = (probe.dram_bytes() + 4095) / 4096 * 4096;
  sim::SimDevice sim(make_model(false), opts);
  CheckedRuns checked(cfg);
  sim.add_observer(&checked);
  DeviceBackend dev(probe, sim);
  CpuBackend cpu(model);
  std::vector<int> tokens(44);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    tokens[i] = int((i * 37 + 11) % std::size_t(model.config.vocab_size));
  }
  const std::span<const int> prompt(tokens.data(), 40);
  if (attention == AttentionUnit::kArray) {  // the first pass's products run on the array
    const std::size_t acts =
        sim::test::count_opcode(probe.pass(prompt.first(probe.rows_at(0, 40)), 0),
                                hw::Opcode::kMatmulAct);
    EXPECT_GT(acts, 0u);
  }
  dev.forward_sequence(prompt, 0);
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    cpu.forward(prompt[i], int(i));
  }
  const auto same = [&] {
    const auto la = cpu.logits_i32(), lb = dev.logits_i32();
    return std::equal(la.begin(), la.end(), lb.begin(), lb.end());
  };
  ASSERT_TRUE(same()) << "after the 40-position prompt (" << dev.sequence_passes() << " passes)";
  for (std::size_t i = prompt.size(); i < tokens.size(); ++i) {
    dev.forward(tokens[i], int(i));
    cpu.forward(tokens[i], int(i));
    ASSERT_TRUE(same()) << "decode position " << i;
  }
  const auto cycles = [&](Phase p) {
    return dev.stats(p).counters.at(std::size_t(hw::Counter::kTotalCycles));
  };
  std::cout << cfg.name << ": prompt of 40 in " << dev.sequence_passes() << " passes, "
            << cycles(Phase::kPrefill) << " cycles; 4 decode steps " << cycles(Phase::kDecode)
            << " cycles\n";
  EXPECT_GT(cycles(Phase::kPrefill), 0u);
  EXPECT_GT(cycles(Phase::kDecode), 0u);
}

TEST(ModelRtl, Stories260KPrefillOnTinyMatchesCpuBackendBitForBit) {
  PASSIM_REQUIRE_DATA();
  check_prefill(hw::kTiny, &sim::make_accel_model_tiny);
}

TEST(ModelRtl, Stories260KPrefillOnSmallMatchesCpuBackendBitForBit) {
  PASSIM_REQUIRE_DATA();
  check_prefill(hw::kSmall, &sim::make_accel_model_small);
}

TEST(ModelRtl, Stories260KPrefillArrayAttentionOnTinyMatchesCpuBackendBitForBit) {
  PASSIM_REQUIRE_DATA();
  check_prefill(hw::kTiny, &sim::make_accel_model_tiny, AttentionUnit::kArray);
}

TEST(ModelRtl, Stories260KOnTinyMatchesCpuBackendBitForBit) {
  PASSIM_REQUIRE_DATA();
  check_model(hw::kTiny, &sim::make_accel_model_tiny);
}

TEST(ModelRtl, Stories260KOnlineSoftmaxOnTinyMatchesCpuBackendBitForBit) {
  PASSIM_REQUIRE_DATA();
  check_model(hw::kTiny, &sim::make_accel_model_tiny, kernels::SoftmaxMode::kOnline);
}

TEST(ModelRtl, Stories260KOnSmallMatchesCpuBackendBitForBit) {
  PASSIM_REQUIRE_DATA();
  check_model(hw::kSmall, &sim::make_accel_model_small);
}

}  // namespace
