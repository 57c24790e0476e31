// SPDX-License-Identifier: Apache-2.0
// A llama GGUF file as float model and tokenizer: stories260K.gguf gives the same weights,
// tokenizer and token ids as stories260K.bin + tok512.bin, and tiny GGUF files built in the
// test check the mapping and every rejection.
#include "passim/io/gguf_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gguf_writer.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/device.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/eval/generate.hpp"
#include "passim/io/file.hpp"
#include "passim/io/gguf.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/io/tokenizer.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/model/weights.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quant_model.hpp"
#include "passim/quant/quantize.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace {

using passim::FloatModel;
using passim::GgmlType;
using passim::GgufFile;
using passim::GgufType;
using passim::test::contains_all;
using passim::test::GgufWriter;
using passim::test::read_bytes;
using passim::test::runtime_error_message;

constexpr char kSource[] = "tiny.gguf";
constexpr int kGreedySteps = 32;

// ---- stories260K: .gguf against .bin + tok512.bin ------------------------------------------

/// Loads both forms of stories260K once.
class GgufStories : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(passim::test::model_path()) ||
        !std::filesystem::exists(passim::test::gguf_model_path())) {
      return;
    }
    bin_ = std::make_unique<FloatModel>(passim::load_llama2c(passim::test::model_path()));
    tok512_ = std::make_unique<passim::Tokenizer>(
        passim::Tokenizer::load(passim::test::tokenizer_path(), 512));
    const GgufFile file = GgufFile::read(passim::test::gguf_model_path());
    gguf_ = std::make_unique<FloatModel>(passim::float_model_from_gguf(file));
    gguf_tok_ = std::make_unique<passim::Tokenizer>(
        passim::tokenizer_from_gguf(file, gguf_->config.vocab_size));
  }
  static void TearDownTestSuite() {
    bin_.reset();
    tok512_.reset();
    gguf_.reset();
    gguf_tok_.reset();
  }
  void SetUp() override { PASSIM_REQUIRE_GGUF(); }

  /// The same self-generated calibration the CLI uses, so both quantised models see
  /// identical inputs.
  static passim::QuantModel quantized(const FloatModel& m) {
    return passim::quantize(m, passim::calibrate(m, passim::self_generated_calibration(m, 128)));
  }

  static std::vector<int> greedy(passim::Backend& backend, const passim::Tokenizer& tok,
                                 const std::string& prompt, std::string* text = nullptr) {
    passim::GenerateOptions opts;
    opts.prompt = prompt;
    opts.steps = kGreedySteps;
    const auto r = passim::generate(backend, tok, opts, nullptr);
    if (text != nullptr) {
      *text = r.text;
    }
    return r.generated_tokens;
  }

  static inline std::unique_ptr<FloatModel> bin_;
  static inline std::unique_ptr<passim::Tokenizer> tok512_;
  static inline std::unique_ptr<FloatModel> gguf_;
  static inline std::unique_ptr<passim::Tokenizer> gguf_tok_;
};

const char* const kPrompts[] = {"", "Once upon a time", "Lily and Tom\nwent to the park."};

TEST_F(GgufStories, ConfigMatchesBinExceptContextLength) {
  const passim::ModelConfig& a = gguf_->config;
  const passim::ModelConfig& b = bin_->config;
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.hidden_dim, b.hidden_dim);
  EXPECT_EQ(a.n_layers, b.n_layers);
  EXPECT_EQ(a.n_heads, b.n_heads);
  EXPECT_EQ(a.n_kv_heads, b.n_kv_heads);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_TRUE(a.shared_classifier);  // output.weight is a copy of token_embd.weight
  EXPECT_EQ(a.seq_len, 2048);        // llama.context_length; the .bin header says 512
  EXPECT_EQ(b.seq_len, 512);
  EXPECT_EQ(gguf_->source, passim::test::gguf_model_path().string());
  EXPECT_EQ(gguf_->sha256, "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d");
}

TEST_F(GgufStories, WeightsEqualBinBitForBit) {
  const passim::FloatWeights& a = gguf_->weights;
  const passim::FloatWeights& b = bin_->weights;
  EXPECT_EQ(a.token_embedding, b.token_embedding);
  EXPECT_EQ(a.rms_att, b.rms_att);
  EXPECT_EQ(a.wq, b.wq);  // Q and K rows need no RoPE permutation
  EXPECT_EQ(a.wk, b.wk);
  EXPECT_EQ(a.wv, b.wv);
  EXPECT_EQ(a.wo, b.wo);
  EXPECT_EQ(a.rms_ffn, b.rms_ffn);
  EXPECT_EQ(a.w1, b.w1);
  EXPECT_EQ(a.w2, b.w2);
  EXPECT_EQ(a.w3, b.w3);
  EXPECT_EQ(a.rms_final, b.rms_final);
  EXPECT_TRUE(a.wcls.empty());
  EXPECT_EQ(a.classifier().data(), a.token_embedding.data());
}

