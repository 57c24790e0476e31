// SPDX-License-Identifier: Apache-2.0
// GPT-style blocks (LayerNorm or BatchNorm, learned positions, biases, GELU, multi-head
// attention without GQA): the float forward, the int8 forward on cpu, the .psm round trip, the
// compiled programs on the ISA reference device, and the project's two trained models.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpt_fixture.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/eval/generate.hpp"
#include "passim/eval/perplexity.hpp"
#include "passim/io/file.hpp"
#include "passim/io/gguf.hpp"
#include "passim/io/gguf_model.hpp"
#include "passim/io/psm.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/model/weights.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quant_model.hpp"
#include "passim/quant/quantize.hpp"
#include "test_data.hpp"

namespace {

using passim::BatchNormMode;
using passim::NormKind;

struct Variant {
  const char* name;
  NormKind norm;
  BatchNormMode bn;
};
const Variant kVariants[] = {{"layernorm", NormKind::kLayer, BatchNormMode::kUnfused},
                             {"batchnorm", NormKind::kBatch, BatchNormMode::kUnfused},
                             {"batchnorm_folded", NormKind::kBatch, BatchNormMode::kFolded}};

passim::QuantModel quantize_random(const passim::FloatModel& fm, BatchNormMode bn) {
  passim::QuantOptions qo;
  qo.batchnorm = bn;
  return passim::quantize(fm, passim::calibrate(fm, passim::self_generated_calibration(fm, 24)),
                          qo);
}

double cosine(std::span<const float> a, std::span<const float> b) {
  double d = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += double(a[i]) * b[i];
    na += double(a[i]) * a[i];
    nb += double(b[i]) * b[i];
  }
  return d / std::sqrt(na * nb);
}

class RandomGpt : public ::testing::TestWithParam<Variant> {};

// The int8 forward follows the float one: logits' cosine similarity >= 0.98 at every
// position of a 24-token sequence, for each norm and BatchNorm lowering.
TEST_P(RandomGpt, Int8FollowsFloat) {
  const Variant v = GetParam();
  const auto fm = passim::test::random_gpt(v.norm, 7);
  const auto qm = quantize_random(fm, v.bn);
  passim::FloatBackend fb(fm);
  passim::CpuBackend cb(qm);
  double worst = 1;
  for (int pos = 0; pos < fm.config.seq_len; ++pos) {
    const int tok = (pos * 7 + 3) % fm.config.vocab_size;
    fb.forward(tok, pos);
    cb.forward(tok, pos);
    worst = std::min(worst, cosine(fb.logits(), cb.logits()));
  }
  EXPECT_GE(worst, 0.98) << v.name;
}

// A later token never changes an earlier position's logits (causal attention) in int8.
TEST_P(RandomGpt, CausalInInt8) {
  const Variant v = GetParam();
  const auto fm = passim::test::random_gpt(v.norm, 8);
  const auto qm = quantize_random(fm, v.bn);
  passim::CpuBackend a(qm), b(qm);
  std::vector<std::int32_t> first;
  for (int pos = 0; pos < 6; ++pos) {
    a.forward(pos + 1, pos);
    b.forward(pos < 5 ? pos + 1 : 9, pos);
    if (pos == 4) {
      first.assign(a.logits_i32().begin(), a.logits_i32().end());
      ASSERT_TRUE(std::equal(first.begin(), first.end(), b.logits_i32().begin()));
    }
  }
  EXPECT_FALSE(std::equal(a.logits_i32().begin(), a.logits_i32().end(), b.logits_i32().begin()));
}

