// SPDX-License-Identifier: Apache-2.0
// The `passim` command line driven in-process: exact run.c text on stdout, JSON reports,
// exit codes and messages for bad input, and the quantize -> run --backend cpu path.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app.hpp"
#include "cli_run.hpp"
#include "default_model.hpp"
#include "passim/io/psm.hpp"
#include "passim/io/tokenizer.hpp"
#include "passim/model/config.hpp"
#include "passim/quant/quant_model.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace {

using passim::test::contains_all;
using passim::test::read_bytes;
using passim::test::ScratchDir;
using passim::test::write_bytes;

constexpr char kStoriesSha256[] =
    "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696";
// llama2.c run.c: ./run stories260K.bin -z tok512.bin -t 0 -n 64 -i "Once upon a time"
constexpr char kOnceUponText64[] =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
    "park. One day, she saw a big, red ball. She wanted to play with it, but it was too "
    "high.\nLily\n";

using passim::test::CliResult;
using passim::test::run_cli;

std::string model() { return passim::test::model_path().string(); }
std::string tokenizer() { return passim::test::tokenizer_path().string(); }

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(CliRun, FloatBackendPrintsRunCText) {
  PASSIM_REQUIRE_DATA();
  const auto r = run_cli({"run", "--backend", "float", "--model", model(), "--tokenizer",
                          tokenizer(), "--prompt", "Once upon a time", "--steps", "64"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, kOnceUponText64);
  EXPECT_TRUE(contains_all(r.err, {"backend float", "64 positions"}));
}

TEST(CliRun, TokenizerFoundNextToModel) {
  PASSIM_REQUIRE_DATA();
  // tok512.bin sits next to stories260K.bin in the data folder, so --tokenizer is optional.
  const auto r =
      run_cli({"run", "-b", "float", "-m", model(), "-i", "Once upon a time", "-n", "64"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, kOnceUponText64);
}

TEST(CliRun, ReportWritesJson) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto report = dir / "run.json";
  const auto r =
      run_cli({"run", "--backend", "float", "--model", model(), "--tokenizer", tokenizer(),
               "--prompt", "Once upon a time", "--steps", "64", "--report", report.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, kOnceUponText64);
  ASSERT_TRUE(std::filesystem::exists(report));
  const auto j = read_json(report);
  EXPECT_EQ(j.at("format_version"), 1);
  EXPECT_EQ(j.at("tool"), "passim run");
  EXPECT_EQ(j.at("model").at("sha256"), kStoriesSha256);
  EXPECT_EQ(j.at("model").at("path"), model());
  EXPECT_EQ(j.at("model").at("config").at("dim"), 64);
  EXPECT_EQ(j.at("model").at("config").at("seq_len"), 512);
  EXPECT_EQ(j.at("backend"), "float");
  EXPECT_EQ(j.at("prompt"), "Once upon a time");
  EXPECT_EQ(j.at("prompt_tokens").get<std::vector<int>>(),
            (std::vector<int>{1, 403, 407, 261, 378}));
  // Positions 4..63 each choose a token (position 4 is the last prompt token).
  EXPECT_EQ(j.at("generated_tokens").size(), 60u);
  EXPECT_EQ(j.at("text"), kOnceUponText64);
  EXPECT_EQ(j.at("sampling").at("steps"), 64);
  EXPECT_EQ(j.at("timings").at("positions"), 64);
  EXPECT_GT(j.at("timings").at("seconds").get<double>(), 0.0);
  EXPECT_TRUE(j.at("timings").contains("tokens_per_second"));
}

// run.c prints "achieved tok/s" only when more than one position ran (its clock starts after
// the first); one step printed "achieved tok/s: 0.0".
TEST(CliRun, TokensPerSecondOnlyWhenMoreThanOnePositionRan) {
  // As run.c (--prefill off): the clock starts after the first position.
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto report = dir / "one.json";
  const auto one = run_cli({"run", "-b", "float", "-m", model(), "-z", tokenizer(), "-i",
                            "Once upon a time", "-n", "1", "--prefill", "off", "--report",
                            report.string()});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_TRUE(contains_all(one.err, {"backend float: 1 position in"})) << one.err;
  EXPECT_EQ(one.err.find("tok/s"), std::string::npos) << one.err;
  EXPECT_TRUE(read_json(report).at("timings").at("tokens_per_second").is_null());
  const auto two = run_cli({"run", "-b", "float", "-m", model(), "-z", tokenizer(), "-i",
                            "Once upon a time", "-n", "2", "--prefill", "off", "--report",
                            report.string()});
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_TRUE(contains_all(two.err, {"backend float: 2 positions in", "achieved tok/s: "}))
      << two.err;
  EXPECT_TRUE(read_json(report).at("timings").at("tokens_per_second").is_number());
}

TEST(CliRun, TokensPerSecondAfterThePrefillOnly) {
  // With prefill the clock starts after the prompt's pass: no figure until a position follows.
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto report = dir / "prefill.json";
  const std::vector<std::string> base = {"run", "-b", "cpu", "-m", model(), "-z", tokenizer(),
                                         "-i", "Once upon a time", "--report", report.string()};
  auto with = [&](const char* steps) {
    auto args = base;
    args.insert(args.end(), {"-n", steps});
    return run_cli(args);
  };
  const auto prompt_only = with("3");
  ASSERT_EQ(prompt_only.code, 0) << prompt_only.err;
  EXPECT_TRUE(contains_all(prompt_only.err, {"3 positions in", "(prefill 3 in"}))
      << prompt_only.err;
  EXPECT_EQ(prompt_only.err.find("tok/s"), std::string::npos) << prompt_only.err;
  const auto more = with("12");
  ASSERT_EQ(more.code, 0) << more.err;
  EXPECT_TRUE(contains_all(more.err, {"12 positions in", "(prefill ", "achieved tok/s: "}))
      << more.err;
  const auto t = read_json(report).at("timings");
  EXPECT_GE(t.at("prefill_positions").get<int>(), 4);
  EXPECT_TRUE(t.at("tokens_per_second").is_number());
}

// The tokenizer found next to the model (no --tokenizer) is an input too: no report or model
// file replaces it.
TEST(CliRun, OutputsNeverOverwriteTheTokenizerFoundNextToTheModel) {
  PASSIM_REQUIRE_DATA();
  ScratchDir dir;
  const auto copy = dir.path() / "m.bin";
  const auto tok = dir.path() / "tok512.bin";
  std::filesystem::copy_file(model(), copy);
  std::filesystem::copy_file(tokenizer(), tok);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "-m", copy.string(), "-b", "float", "-n", "2",
                                 "--report", tok.string()},
        std::vector<std::string>{"quantize", "-m", copy.string(), "-o", tok.string()}}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 1) << args[0];
    EXPECT_NE(r.err.find("is the tokenizer; not overwritten"), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_bytes(tok), read_bytes(tokenizer()));
}

