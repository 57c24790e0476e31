// SPDX-License-Identifier: Apache-2.0
// KWT-1 from its TFLite file (io/tflite_model.hpp), WAV clips (io/wav.hpp) and `passim
// classify`: the mapped shape, and the errors for a broken or unsupported model file and for
// WAV files of the wrong kind. The float model against LiteRT: tests/kwt.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/io/psm.hpp"
#include "passim/io/tflite_model.hpp"
#include "passim/io/wav.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quantize.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"
#include "tflite_schema_generated.h"

namespace {

using passim::test::contains_all;
using passim::test::read_bytes;
using passim::test::run_cli;
using passim::test::runtime_error_message;
using passim::test::ScratchDir;
using passim::test::write_bytes;

std::filesystem::path kwt_path() {
  return passim::test::data_dir() / "models" / "kwt1" / "non_stream.tflite";
}

#define SKIP_WITHOUT_KWT()                                                   \
  if (!std::filesystem::exists(kwt_path())) {                                \
    GTEST_SKIP() << kwt_path() << " not found (set PASSIM_DATA)";            \
  }

/// A WAV file's bytes: a RIFF header, a 16-byte fmt chunk and a data chunk of `data` bytes.
std::vector<std::uint8_t> wav_bytes(int format, int channels, int rate, int bits,
                                    const std::vector<std::int16_t>& samples) {
  std::vector<std::uint8_t> b;
  auto put = [&](std::uint32_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(std::uint8_t(v >> (8 * i)));
  };
  auto tag = [&](const char* t) {
    for (int i = 0; i < 4; ++i) b.push_back(std::uint8_t(t[i]));
  };
  const auto data = std::uint32_t(samples.size() * 2);
  tag("RIFF"), put(36 + data, 4), tag("WAVE");
  tag("fmt "), put(16, 4), put(std::uint32_t(format), 2), put(std::uint32_t(channels), 2);
  put(std::uint32_t(rate), 4), put(std::uint32_t(rate * channels * bits / 8), 4);
  put(std::uint32_t(channels * bits / 8), 2), put(std::uint32_t(bits), 2);
  tag("data"), put(data, 4);
  for (const std::int16_t s : samples) put(std::uint16_t(s), 2);
  return b;
}

TEST(Kwt, MapsKwt1OntoTheModelDescription) {
  SKIP_WITHOUT_KWT();
  const passim::KeywordModel km = passim::load_keyword_model(kwt_path());
  const passim::ModelConfig& c = km.model.config;
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 256);
  EXPECT_EQ(c.n_layers, 12);
  EXPECT_EQ(c.n_heads, 1);
  EXPECT_EQ(c.vocab_size, 12);
  EXPECT_EQ(c.seq_len, 99);
  EXPECT_EQ(c.input_features, 40);
  EXPECT_TRUE(c.class_token);
  EXPECT_EQ(c.norm_eps, 1e-6F);
  EXPECT_EQ(c.norm_placement, passim::NormPlacement::kPost);
  EXPECT_EQ(c.mask, passim::MaskKind::kNone);
  EXPECT_EQ(c.gelu, passim::GeluForm::kTanh);
  EXPECT_EQ(km.front_end.samples, 16000U);
  EXPECT_EQ(km.front_end.frames, 98U);
  EXPECT_EQ(km.front_end.frame_length(), 480U);
  EXPECT_EQ(km.front_end.coefficients, 40U);
  // 607,308 parameters (the authors' flags.json): every weight the mapper kept.
  const passim::FloatWeights& w = km.model.weights;
  std::size_t params = 0;
  for (const auto* v : {&w.input_proj, &w.input_bias, &w.class_token, &w.pos_embedding, &w.wq,
                        &w.wk, &w.wv, &w.wo, &w.bo, &w.rms_att, &w.att_norm_bias, &w.w1, &w.b1,
                        &w.w2, &w.b2, &w.rms_ffn, &w.ffn_norm_bias, &w.wcls, &w.bcls}) {
    params += v->size();
  }
  EXPECT_EQ(params, 607308U);
}

