// SPDX-License-Identifier: Apache-2.0
// The random post-norm encoder (model/random_model.hpp: LayerNorm after each residual add,
// attention without a mask, no final norm) compiled for the Verilated tiny accelerator:
// DeviceBackend on SimDevice gives exactly the cpu backend's int32 classifier output for whole
// sequences of 1 .. the longest one pass holds, with both Softmax forms. Every run's records
// show 2 LAYERNORM (3 passes per row) and 2 EMBED per layer and row-set, and no norm before
// the classifier.
#include <algorithm>
#include <iostream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "accel_harness.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/model/random_model.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quantize.hpp"
#include "passim/sim/sim_device.hpp"

namespace {

using namespace passim;
namespace f = hw::fields;

constexpr std::uint32_t kSeed = 15;

/// Counts instructions per opcode over every run, and checks each run's records.
class OpCounter final : public RunObserver {
 public:
  void on_run(std::span<const hw::Instr> program, const RunStats& s) override {
    const std::vector<hw::Instr> prog(program.begin(), program.end());
    (void)sim::test::check_records(prog, s, "run " + std::to_string(runs_++));
    for (const InstrRecord& r : s.records) {
      const hw::Instr& in = prog.at(r.index);
      const auto op = static_cast<hw::Opcode>(hw::get_field(in, f::kOpcode));
      ++count_[std::string(hw::opcode_name(op))];
    }
  }
  std::map<std::string, std::uint64_t> count_;

 private:
  std::uint64_t runs_ = 0;
};

std::vector<int> tokens_of(std::size_t n, int vocab, std::size_t salt) {
  std::vector<int> t(n);
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = int((i * 7 + 3 + salt * 5) % std::size_t(vocab));
  }
  return t;
}

void check_encoder(kernels::SoftmaxMode softmax, AttentionUnit attention = AttentionUnit::kAuto) {
  const FloatModel fm = random_encoder({}, kSeed);
  std::vector<std::vector<int>> docs;
  for (std::size_t d = 0; d < 8; ++d) {
    docs.push_back(tokens_of(4 + 12 * d / 7, fm.config.vocab_size, d + 1));
  }
  const QuantModel model = quantize(fm, calibrate(fm, docs));
  const ModelCompiler probe(model, hw::kTiny, {.softmax = softmax, .attention = attention});
  sim::SimOptions opts;
  opts.dram_bytes = (probe.dram_bytes() + 4095) / 4096 * 4096;
  sim::SimDevice simdev(sim::make_accel_model_tiny(false), opts);
  OpCounter ops;
  simdev.add_observer(&ops);
  DeviceBackend dev(probe, simdev);
  CpuBackend cpu(model, kernels::SoftmaxOptions{softmax, hw::kTiny.lanes});
  const std::size_t longest = probe.rows_at(0, std::size_t(fm.config.seq_len));
  ASSERT_GE(longest, 4u) << "tiny holds too few rows of the encoder";
  std::uint64_t passes = 0;
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}, longest}) {
    const std::vector<int> t = tokens_of(n, fm.config.vocab_size, n);
    cpu.forward_sequence(t, 0);
    dev.forward_sequence(t, 0);
    ++passes;
    const auto a = cpu.logits_i32(), b = dev.logits_i32();
    ASSERT_EQ(std::vector<std::int32_t>(a.begin(), a.end()),
              std::vector<std::int32_t>(b.begin(), b.end()))
        << "seed " << kSeed << ": classifier output differs for a sequence of " << n;
  }
  const auto count = [&](const char* op) { return ops.count_.count(op) ? ops.count_.at(op) : 0u; };
  const auto layers = std::uint64_t(fm.config.n_layers);
  if (attention != AttentionUnit::kAuto) {  // forced: every pass's q k^T on the array
    EXPECT_GT(count("MATMUL_ACT"), 0u);
    EXPECT_EQ(count("ATTN_SCORE"), 0u);
    EXPECT_EQ(count("ATTN_VALUE") > 0, attention == AttentionUnit::kScores);
  }
  EXPECT_EQ(count("LAYERNORM"), passes * 2 * layers);  // one per block, none in the head
  EXPECT_EQ(count("RMSNORM") + count("BATCHNORM"), 0u);
  EXPECT_EQ(count("EMBED"), passes * (2 + 2 * layers));  // tokens, positions, each block
  std::cout << "encoder on tiny: sequences of 1, 3 and " << longest << " in one pass each\n";
}

TEST(EncoderRtl, PostNormUnmaskedOnTinyMatchesCpuBackend) {
  check_encoder(kernels::SoftmaxMode::kThreePass);
}

TEST(EncoderRtl, ArrayAttentionOnTinyMatchesCpuBackend) {
  check_encoder(kernels::SoftmaxMode::kThreePass, AttentionUnit::kArray);
}

TEST(EncoderRtl, ScoresOnArrayOnTinyMatchesCpuBackend) {
  check_encoder(kernels::SoftmaxMode::kOnline, AttentionUnit::kScores);
}

TEST(EncoderRtl, OnlineSoftmaxOnTinyMatchesCpuBackend) {
  check_encoder(kernels::SoftmaxMode::kOnline);
}

}  // namespace