TEST(CliRun, ReportOrTraceNeverOverwriteAnInput) {
  PASSIM_REQUIRE_DATA();
  ScratchDir dir;
  const auto copy = dir.path() / "m.bin";
  const auto tok = dir.path() / "tok.bin";
  std::filesystem::copy_file(model(), copy);
  std::filesystem::copy_file(tokenizer(), tok);
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--report", copy.string()}, {"--report", tok.string()}, {"--trace", copy.string()}};
  for (const auto& [option, target] : cases) {
    const auto r = run_cli({"run", "-m", copy.string(), "-z", tok.string(), "-b", "float", "-n",
                            "2", option, target});
    EXPECT_EQ(r.code, 1) << option << " " << target;
    EXPECT_NE(r.err.find("not overwritten"), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_bytes(copy), read_bytes(model()));
  EXPECT_EQ(read_bytes(tok), read_bytes(tokenizer()));
  const auto same = (dir.path() / "out").string();
  const auto r = run_cli({"run", "-m", copy.string(), "-z", tok.string(), "-b", "float", "-n",
                          "2", "--report", same, "--trace", same});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("the same file as --report"), std::string::npos) << r.err;
}

// --trace and quantize --out replace the file they write: an existing device, pipe or socket
// (here a FIFO) is refused up front and left as it is.
TEST(CliRun, TraceOrOutNeverReplaceASpecialFile) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t = run_cli({"run", "-m", model(), "-z", tokenizer(), "-b", "rtl", "-n", "2",
                          "--trace", fifo.string()});
  EXPECT_EQ(t.code, 1);
  EXPECT_TRUE(contains_all(t.err, {"--trace", "expected a regular file", "not replaced"})) << t.err;
  const auto q = run_cli({"quantize", "-m", model(), "-z", tokenizer(), "--out", fifo.string()});
  EXPECT_EQ(q.code, 1);
  EXPECT_TRUE(contains_all(q.err, {"--out", "expected a regular file", "not replaced"})) << q.err;
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
}

TEST(CliRun, PromptLongerThanSeqLenFails) {
  PASSIM_REQUIRE_DATA();
  std::string prompt;
  for (int i = 0; i < 600; ++i) {
    prompt += i == 0 ? "cat" : " cat";
  }
  const auto tok = passim::Tokenizer::load(passim::test::tokenizer_path(), 512);
  const std::size_t n_tokens = tok.encode(prompt, true, false).size();
  ASSERT_GT(n_tokens, 512u);
  const auto r = run_cli({"run", "--backend", "float", "--model", model(), "--tokenizer",
                          tokenizer(), "--prompt", prompt});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains_all(r.err, {"prompt", "expected at most seq_len = 512 tokens",
                                   "found " + std::to_string(n_tokens) + " tokens"}));
}

// On the integer backends the prompt is checked before the float model is calibrated and
// quantised: no "quantising" or "calibration" notice comes before the refusal.
TEST(CliRun, PromptLongerThanSeqLenFailsBeforeQuantising) {
  PASSIM_REQUIRE_DATA();
  std::string prompt;
  for (int i = 0; i < 600; ++i) {
    prompt += i == 0 ? "cat" : " cat";
  }
  const auto r = run_cli({"run", "--backend", "cpu", "--model", model(), "--tokenizer",
                          tokenizer(), "--prompt", prompt});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains_all(r.err, {model() + ": prompt: expected at most seq_len = 512 tokens"}))
      << r.err;
  EXPECT_EQ(r.err.find("quantising"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("calibration"), std::string::npos) << r.err;
}

TEST(CliRun, StepsAboveSeqLenAreClampedWithNotice) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto report = dir / "clamped.json";
  const auto r = run_cli({"run", "--backend", "float", "--model", model(), "--tokenizer",
                          tokenizer(), "--steps", "1000", "--report", report.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains_all(r.err, {"notice", "--steps 1000", "1..512", "using 512"}));
  EXPECT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(read_json(report).at("sampling").at("steps"), 512);
}

TEST(CliRun, StepsZeroMeansSeqLen) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto report = dir / "zero.json";
  const auto r = run_cli({"run", "-b", "float", "-m", model(), "-z", tokenizer(), "-n", "0",
                          "--report", report.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains_all(r.err, {"notice", "using 512"}));
  EXPECT_EQ(read_json(report).at("sampling").at("steps"), 512);
}

// Whole-number options are decimal: CLI11 alone read "010" as octal eight and "0x10" as hex,
// and a --steps past int range wrapped. Leading zeros are dropped, anything else is a usage
// error naming the option and its range. (The built-in model: no files needed.)
TEST(CliRun, IntegerOptionsAreDecimal) {
  if (passim::app::default_model_bytes().empty()) {
    GTEST_SKIP() << "built without the default model";
  }
  const ScratchDir dir;
  const auto report = dir / "decimal.json";
  const auto r = run_cli({"run", "-b", "cpu", "-n", "010", "--seed", "007", "-t", "0.5",
                          "--report", report.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = read_json(report);
  EXPECT_EQ(j.at("sampling").at("steps"), 10);
  EXPECT_EQ(j.at("sampling").at("seed"), 7);
  const auto neg = run_cli({"run", "-b", "cpu", "-n", "-010", "--report", report.string()});
  ASSERT_EQ(neg.code, 0) << neg.err;
  EXPECT_TRUE(contains_all(neg.err, {"--steps -10 is outside"})) << neg.err;
  for (const auto& [args, expected] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"-n", "0x10"}, "--steps"},
           {{"-n", "2147483648"}, "-2147483648..2147483647"},
           {{"-n", "+5"}, "--steps"},
           {{"--seed", "0x10"}, "--seed"},
           {{"--seed", "18446744073709551616"}, "--seed"},
           {{"--max-cycles", "1e6"}, "--max-cycles"}}) {
    std::vector<std::string> argv = {"run", "-b", "cpu"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto bad = run_cli(argv);
    EXPECT_EQ(bad.code, 2) << args[0] << " " << args[1] << ": " << bad.err;
    EXPECT_TRUE(contains_all(bad.err, {expected})) << bad.err;
  }
}

// An empty value is a usage error naming the option: --model "" used to run the built-in
// model and --report "" to write no report, silently.
TEST(CliRun, EmptyValuesAreRefused) {
  for (const std::string opt : {"--model", "--report", "--tokenizer", "--trace"}) {
    const auto r = run_cli({"run", "-b", "cpu", "-n", "2", opt, ""});
    EXPECT_EQ(r.code, 2) << opt << ": " << r.err;
    EXPECT_TRUE(contains_all(r.err, {opt, "expected a value, found an empty string"})) << r.err;
  }
  if (!passim::app::default_model_bytes().empty()) {  // an empty prompt is run.c's default
    EXPECT_EQ(run_cli({"run", "-b", "cpu", "-n", "2", "--prompt", ""}).code, 0);
  }
}

TEST(CliRun, TruncatedModelFails) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto path = dir / "truncated.bin";
  auto bytes = read_bytes(passim::test::model_path());
  bytes.resize(bytes.size() / 2);
  write_bytes(path, bytes);
  const auto r = run_cli({"run", "--backend", "float", "--model", path.string(), "--tokenizer",
                          tokenizer(), "--prompt", "Once upon a time"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains_all(r.err, {path.string(), "file size", "truncated"}));
}

