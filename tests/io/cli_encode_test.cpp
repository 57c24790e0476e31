// SPDX-License-Identifier: Apache-2.0
// `passim encode`: a random post-norm encoder's sequence in one pass on float and cpu, the
// report, and the errors for a bad shape or sequence (the rtl backend: tests/sim, cli_encode).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"

namespace {

using passim::test::run_cli;

const std::vector<std::string> kSmall = {"encode", "--dim", "16", "--hidden", "32", "--layers",
                                         "1", "--heads", "2", "--context", "16"};

std::vector<std::string> with(std::vector<std::string> args,
                              const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(CliEncode, CpuAndFloatPickAClassAndTheReportHoldsTheLogits) {
  const auto dir = std::filesystem::temp_directory_path() / "passim_cli_encode";
  std::filesystem::create_directories(dir);
  const std::string report = (dir / "encode.json").string();
  const auto cpu = run_cli(with(kSmall, {"--seq", "12", "-b", "cpu", "--report", report}));
  ASSERT_EQ(cpu.code, 0) << cpu.err;
  EXPECT_EQ(cpu.out.rfind("class ", 0), 0u) << cpu.out;
  std::ifstream in(report);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["tool"], "passim encode");
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["model"]["calibration"], "eight random sequences of 12 tokens (seeds from 1)");
  EXPECT_EQ(j["sequence_tokens"].size(), 12u);
  EXPECT_EQ(j["final_logits"].size(), 16u);  // --classes defaults to 16
  EXPECT_EQ(j["model"]["config"]["n_layers"], 1);
  const auto again = run_cli(with(kSmall, {"--seq", "12", "-b", "cpu"}));
  EXPECT_EQ(again.out, cpu.out);  // the seed fixes the weights and the tokens
  const auto other = run_cli(with(kSmall, {"--seq", "12", "-b", "float"}));
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_EQ(other.out.rfind("class ", 0), 0u) << other.out;
}

// "010" is ten tokens: decimal, never octal.
TEST(CliEncode, LeadingZerosAreDecimal) {
  const auto dir = std::filesystem::temp_directory_path() / "passim_cli_encode";
  std::filesystem::create_directories(dir);
  const std::string report = (dir / "ten.json").string();
  const auto r = run_cli(with(kSmall, {"--seq", "010", "--report", report}));
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(report);
  EXPECT_EQ(nlohmann::json::parse(in)["sequence_tokens"].size(), 10u);
}

TEST(CliEncode, BadSequencesAndShapesAreRefused) {
  for (const char* bad : {"0", "-1", "0x10", "1.5", "4097", "2147483648", ""}) {
    const auto r = run_cli(with(kSmall, {"--seq", bad}));
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("--seq: must be a decimal integer in 1..4096"), std::string::npos)
        << bad << ": " << r.err;
  }
  const auto longer = run_cli(with(kSmall, {"--seq", "17"}));
  EXPECT_EQ(longer.code, 2);
  EXPECT_NE(longer.err.find("--seq: expected 1..16 (--context), found 17"), std::string::npos)
      << longer.err;
  const auto heads = run_cli({"encode", "--dim", "16", "--heads", "3", "--seq", "4"});
  EXPECT_EQ(heads.code, 2);
  EXPECT_NE(heads.err.find("--heads 3: expected a divisor of --dim 16"), std::string::npos)
      << heads.err;
  const auto config = run_cli(with(kSmall, {"--seq", "4", "-b", "float", "--config", "tiny"}));
  EXPECT_EQ(config.code, 2);
  EXPECT_NE(config.err.find("--config tiny: only for the integer backends"), std::string::npos)
      << config.err;
  const auto seed = run_cli(with(kSmall, {"--seq", "4", "--seed", "4294967296"}));
  EXPECT_EQ(seed.code, 2);
  EXPECT_NE(seed.err.find("--seed: must be a decimal integer in 0..4294967295"),
            std::string::npos) << seed.err;
  const auto weights = run_cli(with(kSmall, {"--seq", "4", "--weights", "resident"}));
  EXPECT_EQ(weights.code, 2);
  EXPECT_NE(weights.err.find("--weights: only for --backend rtl"), std::string::npos)
      << weights.err;
  // 64 blocks of width 4096 would take 24 GiB of float weights: refused before any is made.
  const auto huge = run_cli({"encode", "--dim", "4096", "--hidden", "4096", "--layers", "64",
                             "--seq", "4", "-b", "float"});
  EXPECT_EQ(huge.code, 2);
  EXPECT_NE(huge.err.find("--dim 4096 --hidden 4096 --layers 64 --classes 16 --context 128: "
                          "expected an encoder whose float weights fit in 4 GiB, found one of "
                          "24.01 GiB"), std::string::npos) << huge.err;
  // Just over the limit reads as over it (4.003 GiB, shown rounded up).
  const auto edge = run_cli({"encode", "--dim", "2048", "--hidden", "2", "--layers", "64",
                             "--seq", "4", "-b", "float"});
  EXPECT_EQ(edge.code, 2);
  EXPECT_NE(edge.err.find("found one of 4.01 GiB"), std::string::npos) << edge.err;
  const auto missing = run_cli({"encode", "-b", "cpu"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("--seq"), std::string::npos) << missing.err;
}

}  // namespace