TEST_F(GgufStories, TokenizerEqualsTok512) {
  ASSERT_EQ(gguf_tok_->vocab_size(), tok512_->vocab_size());
  for (int id = 0; id < tok512_->vocab_size(); ++id) {
    ASSERT_EQ(gguf_tok_->piece(id), tok512_->piece(id)) << "id " << id;
    ASSERT_EQ(gguf_tok_->score(id), tok512_->score(id)) << "id " << id;
  }
  EXPECT_EQ(gguf_tok_->piece(1), "\n<s>\n");
  EXPECT_EQ(gguf_tok_->piece(2), "\n</s>\n");
  EXPECT_EQ(gguf_tok_->piece(13), "<0x0A>");
}

TEST_F(GgufStories, EncodeAndDecodeLikeTok512) {
  const std::
      string
          texts
              [] =
                  {
                      "",
                      "Once upon a time",
                      "Hello\nworld\n\n",
                      "\n",
                      "  two  spaces, a\ttab",
                      "caf\xC3\xA9 na\xC3\xAFve \xE2\x80\x94 \xE6\x97\xA5\xE6\x9C\xAC "
                      "\xF0\x9F\x99\x82",  // non-ASCII
                      "\xFF\xFE broken UTF-8 \xC3",
                  };
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    for (const bool bos : {false, true}) {
      const auto ids = gguf_tok_->encode(text, bos, !bos);
      ASSERT_EQ(ids, tok512_->encode(text, bos, !bos));
      int prev = passim::kBosToken;
      for (const int id : ids) {
        EXPECT_EQ(gguf_tok_->decode(prev, id), tok512_->decode(prev, id)) << "id " << id;
        prev = id;
      }
    }
  }
  // The newline goes through byte fallback, and decodes back to the raw byte.
  const auto ids = gguf_tok_->encode("a\nb", false, false);
  EXPECT_NE(std::find(ids.begin(), ids.end(), 13), ids.end());
  EXPECT_EQ(gguf_tok_->decode(0, 13), "\n");
}

TEST_F(GgufStories, FloatGreedyTokensEqualBin) {
  passim::FloatBackend from_gguf(*gguf_);
  passim::FloatBackend from_bin(*bin_);
  for (const char* prompt : kPrompts) {
    SCOPED_TRACE(prompt);
    std::string text_gguf, text_bin;
    const auto a = greedy(from_gguf, *gguf_tok_, prompt, &text_gguf);
    const auto b = greedy(from_bin, *tok512_, prompt, &text_bin);
    EXPECT_EQ(a, b);
    EXPECT_EQ(text_gguf, text_bin);
    EXPECT_FALSE(a.empty());
  }
}

TEST_F(GgufStories, CpuGreedyTokensEqualBin) {
  const passim::QuantModel qa = quantized(*gguf_);
  const passim::QuantModel qb = quantized(*bin_);
  // Same weights and calibration: the same integers (only the RoPE table length differs).
  EXPECT_EQ(qa.layers.at(0).wq, qb.layers.at(0).wq);
  EXPECT_EQ(qa.wcls, qb.wcls);
  passim::CpuBackend from_gguf(qa);
  passim::CpuBackend from_bin(qb);
  for (const char* prompt : kPrompts) {
    SCOPED_TRACE(prompt);
    EXPECT_EQ(greedy(from_gguf, *gguf_tok_, prompt), greedy(from_bin, *tok512_, prompt));
    const auto la = from_gguf.logits_i32();
    const auto lb = from_bin.logits_i32();
    EXPECT_TRUE(std::equal(la.begin(), la.end(), lb.begin(), lb.end()));
  }
}