// NaN scores for tokens 403 and 407 of tok512.bin changed how the prompt encodes, and the run
// still exited 0.
TEST(CliRun, NonFiniteTokenizerScoreFails) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto path = dir / "tok_nan.bin";
  auto bytes = read_bytes(passim::test::tokenizer_path());
  std::size_t off = 4;  // int32 max_token_length, then (float32 score, int32 length, bytes)
  for (int id = 0; id <= 407; ++id) {
    if (id == 403 || id == 407) {
      passim::test::patch(bytes, off, std::numeric_limits<float>::quiet_NaN());
    }
    std::int32_t len = 0;
    std::memcpy(&len, bytes.data() + off + 4, 4);
    off += 8 + std::size_t(len);
  }
  write_bytes(path, bytes);
  const auto r = run_cli({"run", "--model", model(), "--tokenizer", path.string(), "--prompt",
                          "Once upon a time", "--steps", "8"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains_all(r.err, {path.string(), "token 403 score", "expected a finite float",
                                   "found nan"}))
      << r.err;
}

TEST(CliRun, MissingModelFileFails) {
  const ScratchDir dir;
  const auto path = dir / "absent.bin";
  const auto r =
      run_cli({"run", "--backend", "float", "--model", path.string(), "--tokenizer", tokenizer()});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains_all(r.err, {path.string(), "not found"}));
}

TEST(CliRun, MissingTokenizerFails) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto path = dir / "absent_tok.bin";
  const auto r =
      run_cli({"run", "--backend", "float", "--model", model(), "--tokenizer", path.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains_all(r.err, {path.string(), "not found"}));
}

TEST(CliRun, UnknownBackendIsUsageError) {
  PASSIM_REQUIRE_DATA();
  const auto r =
      run_cli({"run", "--backend", "gpu", "--model", model(), "--tokenizer", tokenizer()});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains_all(r.err, {"backend", "gpu"}));
}

// Without --model, run uses the built-in LayerNorm character GPT (no file on disk needed);
// a build without it says that --model is required (a usage error, exit 2).
TEST(CliRun, WithoutModelRunsTheBuiltInModel) {
  const auto r = run_cli({"run", "--backend", "float", "--prompt", "ROMEO:", "--steps", "40"});
  if (passim::app::default_model_bytes().empty()) {
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(contains_all(r.err, {"--model", "default model"}));
    return;
  }
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("ROMEO:", 0), 0u) << r.out;
  EXPECT_GT(r.out.size(), 30u) << r.out;
}

TEST(CliRun, NoSubcommandIsUsageError) {
  const auto r = run_cli({});
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(r.err.empty());
}