// .psm version 2 keeps every GPT tensor: the reloaded model gives identical int32 logits
// and serialises to the same bytes; the character vocabulary travels with it.
TEST_P(RandomGpt, PsmRoundTrip) {
  const Variant v = GetParam();
  const auto fm = passim::test::random_gpt(v.norm, 9);
  auto qm = quantize_random(fm, v.bn);
  qm.char_vocab = {"\n", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  const auto bytes = passim::serialize_psm(qm);
  const auto back = passim::parse_psm(bytes, "round-trip.psm");
  EXPECT_EQ(passim::serialize_psm(back), bytes);
  EXPECT_EQ(back.char_vocab, qm.char_vocab);
  EXPECT_EQ(back.config.arch, passim::Arch::kGpt);
  EXPECT_EQ(back.config.norm, v.norm);
  EXPECT_EQ(back.batchnorm, v.norm == NormKind::kBatch ? v.bn : BatchNormMode::kUnfused);
  passim::CpuBackend a(qm), b(back);
  for (int pos = 0; pos < 8; ++pos) {
    a.forward(pos + 1, pos);
    b.forward(pos + 1, pos);
  }
  EXPECT_TRUE(std::equal(a.logits_i32().begin(), a.logits_i32().end(), b.logits_i32().begin()));
}

// The compiled programs on the ISA reference device compute exactly the cpu backend's
// integers (token ids and final logits), on every named configuration.
TEST_P(RandomGpt, CompiledProgramsMatchCpuBackend) {
  const Variant v = GetParam();
  const auto fm = passim::test::random_gpt(v.norm, 10);
  const auto qm = quantize_random(fm, v.bn);
  const auto tok = passim::test::random_gpt_tokenizer();
  for (const char* cfg_name : {"tiny", "small", "base"}) {
    const passim::hw::HwConfig* cfg = passim::hw::find_config(cfg_name);
    ASSERT_NE(cfg, nullptr);
    passim::ModelCompiler probe(qm, *cfg);
    passim::CpuDevice device(*cfg, probe.dram_bytes());
    passim::DeviceBackend dev(probe, device);
    passim::CpuBackend cpu(qm);
    passim::GenerateOptions opts;
    opts.prompt = "abcja";
    opts.steps = 16;
    const auto a = passim::generate(cpu, tok, opts, nullptr);
    const auto b = passim::generate(dev, tok, opts, nullptr);
    EXPECT_EQ(a.generated_tokens, b.generated_tokens) << v.name << " on " << cfg_name;
    EXPECT_TRUE(std::equal(cpu.logits_i32().begin(), cpu.logits_i32().end(),
                           dev.logits_i32().begin()))
        << v.name << " on " << cfg_name;
  }
}

INSTANTIATE_TEST_SUITE_P(Norms, RandomGpt, ::testing::ValuesIn(kVariants),
                         [](const auto& p) { return std::string(p.param.name); });

// ---- the project's trained models (committed under models/) ---------------------------------

class TrainedGpt : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    path_ = passim::test::project_model_path(GetParam());
    if (!std::filesystem::exists(path_)) {
      GTEST_SKIP() << path_ << " not found";
    }
  }
  std::filesystem::path path_;
};

// The float forward reproduces PyTorch's logits (models/<name>/reference_logits.json, written
// by models/export_gguf.py) within 2e-4: same architecture, same tensors, same order of ops.
TEST_P(TrainedGpt, FloatForwardMatchesPyTorch) {
  const auto ref_path = path_.parent_path() / "reference_logits.json";
  ASSERT_TRUE(std::filesystem::exists(ref_path)) << ref_path;
  const auto j = nlohmann::json::parse(std::ifstream(ref_path));
  const passim::GgufFile file = passim::GgufFile::read(path_);
  const auto fm = passim::float_model_from_gguf(file);
  passim::FloatBackend fb(fm);
  const auto tokens = j.at("tokens").get<std::vector<int>>();
  const auto logits = j.at("logits").get<std::vector<std::vector<float>>>();
  ASSERT_EQ(tokens.size(), logits.size());
  ASSERT_GE(tokens.size(), 16u);
  double worst = 0;
  for (std::size_t pos = 0; pos < tokens.size(); ++pos) {
    fb.forward(tokens[pos], int(pos));
    for (std::size_t i = 0; i < logits[pos].size(); ++i) {
      worst = std::max(worst, std::fabs(double(fb.logits()[i]) - logits[pos][i]));
    }
  }
  EXPECT_LE(worst, 2e-4) << GetParam();
}

// The tokenizer comes from the GGUF metadata: one id per character, BOS = newline.
TEST_P(TrainedGpt, CharacterTokenizerFromMetadata) {
  const passim::GgufFile file = passim::GgufFile::read(path_);
  const auto fm = passim::float_model_from_gguf(file);
  const auto tok = passim::tokenizer_from_gguf(file, fm.config.vocab_size);
  ASSERT_TRUE(tok.is_char_level());
  EXPECT_EQ(tok.piece(tok.bos()), "\n");
  EXPECT_EQ(fm.config.bos_token, tok.bos());
  const auto ids = tok.encode("ROMEO:", true, false);
  ASSERT_EQ(ids.size(), 7u);
  std::string back;
  for (std::size_t i = 1; i < ids.size(); ++i) {
    back += tok.decode(ids[i - 1], ids[i]);
  }
  EXPECT_EQ(back, "ROMEO:");
}

INSTANTIATE_TEST_SUITE_P(Models, TrainedGpt, ::testing::Values("ln-gpt", "bn-gpt"),
                         [](const auto& p) {
                           return std::string(p.param) == "ln-gpt" ? "LayerNorm" : "BatchNorm";
                         });