TEST_F(GgufStories, CompiledProgramTokensEqualBin) {
  // The path of `--backend rtl`: the quantised model compiled for an accelerator config and
  // run by the ISA reference device.
  const passim::QuantModel qa = quantized(*gguf_);
  const passim::QuantModel qb = quantized(*bin_);
  const passim::hw::HwConfig* cfg = passim::hw::find_config("small");
  ASSERT_NE(cfg, nullptr);
  const passim::ModelCompiler compiled(qa, *cfg);
  passim::CpuDevice device(*cfg, compiled.dram_bytes());
  passim::DeviceBackend from_gguf(compiled, device);
  passim::CpuBackend from_bin(qb);
  passim::GenerateOptions opts;
  opts.prompt = "Once upon a time";
  opts.steps = 16;
  EXPECT_EQ(passim::generate(from_gguf, *gguf_tok_, opts, nullptr).generated_tokens,
            passim::generate(from_bin, *tok512_, opts, nullptr).generated_tokens);
}

// ---- tiny llama files built in the test ----------------------------------------------------

/// A 2-block llama (dim 8, hidden 12, 2 heads, 1 KV head, vocab 262) with distinct weights.
FloatModel tiny_model() {
  FloatModel m;
  passim::ModelConfig& c = m.config;
  c.dim = 8;
  c.hidden_dim = 12;
  c.n_layers = 2;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.vocab_size = 262;
  c.seq_len = 16;
  std::uint32_t state = 12345;
  auto fill = [&](std::size_t n) {
    std::vector<float> v(n);
    for (float& x : v) {
      state = state * 1664525u + 1013904223u;  // LCG: same values on every platform
      x = float(int(state >> 20) - 2048) / 1024.0f;
    }
    return v;
  };
  const std::size_t d = 8, h = 12, l = 2, kv = 4, vocab = 262;
  passim::FloatWeights& w = m.weights;
  w.token_embedding = fill(vocab * d);
  w.rms_att = fill(l * d);
  w.wq = fill(l * d * d);
  w.wk = fill(l * kv * d);
  w.wv = fill(l * kv * d);
  w.wo = fill(l * d * d);
  w.rms_ffn = fill(l * d);
  w.w1 = fill(l * h * d);
  w.w2 = fill(l * d * h);
  w.w3 = fill(l * h * d);
  w.rms_final = fill(d);
  return m;
}

std::vector<std::string> tiny_tokens() {
  std::vector<std::string> t = {"<unk>", "<s>", "</s>"};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    t.emplace_back(buf);
  }
  for (const char* piece : {"\xE2\x96\x81", "a",
                            "\xE2\x96\x81"
                            "a"}) {
    t.emplace_back(piece);
  }
  return t;
}

/// Rows [first, first + count) of a row-major tensor with `cols` columns.
std::vector<float> rows(const std::vector<float>& v, std::size_t first, std::size_t count,
                        std::size_t cols) {
  return {v.begin() + std::ptrdiff_t(first * cols),
          v.begin() + std::ptrdiff_t((first + count) * cols)};
}

/// The tiny model as a GGUF writer: metadata, tokenizer and every tensor (F32).
GgufWriter tiny_writer(const FloatModel& m) {
  const passim::ModelConfig& c = m.config;
  const passim::FloatWeights& w = m.weights;
  GgufWriter g;
  g.str("general.architecture", "llama")
      .u32("llama.context_length", std::uint32_t(c.seq_len))
      .u32("llama.embedding_length", std::uint32_t(c.dim))
      .u32("llama.feed_forward_length", std::uint32_t(c.hidden_dim))
      .u32("llama.block_count", std::uint32_t(c.n_layers))
      .u32("llama.attention.head_count", std::uint32_t(c.n_heads))
      .u32("llama.attention.head_count_kv", std::uint32_t(c.n_kv_heads))
      .u32("llama.rope.dimension_count", std::uint32_t(c.head_size()))
      .f32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
      .str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", tiny_tokens());
  std::vector<float> scores(262, 0.0f);
  scores[259] = -2.0f;
  scores[260] = -1.0f;
  scores[261] = 0.0f;  // " a": the best merge
  std::vector<std::int32_t> types(262, 1);
  types[0] = 2;
  types[1] = types[2] = 3;
  for (int b = 0; b < 256; ++b) {
    types[std::size_t(b + 3)] = 6;
  }
  g.array<float>("tokenizer.ggml.scores", GgufType::kFloat32, scores)
      .array<std::int32_t>("tokenizer.ggml.token_type", GgufType::kInt32, types)
      .u32("tokenizer.ggml.bos_token_id", 1)
      .u32("tokenizer.ggml.eos_token_id", 2);
  const std::uint64_t d = 8, h = 12, kv = 4;
  g.tensor_f32("token_embd.weight", {d, 262}, w.token_embedding);
  g.tensor_f32("output_norm.weight", {d}, w.rms_final);
  for (std::size_t l = 0; l < 2; ++l) {
    auto name = [&](const char* what) {
      return "blk." + std::to_string(l) + "." + what + ".weight";
    };
    g.tensor_f32(name("attn_norm"), {d}, rows(w.rms_att, l, 1, d));
    g.tensor_f32(name("attn_q"), {d, d}, rows(w.wq, l * d, d, d));
    g.tensor_f32(name("attn_k"), {d, kv}, rows(w.wk, l * kv, kv, d));
    g.tensor_f32(name("attn_v"), {d, kv}, rows(w.wv, l * kv, kv, d));
    g.tensor_f32(name("attn_output"), {d, d}, rows(w.wo, l * d, d, d));
    g.tensor_f32(name("ffn_norm"), {d}, rows(w.rms_ffn, l, 1, d));
    g.tensor_f32(name("ffn_gate"), {d, h}, rows(w.w1, l * h, h, d));
    g.tensor_f32(name("ffn_down"), {h, d}, rows(w.w2, l * d, d, h));
    g.tensor_f32(name("ffn_up"), {d, h}, rows(w.w3, l * h, h, d));
  }
  return g;
}