TEST(CliRun, HelpExitsZero) {
  const auto r = run_cli({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains_all(r.out + r.err, {"run", "quantize", "perplexity"}));
}

/// stories260K quantised by `passim quantize` into dir/stories260K.psm; "" on success, else
/// the command's error output.
std::string quantize_into(const ScratchDir& dir) {
  const auto q = run_cli({"quantize", "--model", model(), "--tokenizer", tokenizer(), "--out",
                          (dir / "stories260K.psm").string()});
  return q.code == 0 ? "" : "exit " + std::to_string(q.code) + ": " + q.err;
}

TEST(CliRun, FloatBackendWithPsmModelFails) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  ASSERT_EQ(quantize_into(dir), "");
  const auto psm = dir / "stories260K.psm";
  const auto r = run_cli({"run", "--backend", "float", "--model", psm.string(), "--tokenizer",
                          tokenizer(), "--prompt", "Once upon a time"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains_all(r.err, {psm.string(), "backend float", ".psm"}));
}

TEST(CliRun, PsmWithADamagedMagicIsNamedSo) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  ASSERT_EQ(quantize_into(dir), "");
  const auto psm = dir / "stories260K.psm";
  auto bytes = read_bytes(psm);
  bytes[0] = 'Q';  // "QASSIMQ": was reported as a bad llama2.c header
  write_bytes(psm, bytes);
  const auto r = run_cli({"run", "--model", psm.string(), "--tokenizer", tokenizer(),
                          "--prompt", "Once upon a time", "--steps", "4"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains_all(r.err, {psm.string(), "magic", "PASSIMQ", "damaged .psm"})) << r.err;
  EXPECT_FALSE(contains_all(r.err, {"llama2.c"})) << r.err;
}

TEST(CliQuantize, WritesPsmThatCpuBackendRuns) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto psm = dir / "stories260K.psm";
  const auto q =
      run_cli({"quantize", "--model", model(), "--tokenizer", tokenizer(), "--out", psm.string()});
  ASSERT_EQ(q.code, 0) << q.err;
  EXPECT_EQ(q.out, "");
  EXPECT_TRUE(contains_all(q.err, {"calibration", "wrote", psm.string()}));
  ASSERT_TRUE(passim::is_psm_file(psm));
  const auto loaded = passim::load_psm(psm);
  EXPECT_EQ(loaded.source_sha256, kStoriesSha256);
  EXPECT_EQ(loaded.config.dim, 64);

  const auto report = dir / "cpu.json";
  const auto r =
      run_cli({"run", "--backend", "cpu", "--model", psm.string(), "--tokenizer", tokenizer(),
               "--prompt", "Once upon a time", "--steps", "64", "--report", report.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_GT(r.out.size(), std::string("Once upon a time\n").size());
  EXPECT_EQ(r.out.rfind("Once upon a time", 0), 0u) << r.out;
  EXPECT_EQ(r.out.back(), '\n');
  const auto j = read_json(report);
  EXPECT_EQ(j.at("backend"), "cpu");
  EXPECT_EQ(j.at("model").at("sha256"), passim::sha256_hex(read_bytes(psm)));
  EXPECT_EQ(j.at("text"), r.out);
  EXPECT_EQ(j.at("generated_tokens").size(), 60u);
}

// --softmax online runs the two-pass Softmax in the lane order of --config, and the report
// says so; the float backend has no integer Softmax to switch.
TEST(CliRun, OnlineSoftmaxOnCpuBackendIsReported) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto online = dir / "online.json";
  const auto three = dir / "three.json";
  const std::vector<std::string> args = {"run", "-b", "cpu", "-m", model(), "-z", tokenizer(),
                                         "-i", "Once upon a time", "-n", "8", "--config", "tiny"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = args;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_cli(a);
  };
  const auto a = with({"--softmax", "online", "--report", online.string()});
  ASSERT_EQ(a.code, 0) << a.err;
  const auto b = with({"--report", three.string()});
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(read_json(online).at("softmax"),
            (nlohmann::json{{"mode", "online"}, {"lanes", 2}}));
  EXPECT_EQ(read_json(three).at("softmax"), (nlohmann::json{{"mode", "3pass"}}));
  EXPECT_EQ(with({"--softmax", "two"}).code, 2);
  const auto f = run_cli({"run", "-b", "float", "-m", model(), "-z", tokenizer(), "-n", "4",
                          "--softmax", "online"});
  EXPECT_EQ(f.code, 2);
  EXPECT_TRUE(contains_all(f.err, {"--softmax online", "float"})) << f.err;
}

TEST(CliRun, CpuBackendOnCheckpointMatchesSavedPsm) {
  PASSIM_REQUIRE_DATA();
  // `run --backend cpu` on a .bin quantises in memory with the same default calibration as
  // `quantize`, so both paths must print the same text.
  const ScratchDir dir;
  const auto psm = dir / "stories260K.psm";
  ASSERT_EQ(run_cli({"quantize", "-m", model(), "-z", tokenizer(), "-o", psm.string()}).code, 0);
  const std::vector<std::string> common = {"--tokenizer",      tokenizer(), "--prompt",
                                           "Once upon a time", "--steps",   "64",
                                           "--backend",        "cpu"};
  auto from_bin = std::vector<std::string>{"run", "--model", model()};
  from_bin.insert(from_bin.end(), common.begin(), common.end());
  auto from_psm = std::vector<std::string>{"run", "--model", psm.string()};
  from_psm.insert(from_psm.end(), common.begin(), common.end());
  const auto a = run_cli(from_bin);
  const auto b = run_cli(from_psm);
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_TRUE(contains_all(a.err, {"quantising", "in memory"}));
  EXPECT_EQ(b.err.find("quantising"), std::string::npos) << b.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(CliPerplexity, FloatBackendMatchesReferenceStories) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto report = dir / "ppl.json";
  const auto r =
      run_cli({"perplexity", "--backend", "float", "--model", model(), "--tokenizer", tokenizer(),
               "--text", passim::test::sample_text_path().string(), "--report", report.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("perplexity ", 0), 0u) << r.out;
  EXPECT_TRUE(contains_all(r.out, {"backend float"}));
  const auto j = read_json(report);
  EXPECT_EQ(j.at("format_version"), 1);
  EXPECT_EQ(j.at("backend"), "float");
  EXPECT_EQ(j.at("model").at("sha256"), kStoriesSha256);
  const auto& docs = j.at("documents");
  ASSERT_EQ(docs.size(), 5u);
  // Reference: shared/data/reference/stories260K_greedy.md (run.c, fp32), stories 0-2.
  const int tokens[] = {374, 330, 223};
  const double sum_nll[] = {490.863986, 407.484730, 211.395993};
  for (std::size_t d = 0; d < 3; ++d) {
    SCOPED_TRACE("story " + std::to_string(d));
    EXPECT_EQ(docs[d].at("tokens"), tokens[d]);
    // Same float32 arithmetic in run.c's order; the reference prints only 6 decimals.
    EXPECT_NEAR(docs[d].at("sum_nll").get<double>(), sum_nll[d], 1e-5);
  }
  EXPECT_DOUBLE_EQ(j.at("perplexity").get<double>(), std::exp(j.at("mean_nll").get<double>()));
}

TEST(CliPerplexity, ReportNeverOverwritesTheText) {
  PASSIM_REQUIRE_DATA();
  ScratchDir dir;
  const auto text = dir.path() / "t.txt";
  { std::ofstream(text) << "Once upon a time there was a cat."; }
  const auto r = run_cli({"perplexity", "-m", model(), "-z", tokenizer(), "-b", "float",
                          "--text", text.string(), "--report", text.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is the text; not overwritten"), std::string::npos) << r.err;
  EXPECT_EQ(read_bytes(text).size(), 33U);
}

TEST(CliPerplexity, MissingTextIsUsageError) {
  PASSIM_REQUIRE_DATA();
  const auto r = run_cli({"perplexity", "--model", model(), "--tokenizer", tokenizer()});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains_all(r.err, {"--text"}));
}

TEST(CliPerplexity, TextWithoutDocumentsFails) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto text = dir / "blank.txt";
  write_bytes(text,
              {' ', '\n', '<', '|', 'e', 'n', 'd', 'o', 'f', 't', 'e', 'x', 't', '|', '>', '\n'});
  const auto r = run_cli(
      {"perplexity", "-b", "float", "-m", model(), "-z", tokenizer(), "--text", text.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains_all(r.err, {text.string(), "no non-empty document"}));
}

/// How often `part` occurs in `text`.
std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++n;
  }
  return n;
}

// Each perplexity error names the text file once: a reading error by itself, an evaluation
// error with the model (it depends on the model's context and tokenizer).
TEST(CliPerplexity, ErrorsNameTheTextFileOnce) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto blank = dir / "empty.txt";
  write_bytes(blank, {' ', '\n'});
  const auto absent = dir / "absent.txt";
  const auto long_doc = dir / "long.txt";
  write_bytes(long_doc, std::vector<std::uint8_t>(5000, 'a'));
  for (const char* backend : {"float", "cpu"}) {
    SCOPED_TRACE(backend);
    auto ppl = [&](const std::filesystem::path& text) {
      return run_cli({"perplexity", "-b", backend, "-m", model(), "-z", tokenizer(), "--text",
                      text.string()});
    };
    const auto b = ppl(blank);
    EXPECT_EQ(b.code, 1);
    EXPECT_TRUE(contains_all(b.err, {"passim: error: " + blank.string() +
                                     ": no non-empty document in the text"}))
        << b.err;
    EXPECT_EQ(count_of(b.err, blank.string()), 1u) << b.err;
    const auto a = ppl(absent);
    EXPECT_EQ(a.code, 1);
    EXPECT_TRUE(contains_all(a.err, {"passim: error: " + absent.string() + ": file not found"}))
        << a.err;
    EXPECT_EQ(count_of(a.err, absent.string()), 1u) << a.err;
    const auto l = ppl(long_doc);
    EXPECT_EQ(l.code, 1);
    EXPECT_TRUE(contains_all(l.err, {long_doc.string() + " (model " + model() +
                                     "): document 0: expected at most seq_len = 512 tokens, "
                                     "found at least 714 tokens (the document has 5000 bytes; "
                                     "no piece of the vocabulary has more than 7 bytes)"}))
        << l.err;
    EXPECT_EQ(count_of(l.err, long_doc.string()), 1u) << l.err;
  }
}

TEST(CliQuantize, RefusesPsmInput) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto psm = dir / "a.psm";
  ASSERT_EQ(run_cli({"quantize", "-m", model(), "-z", tokenizer(), "-o", psm.string()}).code, 0);
  const auto r =
      run_cli({"quantize", "-m", psm.string(), "-z", tokenizer(), "-o", (dir / "b.psm").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains_all(r.err, {psm.string(), "already a quantised"}));
  EXPECT_FALSE(std::filesystem::exists(dir / "b.psm"));
}

TEST(CliQuantize, MissingOutIsUsageError) {
  PASSIM_REQUIRE_DATA();
  const auto r = run_cli({"quantize", "--model", model(), "--tokenizer", tokenizer()});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains_all(r.err, {"--out"}));
}

}  // namespace

