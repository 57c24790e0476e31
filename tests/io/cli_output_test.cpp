// SPDX-License-Identifier: Apache-2.0
// `passim`'s messages about where its input and output went wrong: standard output that cannot
// be written (a full disk, a closed pipe), where the result is lost and the exit code must say
// so, and a calibration text the tokenizer cannot encode, named once.
#include <ostream>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "app.hpp"
#include "cli_run.hpp"
#include "default_model.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace {

/// A stream buffer whose every write fails, like standard output on /dev/full.
class FailingBuf : public std::streambuf {
 protected:
  int_type overflow(int_type) override { return traits_type::eof(); }
  std::streamsize xsputn(const char*, std::streamsize) override { return 0; }
};

struct Result {
  int code;
  std::string err;
};

Result run_into_failing_output(std::vector<std::string> args) {
  args.insert(args.begin(), "passim");
  FailingBuf buf;
  std::ostream out(&buf);
  std::ostringstream err;
  const int code = passim::app::run_cli(args, out, err);
  return {code, err.str()};
}

TEST(CliOutput, AFailedWriteOfTheGeneratedTextIsAnError) {
  if (passim::app::default_model_bytes().empty()) {
    GTEST_SKIP() << "no built-in model";
  }
  const Result r =
      run_into_failing_output({"run", "--backend", "float", "--prompt", "ROMEO:", "--steps", "8"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("passim: error: standard output"), std::string::npos) << r.err;
}

TEST(CliOutput, AFailedWriteOfTheHelpIsAnError) {
  const Result r = run_into_failing_output({"--help"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
}

TEST(CliOutput, AnErrorKeepsItsOwnExitCode) {
  const Result r = run_into_failing_output({"run", "--backend", "nonsense"});
  EXPECT_EQ(r.code, 2);  // the usage error, not the output's failure
}

TEST(CliUsage, AnUnknownCommandIsNamed) {
  const auto r = passim::test::run_cli({"frob", "--steps", "3"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("frob: expected a command (run, encode, classify, quantize, perplexity, accuracy, report, sweep)"),
            std::string::npos)
      << r.err;
}

TEST(CliUsage, AnUnknownOptionBeforeTheCommandIsNamed) {
  const auto r = passim::test::run_cli({"--frob"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--frob: expected a command"), std::string::npos) << r.err;
  EXPECT_EQ(passim::test::run_cli({"--version"}).code, 0);
}

TEST(CliUsage, AnEmptyValueAfterTheEqualsSignIsEmpty) {
  // `--report=` is an empty value (refused), not a request to take the next argument.
  const auto r = passim::test::run_cli({"run", "--backend", "float", "--steps", "2",
                                        "--report=", "--seed", "3"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--report: expected a value, found an empty string"), std::string::npos)
      << r.err;
  if (passim::app::default_model_bytes().empty()) {
    return;
  }
  // `--prompt=` is the empty prompt; the option after it keeps its meaning.
  const auto p = passim::test::run_cli({"run", "--backend", "float", "--steps", "2",
                                        "--prompt=", "--seed", "3"});
  EXPECT_EQ(p.code, 0) << p.err;
}

TEST(CliCalibration, AFloatOverflowNamesTheModel) {
  PASSIM_REQUIRE_DATA();
  auto bytes = passim::test::read_bytes(passim::test::model_path());
  // rms_final_weight = 3e38 everywhere: the file loads, the float logits overflow.
  const std::size_t final_at = bytes.size() - 4 * (512 * 8) - 4 * 64;
  for (std::size_t i = 0; i < 64; ++i) {
    passim::test::patch(bytes, final_at + 4 * i, 3e38F);
  }
  const passim::test::ScratchDir dir;
  const auto model = dir / "huge_gain.bin";
  passim::test::write_bytes(model, bytes);
  const auto r = passim::test::run_cli({"run", "--backend", "cpu", "--model", model.string(),
                                        "--tokenizer", passim::test::tokenizer_path().string(),
                                        "--steps", "4"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("huge_gain.bin: calibration: float forward at position"),
            std::string::npos)
      << r.err;
}

TEST(CliCalibText, AnUnencodableDocumentIsNamedOnce) {
  if (passim::app::default_model_bytes().empty()) {
    GTEST_SKIP() << "no built-in model";
  }
  const passim::test::ScratchDir dir;
  const auto text = dir / "calib.txt";
  passim::test::write_bytes(text, {'R', 'O', 0xFF, 0xFE, '\n'});  // not UTF-8: no character
  const auto r = passim::test::run_cli(
      {"run", "--backend", "cpu", "--steps", "4", "--calib-text", text.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--calib-text: " + text.string() + ": document 0: "), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("--calib-text", r.err.find("--calib-text") + 1), std::string::npos)
      << r.err;
}

}  // namespace