FloatModel load_tiny(const GgufWriter& g) {
  return passim::float_model_from_gguf(GgufFile::parse(g.build().bytes, kSource));
}

/// Loading the model of `g` must fail; returns the message (checked to name the file).
std::string model_error(const GgufWriter& g) {
  const GgufFile f = GgufFile::parse(g.build().bytes, kSource);
  const std::string msg = runtime_error_message([&] { (void)passim::float_model_from_gguf(f); });
  EXPECT_TRUE(contains_all(msg, {std::string(kSource) + ": "}));
  return msg;
}

std::string tokenizer_error(const GgufWriter& g, int vocab_size = 262) {
  const GgufFile f = GgufFile::parse(g.build().bytes, kSource);
  const std::string msg =
      runtime_error_message([&] { (void)passim::tokenizer_from_gguf(f, vocab_size); });
  EXPECT_TRUE(contains_all(msg, {std::string(kSource) + ": "}));
  return msg;
}

TEST(GgufModelTiny, LoadsTheWeightsItWasBuiltFrom) {
  const FloatModel want = tiny_model();
  const FloatModel got = load_tiny(tiny_writer(want));
  EXPECT_EQ(got.config.dim, 8);
  EXPECT_EQ(got.config.hidden_dim, 12);
  EXPECT_EQ(got.config.n_layers, 2);
  EXPECT_EQ(got.config.n_heads, 2);
  EXPECT_EQ(got.config.n_kv_heads, 1);
  EXPECT_EQ(got.config.vocab_size, 262);
  EXPECT_EQ(got.config.seq_len, 16);
  EXPECT_TRUE(got.config.shared_classifier);
  EXPECT_EQ(got.source, kSource);
  EXPECT_EQ(got.sha256.size(), 64u);
  // Compare through the llama2.c serialisation: every tensor, in llama2.c order.
  EXPECT_EQ(passim::serialize_llama2c(got), passim::serialize_llama2c(want));
}

TEST(GgufModelTiny, HeadCountKvDefaultsToHeadCount) {
  FloatModel m = tiny_model();
  m.config.n_kv_heads = 2;
  m.weights.wk = m.weights.wq;
  m.weights.wv = m.weights.wo;
  GgufWriter g = tiny_writer(m);
  // Rewrite K and V at their full size, and drop the key.
  for (std::size_t l = 0; l < 2; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    g.remove(p + "attn_k.weight").remove(p + "attn_v.weight");
    g.tensor_f32(p + "attn_k.weight", {8, 8}, rows(m.weights.wk, l * 8, 8, 8));
    g.tensor_f32(p + "attn_v.weight", {8, 8}, rows(m.weights.wv, l * 8, 8, 8));
  }
  g.remove("llama.attention.head_count_kv");
  const FloatModel got = load_tiny(g);
  EXPECT_EQ(got.config.n_kv_heads, 2);
  EXPECT_EQ(got.weights.wk, m.weights.wk);
  EXPECT_EQ(got.weights.wv, m.weights.wv);
}