namespace {

TEST(CliRun, NonFiniteSamplingOptionsAreUsageErrors) {
  PASSIM_REQUIRE_DATA();
  for (const char* bad : {"nan", "inf", "abc"}) {
    const auto r = run_cli({"run", "-m", model(), "-z", tokenizer(), "-b", "float", "-n", "4",
                            "-t", bad});
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("--temperature"), std::string::npos) << r.err;
  }
  const auto p = run_cli({"run", "-m", model(), "-z", tokenizer(), "-b", "float", "-n", "4",
                          "-t", "1", "-p", "nan"});
  EXPECT_EQ(p.code, 2);
  EXPECT_NE(p.err.find("--top-p"), std::string::npos) << p.err;
}

TEST(CliRun, VanishingTemperatureFallsBackToGreedy) {
  PASSIM_REQUIRE_DATA();
  const auto r = run_cli({"run", "-m", model(), "-z", tokenizer(), "-b", "float", "-n", "64",
                          "-i", "Once upon a time", "-t", "1e-38"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, kOnceUponText64);
}

TEST(CliRun, SeedZeroAndNegativeSeedsAreUsageErrors) {
  PASSIM_REQUIRE_DATA();
  for (const char* bad : {"0", "-1", "18446744073709551616"}) {
    const auto r = run_cli({"run", "-m", model(), "-z", tokenizer(), "-b", "float", "-n", "4",
                            "-t", "1", "-s", bad});
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("--seed"), std::string::npos) << r.err;
  }
}