// Int8 validation perplexity of the LayerNorm model is within 5 % of its float perplexity
// (first 24 windows of 128 characters of the validation split; the model card gives the
// whole split).
TEST(TrainedGptAccuracy, LayerNormInt8PerplexityWithinFivePercent) {
  const auto path = passim::test::project_model_path("ln-gpt");
  if (!std::filesystem::exists(path) || !std::filesystem::exists(passim::test::shakespeare_path())) {
    GTEST_SKIP() << "needs " << path << " and " << passim::test::shakespeare_path();
  }
  const passim::GgufFile file = passim::GgufFile::read(path);
  const auto fm = passim::float_model_from_gguf(file);
  const auto tok = passim::tokenizer_from_gguf(file, fm.config.vocab_size);
  const auto qm =
      passim::quantize(fm, passim::calibrate(fm, passim::self_generated_calibration(fm, 128)));
  const auto bytes = passim::read_file(passim::test::shakespeare_path(), 1u << 24);
  const std::string val = passim::text_split(
      {reinterpret_cast<const char*>(bytes.data()), bytes.size()}, "val");
  const auto ids = tok.encode(val, false, false);
  passim::FloatBackend fb(fm);
  passim::CpuBackend cb(qm);
  const double pf = passim::perplexity_windows(fb, ids, 24).perplexity();
  const double pi = passim::perplexity_windows(cb, ids, 24).perplexity();
  EXPECT_LT(pf, 8.0);  // a trained model, not noise (a uniform guess is 65)
  EXPECT_LE(pi, pf * 1.05) << "float " << pf << ", int8 " << pi;
  EXPECT_GE(pi, pf * 0.95) << "float " << pf << ", int8 " << pi;
}

}  // namespace

namespace {

// Bad character vocabularies and texts: malformed UTF-8 is named, never split silently.
TEST(CharTokenizer, MalformedUtf8IsRejected) {
  using passim::Tokenizer;
  EXPECT_THROW((void)Tokenizer::char_level({"a", "\x80"}, 0, "v"), std::runtime_error);
  EXPECT_THROW((void)Tokenizer::char_level({"a", "\xF8\x80\x80\x80"}, 0, "v"), std::runtime_error);
  EXPECT_THROW((void)Tokenizer::char_level({"a", "ab"}, 0, "v"), std::runtime_error);
  EXPECT_THROW((void)Tokenizer::char_level({"a", "a"}, 0, "v"), std::runtime_error);
  EXPECT_THROW((void)Tokenizer::char_level({"a", "b"}, 2, "v"), std::runtime_error);
  const Tokenizer t = Tokenizer::char_level({"\n", "a", "\xC3\xA9"}, 0, "v");
  EXPECT_EQ(t.encode("a\xC3\xA9", true, false), (std::vector<int>{0, 1, 2}));
  try {
    (void)t.encode("a\xC3", false, false);
    FAIL() << "expected an error for a truncated character";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("offset 1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(passim::utf8_char_bytes("\xE0\x80\x80", 0), 0u);  // overlong
  EXPECT_EQ(passim::utf8_char_bytes("\xED\xA0\x80", 0), 0u);  // surrogate
  EXPECT_EQ(passim::utf8_char_bytes("\xF4\x90\x80\x80", 0), 0u);  // above U+10FFFF
  EXPECT_EQ(passim::utf8_char_bytes("\xF0\x9F\x98\x80", 0), 4u);
}

// A .psm whose meta.arch claims a BatchNorm mode for a LayerNorm model is refused.
TEST(GptPsm, BatchNormModeOnLayerNormModelIsRejected) {
  const auto fm = passim::test::random_gpt(passim::NormKind::kLayer, 11);
  auto qm = quantize_random(fm, passim::BatchNormMode::kUnfused);
  qm.batchnorm = passim::BatchNormMode::kFolded;
  const auto bytes = passim::serialize_psm(qm);
  try {
    (void)passim::parse_psm(bytes, "odd.psm");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("meta.arch"), std::string::npos) << e.what();
  }
}

}  // namespace

namespace {

// Only projection steps may carry a bias: the hardware ignores it everywhere else, so a .psm
// with a bias in, e.g., a GELU or position step is refused instead of running differently
// on cpu and rtl.
TEST(GptPsm, BiasOutsideAProjectionStepIsRejected) {
  const auto fm = passim::test::random_gpt(passim::NormKind::kLayer, 12);
  auto qm = quantize_random(fm, passim::BatchNormMode::kUnfused);
  qm.layers[0].gelu_out_rq.bias = 100;
  try {
    (void)passim::parse_psm(passim::serialize_psm(qm), "odd.psm");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("layers.0.gelu_out.rq"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected bias 0"), std::string::npos) << e.what();
  }
  qm.layers[0].gelu_out_rq.bias = 0;
  qm.layers[0].rq_1[3].bias = 100;  // a projection: fine
  EXPECT_NO_THROW((void)passim::parse_psm(passim::serialize_psm(qm), "ok.psm"));
}

}  // namespace