TEST(GgufModelTiny, OutputTensorSharedOnlyWhenItCopiesTheEmbedding) {
  const FloatModel m = tiny_model();
  GgufWriter copy = tiny_writer(m);
  copy.tensor_f32("output.weight", {8, 262}, m.weights.token_embedding);
  const FloatModel shared = load_tiny(copy);
  EXPECT_TRUE(shared.config.shared_classifier);
  EXPECT_TRUE(shared.weights.wcls.empty());

  std::vector<float> cls = m.weights.token_embedding;
  cls[100] += 0.5f;
  GgufWriter own = tiny_writer(m);
  own.tensor_f32("output.weight", {8, 262}, cls);
  const FloatModel unshared = load_tiny(own);
  EXPECT_FALSE(unshared.config.shared_classifier);
  EXPECT_EQ(unshared.weights.wcls, cls);
  EXPECT_EQ(unshared.weights.classifier().data(), unshared.weights.wcls.data());
}

TEST(GgufModelTiny, F16TensorsAreWidened) {
  const FloatModel m = tiny_model();  // every weight is a multiple of 2^-10 in [-2, 2): exact
  GgufWriter g = tiny_writer(m);
  g.remove("output_norm.weight");
  std::vector<std::uint8_t> half(8 * 2);
  for (std::size_t i = 0; i < 8; ++i) {
    const float x = m.weights.rms_final[i];
    // float -> half for these values: sign, exponent and a 10-bit mantissa, no rounding.
    int exp = 0;
    const float frac = std::frexp(std::fabs(x), &exp);  // |x| = frac * 2^exp, frac in [0.5, 1)
    std::uint16_t h = 0;
    if (x != 0.0f) {
      h = std::uint16_t(((exp + 14) << 10) | (std::uint16_t(frac * 2048.0f) & 0x3FF));
    }
    if (std::signbit(x)) {
      h = std::uint16_t(h | 0x8000);
    }
    std::memcpy(half.data() + 2 * i, &h, 2);
  }
  g.tensor("output_norm.weight", {8}, static_cast<std::uint32_t>(GgmlType::kF16), half);
  EXPECT_EQ(load_tiny(g).weights.rms_final, m.weights.rms_final);
}

TEST(GgufModelTiny, TokenizerFromMetadata) {
  const GgufFile f = GgufFile::parse(tiny_writer(tiny_model()).build().bytes, kSource);
  const passim::Tokenizer tok = passim::tokenizer_from_gguf(f, 262);
  EXPECT_EQ(tok.vocab_size(), 262);
  EXPECT_EQ(tok.piece(0), "<unk>");
  EXPECT_EQ(tok.piece(1), "\n<s>\n");
  EXPECT_EQ(tok.piece(2), "\n</s>\n");
  EXPECT_EQ(tok.piece(3 + 'A'), "<0x41>");
  EXPECT_EQ(tok.piece(259), " ");
  EXPECT_EQ(tok.piece(261), " a");
  EXPECT_EQ(tok.score(260), -1.0f);
  EXPECT_EQ(tok.encode("a a", true, false), (std::vector<int>{1, 261, 261}));
  EXPECT_EQ(tok.encode("a\n", false, true), (std::vector<int>{261, 3 + '\n', 2}));
  EXPECT_EQ(tok.decode(1, 261), "a");  // leading space dropped after BOS, as in run.c
  EXPECT_EQ(tok.decode(261, 3 + '\n'), "\n");
}

TEST(GgufModelTinyBad, MissingRequiredKeys) {
  for (const char* key :
       {"general.architecture", "llama.embedding_length", "llama.feed_forward_length",
        "llama.block_count", "llama.attention.head_count", "llama.context_length"}) {
    SCOPED_TRACE(key);
    GgufWriter g = tiny_writer(tiny_model());
    g.remove(key);
    EXPECT_TRUE(contains_all(model_error(g), {std::string("metadata '") + key + "'",
                                              "expected this key, found it missing"}));
  }
}

TEST(GgufModelTinyBad, MissingTensors) {
  for (const char* name : {"token_embd.weight", "output_norm.weight", "blk.1.ffn_up.weight",
                           "blk.0.attn_q.weight", "blk.1.attn_norm.weight"}) {
    SCOPED_TRACE(name);
    GgufWriter g = tiny_writer(tiny_model());
    g.remove(name);
    EXPECT_TRUE(contains_all(model_error(g), {std::string("tensor '") + name + "'",
                                              "expected this tensor, found it missing"}));
  }
}