/// The byte offset of operator code `code`'s fields in the file, to patch them.
std::size_t opcode_field(const std::vector<std::uint8_t>& b, std::int32_t code,
                         flatbuffers::voffset_t field) {
  const auto* model = passim::tflite::fb::GetModel(b.data());
  for (const auto* oc : *model->operator_codes()) {
    if (oc->builtin_code() == code || oc->deprecated_builtin_code() == code) {
      const auto* table = reinterpret_cast<const flatbuffers::Table*>(oc);
      return std::size_t(table->GetAddressOf(field) - b.data());
    }
  }
  return 0;
}

TEST(Kwt, AnUnsupportedOperatorIsNamedWithItsIndex) {
  SKIP_WITHOUT_KWT();
  ScratchDir dir;
  auto b = read_bytes(kwt_path());
  namespace fb = passim::tflite::fb;
  const std::size_t code = opcode_field(b, 28, fb::OperatorCode::VT_BUILTIN_CODE);  // TANH
  const std::size_t old = opcode_field(b, 28, fb::OperatorCode::VT_DEPRECATED_BUILTIN_CODE);
  ASSERT_GT(code, 0U);
  ASSERT_GT(old, 0U);
  b[code] = 66;  // SIN
  b[old] = 66;
  write_bytes(dir / "sin.tflite", b);
  const std::string msg =
      runtime_error_message([&] { (void)passim::load_keyword_model(dir / "sin.tflite"); });
  EXPECT_TRUE(contains_all(msg, {"sin.tflite", "operator 54 (builtin 66)", "not supported",
                                 "TANH", "GELU"}))
      << msg;
  const auto r = run_cli({"classify", "--model", (dir / "sin.tflite").string(), "--audio",
                          (dir / "none.wav").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains_all(r.err, {"operator 54 (builtin 66)"})) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(Kwt, TruncatedAndCorruptedFilesAreRejected) {
  SKIP_WITHOUT_KWT();
  ScratchDir dir;
  const auto b = read_bytes(kwt_path());
  write_bytes(dir / "half.tflite", {b.begin(), b.begin() + long(b.size() / 2)});
  EXPECT_TRUE(contains_all(
      runtime_error_message([&] { (void)passim::load_keyword_model(dir / "half.tflite"); }),
      {"half.tflite", "verifier", "truncated or corrupt"}));
  // Corrupted exponent bits in the class token's first value: not a finite number.
  const auto g = passim::tflite::Graph::read(kwt_path());
  const auto& cat = g.operators()[20];
  ASSERT_EQ(cat.name(), "CONCATENATION");
  auto nan = b;
  const auto at = std::size_t(g.tensors()[std::size_t(cat.inputs[0])].offset);
  nan[at + 3] |= 0x7F;  // exponent all ones: infinity or NaN
  nan[at + 2] |= 0x80;
  write_bytes(dir / "nan.tflite", nan);
  EXPECT_TRUE(contains_all(
      runtime_error_message([&] { (void)passim::load_keyword_model(dir / "nan.tflite"); }),
      {"nan.tflite", "operator 20 (CONCATENATION)", "the class token", "expected finite"}));
  // Constants that only say how to index: the clip's slice must be the whole clip, and a
  // RESHAPE's shape input its output's shape.
  auto patch_int = [&](int tensor, std::size_t element, std::int32_t value, const char* name) {
    auto copy = b;
    const auto where = std::size_t(g.tensors()[std::size_t(tensor)].offset) + 4 * element;
    std::memcpy(copy.data() + where, &value, 4);
    write_bytes(dir / name, copy);
    return runtime_error_message([&] { (void)passim::load_keyword_model(dir / name); });
  };
  const auto& slice = g.operators()[0];
  EXPECT_TRUE(contains_all(patch_int(slice.inputs[1], 1, 8000, "begin.tflite"),
                           {"begin.tflite", "operator 0 (STRIDED_SLICE)", "the whole clip"}));
  EXPECT_TRUE(contains_all(patch_int(slice.inputs[3], 1, 2, "stride.tflite"),
                           {"operator 0 (STRIDED_SLICE)", "strides 1", "found strides [1, 2]"}));
  const auto& reshape = g.operators()[19];
  ASSERT_EQ(reshape.name(), "RESHAPE");
  EXPECT_TRUE(contains_all(patch_int(reshape.inputs[1], 0, 2, "reshape.tflite"),
                           {"operator 19 (RESHAPE)", "expected [1, 98, 64]", "found [2, 98, 64]"}));
}

// The int8 path: per-feature scales, the calibration it needs, and what it refuses.
TEST(Kwt, Int8PathQuantisesEachFeatureAndRefusesWhatItCannotRun) {
  SKIP_WITHOUT_KWT();
  const passim::KeywordModel km = passim::load_keyword_model(kwt_path());
  const std::size_t frames = km.front_end.frames, nf = km.front_end.coefficients;
  std::vector<float> audio(km.front_end.samples);
  for (std::size_t i = 0; i < audio.size(); ++i) {
    audio[i] = 0.05F * float((i * 7919) % 200) / 200.0F - 0.025F;  // a fixed noise-like clip
  }
  const std::vector<float> f = km.front_end.features(audio);
  EXPECT_TRUE(contains_all(runtime_error_message([&] {
                             (void)passim::quantize(km.model, passim::calibrate(km.model, {}));
                           }),
                           {"40 input features", "calibration over features"}));
  const passim::QuantModel qm =
      passim::quantize(km.model, passim::calibrate_features(km.model, {f}, frames));
  ASSERT_EQ(qm.input_scale.size(), nf);
  const std::vector<std::int8_t> q = passim::quantize_features(qm, f);
  for (std::size_t j = 0; j < nf; ++j) {  // each feature's largest value maps to +-127
    int peak = 0;
    for (std::size_t t = 0; t < frames; ++t) {
      peak = std::max(peak, std::abs(int(q[t * nf + j])));
    }
    EXPECT_EQ(peak, 127) << "feature " << j;
  }
  passim::CpuBackend cpu(qm);
  cpu.forward_features(q, frames);
  EXPECT_EQ(cpu.logits().size(), 12U);
  EXPECT_TRUE(contains_all(
      runtime_error_message([&] { cpu.forward_features(std::span(q).first(nf), frames); }),
      {"cpu backend", "features", "98 frames of 40"}));
  EXPECT_TRUE(contains_all(runtime_error_message([&] { cpu.forward(0, 0); }), {"token"}));
  ScratchDir dir;
  EXPECT_TRUE(contains_all(
      runtime_error_message([&] { passim::save_psm(qm, dir / "kwt.psm"); }),
      {"kwt.psm", "40 input features", "cannot be saved"}));
  // The compiled programs on the accelerator's golden twin (CpuDevice): the same int32
  // logits in one pass (base) and in chunks of rows (small holds 39 of the 99); tiny cannot
  // hold even the keys and values of 99 positions, and says so.
  for (const auto* cfg : {&passim::hw::kBase, &passim::hw::kSmall}) {
    const passim::ModelCompiler compiled(qm, *cfg);
    passim::CpuDevice dev(*cfg, (compiled.dram_bytes() + 4095) / 4096 * 4096);
    passim::DeviceBackend device(compiled, dev);
    device.forward_features(q, frames);
    EXPECT_TRUE(std::equal(cpu.logits_i32().begin(), cpu.logits_i32().end(),
                           device.logits_i32().begin(), device.logits_i32().end()))
        << cfg->name;
    EXPECT_TRUE(contains_all(runtime_error_message([&] { device.forward(0, 0); }),
                             {"features"}));
  }
  const passim::ModelCompiler tiny(qm, passim::hw::kTiny);
  EXPECT_TRUE(contains_all(runtime_error_message([&] { (void)tiny.features_pass(frames); }),
                           {"config tiny", "99 positions", "does not fit even in chunks"}));
}

// A flipped bit inside a weight leaves a finite number: no reader can tell it from another
// model, but `passim classify` says the bytes are not the published KWT-1's.
TEST(Kwt, AFlippedWeightBitGetsANoticeThatTheFileIsNotThePublishedOne) {
  SKIP_WITHOUT_KWT();
  ScratchDir dir;
  auto b = read_bytes(kwt_path());
  b[b.size() / 2] ^= 0x01;
  write_bytes(dir / "flipped.tflite", b);
  write_bytes(dir / "quiet.wav", wav_bytes(1, 1, 16000, 16, std::vector<std::int16_t>(800, 3)));
  const auto flipped = run_cli({"classify", "--model", (dir / "flipped.tflite").string(),
                                "--audio", (dir / "quiet.wav").string()});
  EXPECT_EQ(flipped.code, 0) << flipped.err;
  EXPECT_TRUE(contains_all(flipped.err, {"notice:", "flipped.tflite", "not the published",
                                         "corrupted copy"}))
      << flipped.err;
  const auto published = run_cli({"classify", "--model", kwt_path().string(), "--audio",
                                  (dir / "quiet.wav").string()});
  EXPECT_EQ(published.code, 0) << published.err;
  EXPECT_EQ(published.err.find("notice:"), std::string::npos) << published.err;
}

TEST(Kwt, WavClipsArePaddedOrCutAroundTheirMiddle) {
  ScratchDir dir;
  write_bytes(dir / "short.wav", wav_bytes(1, 1, 16000, 16, {100, -200, 300}));
  const auto s = passim::read_clip(dir / "short.wav", 16000, 8);
  EXPECT_EQ(s, (std::vector<float>{0, 0, 100 / 32768.F, -200 / 32768.F, 300 / 32768.F, 0, 0, 0}));
  write_bytes(dir / "long.wav", wav_bytes(1, 1, 16000, 16, {1, 2, 3, 4, 5, 6, 7}));
  const auto l = passim::read_clip(dir / "long.wav", 16000, 4);
  EXPECT_EQ(l, (std::vector<float>{2 / 32768.F, 3 / 32768.F, 4 / 32768.F, 5 / 32768.F}));
}

TEST(Kwt, WrongWavFilesGetClearErrors) {
  ScratchDir dir;
  const std::vector<std::int16_t> one(160, 7);
  auto error = [&](const std::string& name, const std::vector<std::uint8_t>& bytes) {
    write_bytes(dir / name, bytes);
    return runtime_error_message([&] { (void)passim::read_clip(dir / name, 16000, 16000); });
  };
  EXPECT_TRUE(contains_all(error("rate.wav", wav_bytes(1, 1, 8000, 16, one)),
                           {"rate.wav", "sample rate", "expected 16000 Hz", "found 8000 Hz"}));
  EXPECT_TRUE(contains_all(error("stereo.wav", wav_bytes(1, 2, 16000, 16, one)),
                           {"stereo.wav", "channels", "expected 1", "found 2"}));
  EXPECT_TRUE(contains_all(error("float.wav", wav_bytes(3, 1, 16000, 32, one)),
                           {"float.wav", "16-bit integer PCM", "format 3, 32 bits"}));
  EXPECT_TRUE(contains_all(error("u8.wav", wav_bytes(1, 1, 16000, 8, one)),
                           {"u8.wav", "format 1, 8 bits"}));
  const std::string text = "not audio at all, just words";
  std::vector<std::uint8_t> text_bytes;
  for (const char ch : text) text_bytes.push_back(std::uint8_t(ch));
  EXPECT_TRUE(contains_all(error("text.wav", text_bytes),
                           {"text.wav", "not a WAV file"}));
  auto cut = wav_bytes(1, 1, 16000, 16, one);
  cut.resize(cut.size() - 10);
  EXPECT_TRUE(contains_all(error("cut.wav", cut), {"cut.wav", "chunk \"data\"", "truncated"}));
  EXPECT_TRUE(contains_all(error("none.wav", wav_bytes(1, 1, 16000, 16, {})),
                           {"none.wav", "at least one", "found 0 bytes"}));
  auto twice = wav_bytes(1, 1, 16000, 16, one);
  const std::vector<std::uint8_t> data_chunk(twice.begin() + 36, twice.end());
  twice.insert(twice.end(), data_chunk.begin(), data_chunk.end());
  EXPECT_TRUE(contains_all(error("twice.wav", twice), {"twice.wav", "\"data\"", "a second"}));
  auto rate = wav_bytes(1, 1, 16000, 16, one);
  rate[29] = 0;  // byte rate 32000 (0x7D00) -> 0
  EXPECT_TRUE(contains_all(error("rate2.wav", rate), {"rate2.wav", "byte rate", "32000"}));
  SKIP_WITHOUT_KWT();
  write_bytes(dir / "ok.wav", wav_bytes(1, 1, 16000, 16, one));
  const auto r = run_cli({"classify", "--model", kwt_path().string(), "--audio",
                          (dir / "ok.wav").string(), (dir / "stereo.wav").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");  // every clip is checked before any runs
  EXPECT_TRUE(contains_all(r.err, {"stereo.wav", "channels"})) << r.err;
}

TEST(Kwt, ClassifyWritesAReportAndRefusesOptionsItsBackendIgnores) {
  SKIP_WITHOUT_KWT();
  ScratchDir dir;
  write_bytes(dir / "a.wav", wav_bytes(1, 1, 16000, 16, std::vector<std::int16_t>(4000, 900)));
  const std::string a = (dir / "a.wav").string(), report = (dir / "r.json").string();
  const auto r = run_cli({"classify", "--model", kwt_path().string(), "--backend", "cpu",
                          "--audio", a, "--report", report});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(read_bytes(dir / "r.json"));
  EXPECT_EQ(j["tool"], "passim classify");
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["model"]["calibration"], "1 clip (the clips classified)");
  ASSERT_EQ(j["clips"].size(), 1U);
  EXPECT_EQ(j["clips"][0]["path"], a);
  EXPECT_EQ(j["clips"][0]["logits"].size(), 12U);
  EXPECT_NE(r.out.find(j["clips"][0]["label"].get<std::string>()), std::string::npos);
  const auto config = run_cli({"classify", "--model", kwt_path().string(), "--config", "small",
                               "--audio", a});
  EXPECT_EQ(config.code, 2);
  EXPECT_TRUE(contains_all(config.err, {"--config small", "only for --backend rtl"}));
  const auto calib = run_cli({"classify", "--model", kwt_path().string(), "--calib-audio", a,
                              "--audio", a});
  EXPECT_EQ(calib.code, 2);
  EXPECT_TRUE(contains_all(calib.err, {"--calib-audio", "int8 backends"}));
  const auto over = run_cli({"classify", "--model", kwt_path().string(), "--audio", a,
                             "--report", a});
  EXPECT_EQ(over.code, 1);
  EXPECT_TRUE(contains_all(over.err, {"--report", "audio clip", "not overwritten"}));
}

TEST(Kwt, ClassifyPrintsOneLinePerClip) {
  SKIP_WITHOUT_KWT();
  ScratchDir dir;
  write_bytes(dir / "quiet.wav", wav_bytes(1, 1, 16000, 16, std::vector<std::int16_t>(8000, 0)));
  const auto r = run_cli({"classify", "--model", kwt_path().string(), "--audio",
                          (dir / "quiet.wav").string(), (dir / "quiet.wav").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string line = (dir / "quiet.wav").string() + " ";
  ASSERT_EQ(r.out.find(line), 0U) << r.out;
  const auto first = r.out.substr(0, r.out.find('\n') + 1);
  EXPECT_EQ(r.out, first + first);  // the same clip twice: the same line twice
}

}  // namespace