TEST(CliRun, NonUtf8PromptStillWritesReport) {
  PASSIM_REQUIRE_DATA();
  ScratchDir dir;
  const auto report = dir.path() / "r.json";
  const auto r = run_cli({"run", "-m", model(), "-z", tokenizer(), "-b", "float", "-n", "4",
                          "-i", "\xff\xfe", "--report", report.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_json(report)["format_version"], 1);
}

TEST(CliRun, ReportInMissingFolderFailsBeforeRunning) {
  PASSIM_REQUIRE_DATA();
  const auto r = run_cli({"run", "-m", model(), "-z", tokenizer(), "-b", "float", "-n", "4",
                          "--report", "/nonexistent-passim-dir/r.json"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(r.out.empty()) << "generated before checking the report path";
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
}

TEST(CliQuantize, NeverOverwritesTheInputOrAFolder) {
  PASSIM_REQUIRE_DATA();
  ScratchDir dir;
  const auto copy = dir.path() / "m.bin";
  std::filesystem::copy_file(model(), copy);
  const auto r = run_cli({"quantize", "-m", copy.string(), "-z", tokenizer(), "-o",
                          copy.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is the input model"), std::string::npos) << r.err;
  EXPECT_EQ(read_bytes(copy), read_bytes(model()));
  const auto d = run_cli({"quantize", "-m", copy.string(), "-z", tokenizer(), "-o",
                          dir.path().string()});
  EXPECT_EQ(d.code, 1);
  EXPECT_NE(d.err.find("is a folder"), std::string::npos) << d.err;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_NE(entry.path().extension(), ".tmp") << "left behind: " << entry.path();
  }
}

std::string gguf_model() { return passim::test::gguf_model_path().string(); }
constexpr char kGgufSha256[] = "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d";

/// `passim run <args> --report <file>`; returns the result and the report.
std::pair<CliResult, nlohmann::json> run_with_report(std::vector<std::string> args) {
  const ScratchDir dir;
  const auto report = dir / "run.json";
  args.insert(args.begin(), "run");
  args.push_back("--report");
  args.push_back(report.string());
  CliResult r = run_cli(args);
  nlohmann::json j;
  if (r.code == 0) {
    j = read_json(report);
  }
  return {r, j};
}

TEST(CliRunGguf, FloatTextMatchesRunC) {
  PASSIM_REQUIRE_GGUF();
  // No --tokenizer: it comes from the GGUF metadata.
  const auto r = run_cli(
      {"run", "-b", "float", "-m", gguf_model(), "-i", "Once upon a time", "-n", "64"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, kOnceUponText64);
}

TEST(CliRunGguf, SameTokenIdsAsBinOnFloatAndCpu) {
  PASSIM_REQUIRE_GGUF();
  for (const char* backend : {"float", "cpu"}) {
    SCOPED_TRACE(backend);
    const auto [g, jg] = run_with_report(
        {"-b", backend, "-m", gguf_model(), "-i", "Once upon a time", "-n", "32"});
    ASSERT_EQ(g.code, 0) << g.err;
    const auto [b, jb] = run_with_report(
        {"-b", backend, "-m", model(), "-z", tokenizer(), "-i", "Once upon a time", "-n", "32"});
    ASSERT_EQ(b.code, 0) << b.err;
    EXPECT_EQ(g.out, b.out);
    EXPECT_EQ(jg.at("prompt_tokens"), jb.at("prompt_tokens"));
    EXPECT_EQ(jg.at("generated_tokens"), jb.at("generated_tokens"));
    EXPECT_EQ(jg.at("generated_tokens").size(), 28u);  // positions 4..31
    EXPECT_EQ(jg.at("model").at("sha256"), kGgufSha256);
    EXPECT_EQ(jg.at("model").at("config").at("seq_len"), 2048);  // llama.context_length
    EXPECT_EQ(jg.at("model").at("config").at("shared_classifier"), true);
  }
}

TEST(CliRunGguf, FormatIsToldByContentNotName) {
  PASSIM_REQUIRE_GGUF();
  const ScratchDir dir;
  const auto gguf_as_bin = dir / "model.bin";  // no tokenizer next to it: none is needed
  const auto bin_as_gguf = dir / "model.gguf";
  std::filesystem::copy_file(gguf_model(), gguf_as_bin);
  std::filesystem::copy_file(model(), bin_as_gguf);
  const auto a = run_cli({"run", "-b", "float", "-m", gguf_as_bin.string(), "-i",
                          "Once upon a time", "-n", "64"});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, kOnceUponText64);
  const auto b = run_cli({"run", "-b", "float", "-m", bin_as_gguf.string(), "-z", tokenizer(),
                          "-i", "Once upon a time", "-n", "64"});
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(b.out, kOnceUponText64);
}

TEST(CliRunGguf, TokenizerTakenFromAGgufFile) {
  PASSIM_REQUIRE_GGUF();
  // A llama2.c model with the tokenizer of the GGUF file (-z accepts either format).
  const auto r = run_cli({"run", "-b", "float", "-m", model(), "-z", gguf_model(), "-i",
                          "Once upon a time", "-n", "64"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, kOnceUponText64);
}

TEST(CliQuantizeGguf, QuantisedModelRunsLikeTheBin) {
  PASSIM_REQUIRE_GGUF();
  const ScratchDir dir;
  const auto psm = dir / "stories260K.psm";
  const auto q = run_cli({"quantize", "-m", gguf_model(), "-o", psm.string()});
  ASSERT_EQ(q.code, 0) << q.err;
  ASSERT_TRUE(passim::is_psm_file(psm));
  const auto [g, jg] = run_with_report(
      {"-b", "cpu", "-m", psm.string(), "-z", gguf_model(), "-i", "The cat", "-n", "32"});
  ASSERT_EQ(g.code, 0) << g.err;
  const auto [b, jb] = run_with_report(
      {"-b", "cpu", "-m", model(), "-z", tokenizer(), "-i", "The cat", "-n", "32"});
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(g.out, b.out);
  EXPECT_EQ(jg.at("generated_tokens"), jb.at("generated_tokens"));
}

TEST(CliRunGguf, CorruptGgufFailsNamingTheField) {
  PASSIM_REQUIRE_GGUF();
  const ScratchDir dir;
  const auto cut = dir / "cut.gguf";
  auto bytes = read_bytes(gguf_model());
  bytes.resize(5000);  // inside the token strings
  write_bytes(cut, bytes);
  const auto r = run_cli({"run", "-b", "float", "-m", cut.string(), "-n", "4"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains_all(r.err, {"passim: error: ", cut.string(),
                                   "metadata 'tokenizer.ggml.tokens'", "truncated"}));
  const auto t = run_cli({"run", "-b", "float", "-m", model(), "-z", cut.string(), "-n", "4"});
  EXPECT_EQ(t.code, 1);
  EXPECT_TRUE(contains_all(t.err, {cut.string(), "metadata 'tokenizer.ggml.tokens'"}));
}

}  // namespace

namespace {

TEST(CliRun, RtlBackendWithoutSimulatorFailsClearly) {
  PASSIM_REQUIRE_DATA();
  const auto r = run_cli({"run", "-m", model(), "-z", tokenizer(), "-b", "rtl", "-n", "4"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("without the RTL simulator"), std::string::npos) << r.err;
}

}  // namespace

namespace {

using passim::InstrRecord;
namespace hw = passim::hw;


}  // namespace

// ---- the built-in character GPT: accuracy, windows, BatchNorm options -----------------------

namespace gpt_cli {

constexpr const char* kVerse =
    "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n"
    "First Citizen:\nYou are all resolved rather to die than to famish?\n\nAll:\nResolved. "
    "resolved.\n\nFirst Citizen:\nFirst, you know Caius Marcius is chief enemy to the people."
    "\n\nAll:\nWe know't, we know't.\n\nFirst Citizen:\nLet us kill him, and we'll have corn "
    "at our own price.\nIs't a verdict?\n";

std::string write_verse(const ScratchDir& dir) {
  const auto path = dir / "verse.txt";
  std::ofstream(path) << kVerse;
  return path.string();
}

}  // namespace gpt_cli

// `passim accuracy` on the built-in model: a per-layer table with layer 0 the input
// quantisation, both perplexities, and a JSON report with the same numbers.
TEST(CliAccuracy, BuiltInModelPerLayerTableAndReport) {
  if (passim::app::default_model_bytes().empty()) {
    GTEST_SKIP() << "built without the default model";
  }
  const ScratchDir dir;
  const auto text = gpt_cli::write_verse(dir);
  const auto report = dir / "acc.json";
  const auto r = run_cli({"accuracy", "--text", text, "--report", report.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains_all(r.out, {"0 input quantisation", "4 block 3 output", "logits",
                                   "perplexity: float", "int8"}))
      << r.out;
  const auto j = read_json(report);
  EXPECT_EQ(j.at("tool"), "passim accuracy");
  ASSERT_EQ(j.at("layers").size(), 5u);  // input quantisation + 4 blocks
  EXPECT_EQ(j.at("text").at("positions"), 2 * 128);  // two full windows of the verse
  for (const auto& l : j.at("layers")) {
    EXPECT_GT(l.at("cosine").get<double>(), 0.99) << l.dump();
    EXPECT_GT(l.at("max_abs_err_lsb").get<double>(), 0.0) << l.dump();
  }
  const double pf = j.at("perplexity").at("float"), pi = j.at("perplexity").at("int8");
  EXPECT_GT(pf, 1.0);
  EXPECT_LT(std::fabs(pi / pf - 1), 0.1) << pf << " " << pi;
  EXPECT_TRUE(j.at("warnings").empty()) << j.at("warnings").dump();
}

// A .psm has no float weights to compare with: named error, exit 1.
// A .psm has no float model: accuracy shows its layers' saturated and zero shares alone, and
// a .psm whose block 2 has FFN steps 4x too large (their shift lowered by 2, the checksum
// rewritten) is named there, and by run's self-check; it used to run silently, with degraded
// text.
TEST(CliAccuracy, QuantisedModelShowsItsLayersAndAWrongScaleIsNamed) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto psm = dir / "s.psm";
  ASSERT_EQ(run_cli({"quantize", "-m", model(), "-z", tokenizer(), "-o", psm.string()}).code, 0);
  const std::string text = passim::test::sample_text_path().string();
  const auto good = run_cli({"accuracy", "-m", psm.string(), "-z", tokenizer(), "--text", text});
  EXPECT_EQ(good.code, 0) << good.err;
  EXPECT_TRUE(contains_all(good.out, {"alone (a .psm has no float model)", "3 block 2 output",
                                      "perplexity: int8"})) << good.out;
  EXPECT_EQ(good.err.find("saturated"), std::string::npos) << good.err;
  const auto run_good = run_cli({"run", "-m", psm.string(), "-z", tokenizer(), "-n", "8"});
  EXPECT_EQ(run_good.err.find("self-check"), std::string::npos) << run_good.err;

  passim::QuantModel q = passim::load_psm(psm);
  for (auto* steps : {&q.layers[2].rq_1, &q.layers[2].rq_3}) {
    for (passim::Requant& r : *steps) {
      r.shift = std::max(r.shift - 2, 0);
    }
  }
  const auto broken = dir / "broken.psm";
  passim::save_psm(q, broken);
  const auto bad = run_cli({"accuracy", "-m", broken.string(), "-z", tokenizer(), "--text", text});
  EXPECT_EQ(bad.code, 0) << bad.err;
  EXPECT_TRUE(contains_all(bad.err, {"layer 3 (block 2)", "of its up values are saturated"}))
      << bad.err;
  const auto run_bad = run_cli({"run", "-m", broken.string(), "-z", tokenizer(), "-n", "8"});
  EXPECT_EQ(run_bad.code, 0) << run_bad.err;
  EXPECT_TRUE(contains_all(run_bad.err, {"self-check", "layer 3 (block 2)", "saturated"}))
      << run_bad.err;
}

// Character-model options on a llama model, and BatchNorm options on a LayerNorm model, are
// refused with the option named, as usage errors (exit 2).
TEST(CliAccuracy, OptionsThatDoNotApplyAreRefused) {
  if (passim::app::default_model_bytes().empty()) {
    GTEST_SKIP() << "built without the default model";
  }
  const ScratchDir dir;
  const auto text = gpt_cli::write_verse(dir);
  const auto bn = run_cli({"run", "--batchnorm", "folded", "-n", "4"});
  EXPECT_EQ(bn.code, 2);
  EXPECT_TRUE(contains_all(bn.err, {"--batchnorm folded", "no BatchNorm", "layernorm"})) << bn.err;
  const auto split = run_cli({"perplexity", "--text", text, "--split", "test"});
  EXPECT_EQ(split.code, 2);
  const auto short_text = dir / "short.txt";
  std::ofstream(short_text) << "Speak, speak.";
  const auto few = run_cli({"perplexity", "--text", short_text.string()});
  EXPECT_EQ(few.code, 1);
  EXPECT_TRUE(contains_all(few.err, {"short.txt", "seq_len = 128", "found 13"})) << few.err;
  const auto odd = dir / "odd.txt";
  std::ofstream(odd) << "caf\xC3\xA9 au lait";
  const auto bad = run_cli({"perplexity", "--text", odd.string()});
  EXPECT_EQ(bad.code, 1);
  EXPECT_TRUE(contains_all(bad.err, {"odd.txt", "is not in the 65-character vocabulary"}))
      << bad.err;
  if (std::filesystem::exists(passim::test::model_path())) {
    const auto llama = run_cli({"perplexity", "-m", model(), "-z", tokenizer(), "--text",
                                passim::test::sample_text_path().string(), "--split", "val"});
    EXPECT_EQ(llama.code, 2);
    EXPECT_TRUE(contains_all(llama.err, {"--split val", "character-level", model()})) << llama.err;
    const auto windows = run_cli({"accuracy", "-m", model(), "-z", tokenizer(), "--text",
                                  passim::test::sample_text_path().string(), "--max-windows", "2"});
    EXPECT_EQ(windows.code, 2);
    EXPECT_TRUE(contains_all(windows.err, {"--max-windows", "character-level"})) << windows.err;
  }
}

// perplexity of a character model cuts the text into seq_len windows (no BOS) and reports
// them; float and cpu agree within a few percent on the verse.
TEST(CliPerplexity, CharacterModelWindows) {
  if (passim::app::default_model_bytes().empty()) {
    GTEST_SKIP() << "built without the default model";
  }
  const ScratchDir dir;
  const auto text = gpt_cli::write_verse(dir);
  const auto report = dir / "ppl.json";
  const auto r = run_cli({"perplexity", "--text", text, "-b", "float", "--report",
                          report.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = read_json(report);
  EXPECT_EQ(j.at("windows"), 2);
  EXPECT_EQ(j.at("split"), "all");
  EXPECT_EQ(j.at("documents").size(), 2u);
  EXPECT_EQ(j.at("documents").at(0).at("tokens"), 129);
  const auto one = run_cli({"perplexity", "--text", text, "-b", "float", "--max-windows", "1"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out, r.out);
}

// Simulator options with a backend that has no simulator are refused, not ignored: usage
// errors (exit 2).
TEST(CliRun, SimulatorOptionsNeedTheRtlBackend) {
  if (passim::app::default_model_bytes().empty()) {
    GTEST_SKIP() << "built without the default model";
  }
  const auto trace = run_cli({"run", "-b", "cpu", "--trace", "x.fst", "-n", "4"});
  EXPECT_EQ(trace.code, 2);
  EXPECT_TRUE(contains_all(trace.err, {"--trace", "--backend rtl", "found --backend cpu"}))
      << trace.err;
  const auto cycles = run_cli({"run", "-b", "float", "--max-cycles", "1000", "-n", "4"});
  EXPECT_EQ(cycles.code, 2);
  EXPECT_TRUE(contains_all(cycles.err, {"--max-cycles", "found --backend float"})) << cycles.err;
}

// A folded BatchNorm .psm remembers how it was quantised: it runs without --batchnorm, and a
// contradicting --batchnorm is refused with both modes named.
TEST(CliRun, FoldedBatchNormPsmNeedsNoFlag) {
  const auto bn = passim::test::project_model_path("bn-gpt");
  if (!std::filesystem::exists(bn)) {
    GTEST_SKIP() << bn << " not found";
  }
  const ScratchDir dir;
  const auto psm = dir / "bn-folded.psm";
  ASSERT_EQ(run_cli({"quantize", "-m", bn.string(), "--batchnorm", "folded", "-o", psm.string()})
                .code,
            0);
  const auto r = run_cli({"run", "-m", psm.string(), "-i", "ROMEO:", "-n", "20"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("ROMEO:", 0), 0u) << r.out;
  const auto direct = run_cli({"run", "-m", bn.string(), "--batchnorm", "folded", "-i",
                               "ROMEO:", "-n", "20"});
  ASSERT_EQ(direct.code, 0) << direct.err;
  EXPECT_EQ(direct.out, r.out);
  const auto clash = run_cli({"run", "-m", psm.string(), "--batchnorm", "unfused", "-n", "4"});
  EXPECT_EQ(clash.code, 1);
  EXPECT_TRUE(contains_all(clash.err, {"--batchnorm unfused", "BatchNorm folded"})) << clash.err;
}

// A prompt far longer than the context is refused from its byte count, before the
// (quadratic) BPE merges; --batchnorm with the float backend is refused, not ignored.
TEST(CliRun, HugePromptIsRefusedBeforeEncoding) {
  PASSIM_REQUIRE_DATA();
  const std::string prompt(200000, 'a');
  const auto r = run_cli({"run", "-b", "float", "-m", model(), "-z", tokenizer(), "-i", prompt});
  EXPECT_EQ(r.code, 1);
  // the byte count in the message shows the check ran before any encoding
  EXPECT_TRUE(contains_all(r.err, {model() + ": prompt", "seq_len = 512", "found at least",
                                   "(the prompt has 200000 bytes; no piece of the vocabulary "
                                   "has more than"}))
      << r.err;
  if (!passim::app::default_model_bytes().empty()) {
    const auto bn = run_cli({"run", "-b", "float", "--batchnorm", "folded", "-n", "4"});
    EXPECT_EQ(bn.code, 2);
    EXPECT_TRUE(contains_all(bn.err, {"--batchnorm folded", "float"})) << bn.err;
  }
}

// Options that do not apply to the chosen backend, or to the kind of model given, are usage
// errors like a malformed option (exit 2, "Run with --help"), never ignored and never exit 1.
TEST(CliRun, OptionsThatDoNotApplyToTheBackendAreUsageErrors) {
  if (passim::app::default_model_bytes().empty()) {
    GTEST_SKIP() << "built without the default model";
  }
  const ScratchDir dir;
  const auto text = gpt_cli::write_verse(dir);
  const auto trace = (dir / "t.fst").string();
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"run", "-b", "float", "--softmax", "online"}, {"--softmax online", "float"}},
      {{"run", "-b", "cpu", "--trace", trace}, {"--trace", "--backend rtl", "found --backend cpu"}},
      {{"run", "-b", "cpu", "--max-cycles", "1000"}, {"--max-cycles", "found --backend cpu"}},
      {{"run", "-b", "cpu", "--weights", "resident"}, {"--weights resident", "found --backend cpu"}},
      {{"run", "-b", "float", "--batchnorm", "folded"}, {"--batchnorm folded", "float"}},
      {{"run", "-b", "float", "--batchnorm", "unfused"}, {"--batchnorm unfused", "float"}},
      {{"run", "-b", "float", "--config", "tiny"}, {"--config tiny", "found --backend float"}},
      {{"run", "-b", "float", "--calib-text", text},
       {"--calib-text", "backends cpu and rtl", "found --backend float"}},
      {{"perplexity", "-b", "float", "--calib-text", text, "--text", text},
       {"--calib-text", "found --backend float"}},
      {{"run", "--batchnorm", "folded"}, {"--batchnorm folded", "no BatchNorm"}},
      {{"run", "--tokenizer", text}, {"--tokenizer", "built-in model", "--model"}},
  };
  for (const auto& [args, expect] : cases) {
    std::vector<std::string> a = args;
    if (a[0] == "run") {
      a.insert(a.end(), {"-n", "4"});
    }
    std::string line;
    for (const auto& w : a) {
      line += w + " ";
    }
    SCOPED_TRACE(line);
    const auto r = run_cli(a);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(contains_all(r.err, {"passim: error: ", "Run with --help"})) << r.err;
    for (const std::string& part : expect) {
      EXPECT_TRUE(contains_all(r.err, {part}));
    }
  }
  EXPECT_FALSE(std::filesystem::exists(trace));
}

// --config also sets the lane order of the cpu backend's online Softmax, so cpu accepts it.
TEST(CliRun, ConfigIsAcceptedByTheCpuBackend) {
  if (passim::app::default_model_bytes().empty()) {
    GTEST_SKIP() << "built without the default model";
  }
  const auto r = run_cli({"run", "-b", "cpu", "--config", "tiny", "-n", "4"});
  EXPECT_EQ(r.code, 0) << r.err;
}

// A prompt longer than the built-in model's context names the model, as for a model file,
// on every backend.
TEST(CliRun, PromptTooLongForTheBuiltInModelNamesIt) {
  if (passim::app::default_model_bytes().empty()) {
    GTEST_SKIP() << "built without the default model";
  }
  const std::string prompt(6800, 'a');
  for (const char* backend : {"cpu", "float"}) {
    SCOPED_TRACE(backend);
    const auto r = run_cli({"run", "-b", backend, "-i", prompt});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(contains_all(
        r.err, {std::string(passim::app::kDefaultModelName) + ": prompt: expected at most "
                "seq_len = 128 tokens (BOS included), found at least 6800 tokens (the prompt "
                "has 6800 bytes; no piece of the vocabulary has more than 1 byte)"}))
        << r.err;
  }
}

// A .psm is already quantised: --calib-text does not apply to it (exit 2).
TEST(CliRun, CalibTextWithAPsmModelIsAUsageError) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  ASSERT_EQ(quantize_into(dir), "");
  const auto psm = (dir / "stories260K.psm").string();
  const auto r = run_cli({"run", "-m", psm, "-z", tokenizer(), "--calib-text",
                          passim::test::sample_text_path().string(), "-n", "4"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains_all(r.err, {"--calib-text", psm, "already quantised"})) << r.err;
}

// A calibration text that cannot be read is named as the option's fault, not the model's
// ("cannot quantise this model" used to blame the model).
TEST(CliRun, MissingCalibTextNamesTheOption) {
  PASSIM_REQUIRE_DATA();
  const auto r = run_cli({"run", "-b", "cpu", "-m", model(), "-z", tokenizer(), "--calib-text",
                          "/nonexistent/calib.txt", "-n", "4"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains_all(r.err, {"--calib-text", "/nonexistent/calib.txt"})) << r.err;
  EXPECT_EQ(r.err.find("cannot quantise"), std::string::npos) << r.err;
}

// ---- out of memory --------------------------------------------------------------------------

namespace {

/// Lowers the soft address-space limit to `extra` bytes above the process's current size for
/// its lifetime, so that a large allocation fails (std::bad_alloc) instead of being made.
class AddressSpaceLimit {
 public:
  explicit AddressSpaceLimit(std::uint64_t extra) {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t pages = 0;
    if (!(statm >> pages) || ::getrlimit(RLIMIT_AS, &old_) != 0) {
      return;
    }
    rlimit lower = old_;
    lower.rlim_cur = pages * std::uint64_t(::sysconf(_SC_PAGESIZE)) + extra;
    if (old_.rlim_cur != RLIM_INFINITY && old_.rlim_cur <= lower.rlim_cur) {
      ok_ = true;  // already that low
      return;
    }
    lowered_ = ::setrlimit(RLIMIT_AS, &lower) == 0;
    ok_ = lowered_;
  }
  AddressSpaceLimit(const AddressSpaceLimit&) = delete;
  AddressSpaceLimit& operator=(const AddressSpaceLimit&) = delete;
  ~AddressSpaceLimit() {
    if (lowered_) {
      ::setrlimit(RLIMIT_AS, &old_);
    }
  }
  [[nodiscard]] bool ok() const noexcept { return ok_; }

 private:
  rlimit old_{};
  bool lowered_ = false;
  bool ok_ = false;
};

}  // namespace

// A valid llama2.c header for a 2.3 GB model whose weights do not fit: the error says "out of
// memory" and names the model being loaded (it was "std::bad_alloc" alone). The file is sparse
// and the address space is limited, so nothing of that size is ever written or allocated.
TEST(CliRun, OutOfMemoryNamesWhatWasBeingLoaded) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves its shadow memory and aborts on a failed allocation";
#else
  passim::ModelConfig c;
  c.dim = 1024;
  c.hidden_dim = 4096;
  c.n_layers = 32;
  c.n_heads = 16;
  c.n_kv_heads = 16;
  c.vocab_size = 32000;
  c.seq_len = 2048;
  c.shared_classifier = true;
  const std::uint64_t bytes = 28 + passim::llama2c_param_count(c) * sizeof(float);
  ASSERT_GT(bytes, std::uint64_t{2} << 30);
  const ScratchDir dir;
  const auto path = dir / "huge.bin";
  std::vector<std::uint8_t> header(28);
  const std::int32_t fields[7] = {c.dim,        c.hidden_dim, c.n_layers, c.n_heads,
                                  c.n_kv_heads, c.vocab_size, c.seq_len};
  std::memcpy(header.data(), fields, sizeof fields);
  write_bytes(path, header);
  std::filesystem::resize_file(path, bytes);  // a hole: no disk space used
  CliResult r;
  {
    const AddressSpaceLimit limit(std::uint64_t{512} << 20);
    ASSERT_TRUE(limit.ok()) << "cannot lower RLIMIT_AS";
    r = run_cli({"run", "-b", "float", "-m", path.string(), "-n", "2"});
  }
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "passim: error: out of memory while loading the model " + path.string() + "\n");
#endif
}