TEST(GgufModelTinyBad, InconsistentDims) {
  const FloatModel m = tiny_model();
  GgufWriter k = tiny_writer(m);
  k.remove("blk.0.attn_k.weight")
      .tensor_f32("blk.0.attn_k.weight", {8, 8}, rows(m.weights.wq, 0, 8, 8));
  EXPECT_TRUE(contains_all(model_error(k),
                           {"tensor 'blk.0.attn_k.weight' dims", "expected [8, 4], found [8, 8]"}));
  GgufWriter down = tiny_writer(m);  // transposed: (in, out) swapped
  down.remove("blk.1.ffn_down.weight")
      .tensor_f32("blk.1.ffn_down.weight", {8, 12}, rows(m.weights.w2, 8, 8, 12));
  EXPECT_TRUE(contains_all(model_error(down), {"tensor 'blk.1.ffn_down.weight' dims",
                                               "expected [12, 8], found [8, 12]"}));
  GgufWriter norm = tiny_writer(m);
  norm.remove("output_norm.weight").tensor_f32("output_norm.weight", {8, 1}, m.weights.rms_final);
  EXPECT_TRUE(contains_all(model_error(norm),
                           {"tensor 'output_norm.weight' dims", "expected [8], found [8, 1]"}));
  GgufWriter embd = tiny_writer(m);
  embd.remove("token_embd.weight")
      .tensor_f32("token_embd.weight", {4, 524}, m.weights.token_embedding);
  EXPECT_TRUE(contains_all(model_error(embd), {"tensor 'token_embd.weight' dims",
                                               "expected [8, vocab_size", "found [4, 524]"}));
  GgufWriter out = tiny_writer(m);
  out.tensor_f32("output.weight", {8, 261}, rows(m.weights.token_embedding, 0, 261, 8));
  EXPECT_TRUE(contains_all(model_error(out),
                           {"tensor 'output.weight' dims", "expected [8, 262], found [8, 261]"}));
  GgufWriter vocab = tiny_writer(m);
  vocab.u32("llama.vocab_size", 300);
  EXPECT_TRUE(contains_all(model_error(vocab),
                           {"metadata 'llama.vocab_size'", "expected 262", "found 300"}));
}

TEST(GgufModelTinyBad, InconsistentHyperParameters) {
  struct Case {
    const char* key;
    std::uint32_t value;
    const char* expect;
  };
  const Case cases[] = {
      {"llama.embedding_length", 0, "expected 1..16384, found 0"},
      {"llama.block_count", 5000, "expected 1..1024, found 5000"},
      {"llama.attention.head_count", 3,
       "metadata 'llama.embedding_length' and 'llama.attention.head_count': expected "
       "llama.attention.head_count to divide llama.embedding_length, found "
       "llama.embedding_length = 8, llama.attention.head_count = 3"},
      {"llama.attention.head_count", 9, "expected 1..8, found 9"},
      {"llama.attention.head_count_kv", 3,
       "metadata 'llama.attention.head_count' and 'llama.attention.head_count_kv': expected "
       "llama.attention.head_count_kv to divide llama.attention.head_count, found "
       "llama.attention.head_count = 2, llama.attention.head_count_kv = 3"},
      {"llama.attention.head_count_kv", 9, "expected 1..8, found 9"},
      {"llama.attention.head_count", 8, "head size"},  // dim 8 / 8 heads = 1: odd
      {"llama.context_length", 0, "expected 1..65536, found 0"},
      {"llama.rope.dimension_count", 2, "expected 4 (the head size"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.key) + " = " + std::to_string(c.value));
    GgufWriter g = tiny_writer(tiny_model());
    g.remove(c.key).u32(c.key, c.value);
    if (std::string(c.key) == "llama.attention.head_count" && c.value == 8) {
      g.remove("llama.attention.head_count_kv");
    }
    const std::string msg = model_error(g);
    EXPECT_TRUE(contains_all(msg, {c.expect}));
  }
  GgufWriter kv = tiny_writer(tiny_model());
  kv.remove("llama.attention.head_count").u32("llama.attention.head_count", 4);
  kv.remove("llama.attention.head_count_kv").u32("llama.attention.head_count_kv", 3);
  EXPECT_TRUE(contains_all(model_error(kv), {"expected llama.attention.head_count_kv to divide "
                                             "llama.attention.head_count, found "
                                             "llama.attention.head_count = 4, "
                                             "llama.attention.head_count_kv = 3"}));
  // A head count that breaks both rules is the key named.
  GgufWriter both = tiny_writer(tiny_model());
  both.remove("llama.attention.head_count").u32("llama.attention.head_count", 3);
  both.remove("llama.attention.head_count_kv").u32("llama.attention.head_count_kv", 2);
  EXPECT_TRUE(contains_all(model_error(both),
                           {"metadata 'llama.attention.head_count': expected a divisor of "
                            "llama.embedding_length = 8 and a multiple of "
                            "llama.attention.head_count_kv = 2, found 3"}));
  GgufWriter type = tiny_writer(tiny_model());
  type.remove("llama.block_count").str("llama.block_count", "2");
  EXPECT_TRUE(contains_all(model_error(type),
                           {"metadata 'llama.block_count'", "expected an integer, found string"}));
}

TEST(GgufModelTinyBad, UnsupportedFeatures) {
  GgufWriter arch = tiny_writer(tiny_model());
  arch.remove("general.architecture").str("general.architecture", "gpt2");
  EXPECT_TRUE(contains_all(model_error(arch), {"metadata 'general.architecture'",
                                               "expected \"llama\" or \"passim-gpt\", found \"gpt2\""}));
  GgufWriter base = tiny_writer(tiny_model());
  base.f32("llama.rope.freq_base", 500000.0f);
  EXPECT_TRUE(contains_all(model_error(base),
                           {"metadata 'llama.rope.freq_base'", "expected 10000", "found 500000"}));
  GgufWriter base_ok = tiny_writer(tiny_model());
  base_ok.f32("llama.rope.freq_base", 10000.0f);
  EXPECT_EQ(load_tiny(base_ok).config.dim, 8);
  GgufWriter eps = tiny_writer(tiny_model());
  eps.remove("llama.attention.layer_norm_rms_epsilon")
      .f32("llama.attention.layer_norm_rms_epsilon", 1e-6f);
  EXPECT_TRUE(contains_all(model_error(eps), {"metadata 'llama.attention.layer_norm_rms_epsilon'",
                                              "expected 1e-05", "found 1e-06"}));
  GgufWriter scaling = tiny_writer(tiny_model());
  scaling.str("llama.rope.scaling.type", "linear");
  EXPECT_TRUE(contains_all(model_error(scaling),
                           {"metadata 'llama.rope.scaling.type'", "found \"linear\""}));
  GgufWriter experts = tiny_writer(tiny_model());
  experts.u32("llama.expert_count", 8);
  EXPECT_TRUE(contains_all(model_error(experts),
                           {"metadata 'llama.expert_count'", "expected 0", "found 8"}));
  GgufWriter extra = tiny_writer(tiny_model());
  extra.tensor_f32("rope_freqs.weight", {2}, {1.0f, 1.0f});
  EXPECT_TRUE(contains_all(model_error(extra), {"tensor 'rope_freqs.weight'",
                                                "expected only the tensors of a 2-block llama"}));
  GgufWriter extra_block = tiny_writer(tiny_model());
  extra_block.tensor_f32("blk.2.attn_norm.weight", {8}, std::vector<float>(8, 1.0f));
  EXPECT_TRUE(contains_all(model_error(extra_block), {"tensor 'blk.2.attn_norm.weight'"}));
}

TEST(GgufModelTinyBad, UnsupportedTensorType) {
  GgufWriter g = tiny_writer(tiny_model());
  g.remove("blk.0.attn_norm.weight")
      .tensor("blk.0.attn_norm.weight", {8}, static_cast<std::uint32_t>(GgmlType::kF64),
              std::vector<std::uint8_t>(64));
  EXPECT_TRUE(contains_all(model_error(g), {"tensor 'blk.0.attn_norm.weight' type",
                                            "expected F32 or F16, found F64 (28)"}));
  GgufWriter q = tiny_writer(tiny_model());
  q.remove("blk.1.ffn_gate.weight")
      .tensor("blk.1.ffn_gate.weight", {32, 3}, static_cast<std::uint32_t>(GgmlType::kQ8_0),
              std::vector<std::uint8_t>(3 * 34));
  // The shape is checked first (8 inputs cannot be a 32-wide Q8_0 row); then the type.
  EXPECT_TRUE(contains_all(model_error(q), {"tensor 'blk.1.ffn_gate.weight' dims"}));
}

TEST(GgufModelTinyBad, NonFiniteWeight) {
  FloatModel m = tiny_model();
  m.weights.wv[4 * 8 + 5] = std::numeric_limits<float>::quiet_NaN();  // layer 1, element 5
  EXPECT_TRUE(contains_all(model_error(tiny_writer(m)), {"tensor 'blk.1.attn_v.weight' element 5",
                                                         "expected a finite float, found nan"}));
  FloatModel inf = tiny_model();
  inf.weights.token_embedding.back() = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(contains_all(model_error(tiny_writer(inf)),
                           {"tensor 'token_embd.weight' element 2095", "found inf"}));
}

// A NaN merge score silently changes which pairs merge: refused like a NaN weight.
TEST(GgufModelTinyBad, NonFiniteTokenScore) {
  const FloatModel m = tiny_model();
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::infinity()}) {
    std::vector<float> scores(262, 0.0f);
    scores[261] = bad;  // " a"
    GgufWriter g = tiny_writer(m);
    g.remove("tokenizer.ggml.scores").array<float>("tokenizer.ggml.scores", GgufType::kFloat32,
                                                   scores);
    const std::string found = std::isnan(bad) ? "found nan" : "found -inf";
    EXPECT_TRUE(contains_all(tokenizer_error(g), {"metadata 'tokenizer.ggml.scores' element 261",
                                                  "expected a finite float", found}));
  }
}

TEST(GgufModelTinyBad, TokenizerMetadata) {
  const FloatModel m = tiny_model();
  GgufWriter model = tiny_writer(m);
  model.remove("tokenizer.ggml.model").str("tokenizer.ggml.model", "gpt2");
  EXPECT_TRUE(contains_all(tokenizer_error(model), {"metadata 'tokenizer.ggml.model'",
                                                    "expected \"llama\"", "found \"gpt2\""}));
  GgufWriter missing = tiny_writer(m);
  missing.remove("tokenizer.ggml.scores");
  EXPECT_TRUE(contains_all(tokenizer_error(missing),
                           {"metadata 'tokenizer.ggml.scores'", "found it missing"}));
  EXPECT_TRUE(contains_all(tokenizer_error(tiny_writer(m), 263),
                           {"metadata 'tokenizer.ggml.tokens'",
                            "expected 263 entries (the model's vocab_size), found 262"}));
  GgufWriter scores = tiny_writer(m);
  scores.remove("tokenizer.ggml.scores")
      .array<float>("tokenizer.ggml.scores", GgufType::kFloat32, std::vector<float>(261));
  EXPECT_TRUE(contains_all(tokenizer_error(scores), {"metadata 'tokenizer.ggml.scores'",
                                                     "expected 262 entries", "found 261"}));
  GgufWriter types = tiny_writer(m);
  types.remove("tokenizer.ggml.token_type")
      .array<std::int32_t>("tokenizer.ggml.token_type", GgufType::kInt32, {1, 2});
  EXPECT_TRUE(contains_all(tokenizer_error(types), {"metadata 'tokenizer.ggml.token_type'",
                                                    "expected 262 entries", "found 2"}));
  GgufWriter bos = tiny_writer(m);
  bos.remove("tokenizer.ggml.bos_token_id").u32("tokenizer.ggml.bos_token_id", 5);
  EXPECT_TRUE(contains_all(tokenizer_error(bos),
                           {"metadata 'tokenizer.ggml.bos_token_id'", "expected 1", "found 5"}));
  GgufWriter eos = tiny_writer(m);
  eos.remove("tokenizer.ggml.eos_token_id").u32("tokenizer.ggml.eos_token_id", 0);
  EXPECT_TRUE(contains_all(tokenizer_error(eos),
                           {"metadata 'tokenizer.ggml.eos_token_id'", "expected 2", "found 0"}));
  GgufWriter prefix = tiny_writer(m);
  prefix.boolean("tokenizer.ggml.add_space_prefix", 0);
  EXPECT_TRUE(contains_all(tokenizer_error(prefix),
                           {"metadata 'tokenizer.ggml.add_space_prefix'", "expected true"}));
  auto tokens = tiny_tokens();
  std::swap(tokens[3 + 0x41], tokens[3 + 0x42]);
  GgufWriter bytes = tiny_writer(m);
  bytes.remove("tokenizer.ggml.tokens").strings("tokenizer.ggml.tokens", tokens);
  EXPECT_TRUE(contains_all(tokenizer_error(bytes), {"metadata 'tokenizer.ggml.tokens' element 68",
                                                    "expected \"<0x41>\"", "found \"<0x42>\""}));
  const GgufFile f = GgufFile::parse(tiny_writer(m).build().bytes, kSource);
  EXPECT_TRUE(contains_all(runtime_error_message([&] { (void)passim::tokenizer_from_gguf(f, 2); }),
                           {kSource, "vocab_size: expected 3..", "found 2"}));
}

}  // namespace
