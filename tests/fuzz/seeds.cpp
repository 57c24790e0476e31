// SPDX-License-Identifier: Apache-2.0
// passim_fuzz_seeds: small whole files of every format the fuzz targets read, from tiny models
// with fixed weights, and programs compiled from them for `tiny`. Truncated data files stop at
// a reader's first size check; these reach every later one.
//
//   passim_fuzz_seeds <target> <out dir>    # target: llama2c tokenizer gguf psm program
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gguf_writer.hpp"
#include "gpt_fixture.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/io/psm.hpp"
#include "passim/quant/quantize.hpp"

namespace {

using passim::FloatModel;
using passim::QuantModel;
namespace fs = std::filesystem;

void write_file(const fs::path& path, std::span<const std::uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!out) {
    throw std::runtime_error(fmt::format("{}: cannot write", path.string()));
  }
}

template <typename T>
void put(std::vector<std::uint8_t>& b, T v) {
  const std::size_t at = b.size();
  b.resize(at + sizeof v);
  std::memcpy(b.data() + at, &v, sizeof v);
}

/// A 2-block llama (dim 8, hidden 12, 2 heads, 1 KV head, vocab 262, context 16) with
/// weights from an LCG; `shared`: the classifier is the embedding.
FloatModel tiny_llama(bool shared) {
  FloatModel m;
  passim::ModelConfig& c = m.config;
  c.dim = 8;
  c.hidden_dim = 12;
  c.n_layers = 2;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.vocab_size = 262;
  c.seq_len = 16;
  c.shared_classifier = shared;
  std::uint32_t state = 12345;
  auto fill = [&](std::size_t n) {
    std::vector<float> v(n);
    for (float& x : v) {
      state = state * 1664525u + 1013904223u;
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
  if (!shared) {
    w.wcls = fill(vocab * d);
  }
  m.source = "tiny-llama";
  m.sha256 = std::string(64, '0');
  return m;
}

/// The tiny llama's 262 pieces: <unk>, <s>, </s>, the 256 byte pieces, then U+2581, "a" and
/// U+2581 "a" (llama2.c writes U+2581 as a space).
std::vector<std::string> tiny_pieces(bool gguf) {
  std::vector<std::string> t = {"<unk>", gguf ? "<s>" : "\n<s>\n", gguf ? "</s>" : "\n</s>\n"};
  for (int b = 0; b < 256; ++b) {
    t.push_back(fmt::format("<0x{:02X}>", b));
  }
  const std::string space = gguf ? "\xE2\x96\x81" : " ";
  t.insert(t.end(), {space, "a", space + "a"});
  return t;
}

std::vector<float> tiny_scores() {
  std::vector<float> s(262, 0.0f);
  s[259] = -2.0f;
  s[260] = -1.0f;
  return s;
}

/// The target's input: vocab_size (int32), then the llama2.c tokenizer file.
std::vector<std::uint8_t> tiny_tokenizer_input() {
  std::vector<std::uint8_t> b;
  put(b, std::int32_t{262});
  put(b, std::int32_t{7});  // max_token_length: "\n</s>\n"
  const std::vector<float> scores = tiny_scores();
  const std::vector<std::string> pieces = tiny_pieces(false);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    put(b, scores[i]);
    put(b, std::int32_t(pieces[i].size()));
    b.insert(b.end(), pieces[i].begin(), pieces[i].end());
  }
  return b;
}

/// Rows [first, first + count) of a row-major tensor with `cols` columns.
std::vector<float> rows(const std::vector<float>& v, std::size_t first, std::size_t count,
                        std::size_t cols) {
  return {v.begin() + std::ptrdiff_t(first * cols),
          v.begin() + std::ptrdiff_t((first + count) * cols)};
}

/// The tiny llama as a GGUF file: metadata, tokenizer and every tensor (F32).
std::vector<std::uint8_t> tiny_gguf() {
  const FloatModel m = tiny_llama(true);
  const passim::FloatWeights& w = m.weights;
  passim::test::GgufWriter g;
  g.str("general.architecture", "llama")
      .u32("llama.context_length", 16)
      .u32("llama.embedding_length", 8)
      .u32("llama.feed_forward_length", 12)
      .u32("llama.block_count", 2)
      .u32("llama.attention.head_count", 2)
      .u32("llama.attention.head_count_kv", 1)
      .u32("llama.rope.dimension_count", 4)
      .f32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
      .str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", tiny_pieces(true))
      .array<float>("tokenizer.ggml.scores", passim::GgufType::kFloat32, tiny_scores())
      .u32("tokenizer.ggml.bos_token_id", 1)
      .u32("tokenizer.ggml.eos_token_id", 2);
  const std::uint64_t d = 8, h = 12, kv = 4;
  g.tensor_f32("token_embd.weight", {d, 262}, w.token_embedding);
  g.tensor_f32("output_norm.weight", {d}, w.rms_final);
  for (std::size_t l = 0; l < 2; ++l) {
    auto name = [&](const char* what) { return fmt::format("blk.{}.{}.weight", l, what); };
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
  return g.build().bytes;
}

QuantModel quantised(const FloatModel& fm, passim::BatchNormMode batchnorm) {
  passim::QuantOptions opts;
  opts.batchnorm = batchnorm;
  return passim::quantize(fm, passim::calibrate(fm, passim::self_generated_calibration(fm, 8)),
                          opts);
}

/// The tiny models quantised, by name: llama, GPT with LayerNorm (with its character
/// vocabulary), GPT with BatchNorm unfused and folded.
std::vector<std::pair<std::string, QuantModel>> tiny_quant_models() {
  using passim::BatchNormMode;
  using passim::NormKind;
  std::vector<std::pair<std::string, QuantModel>> out;
  out.emplace_back("tiny-llama", quantised(tiny_llama(false), BatchNormMode::kUnfused));
  QuantModel ln = quantised(passim::test::random_gpt(NormKind::kLayer, 1), BatchNormMode::kUnfused);
  const passim::Tokenizer chars = passim::test::random_gpt_tokenizer();
  for (int i = 0; i < chars.vocab_size(); ++i) {
    ln.char_vocab.push_back(chars.piece(i));
  }
  out.emplace_back("tiny-gpt-ln", std::move(ln));
  const FloatModel bn = passim::test::random_gpt(NormKind::kBatch, 2);
  out.emplace_back("tiny-gpt-bn", quantised(bn, BatchNormMode::kUnfused));
  out.emplace_back("tiny-gpt-bn-folded", quantised(bn, BatchNormMode::kFolded));
  return out;
}

/// Every program of the preload (if the weights are resident) and of the first two steps, for
/// `tiny`, one file each.
void write_programs(const fs::path& out, const std::string& name, const QuantModel& m) {
  const passim::ModelCompiler compiler(m, passim::hw::kTiny);
  std::vector<std::vector<passim::hw::Instr>> programs = compiler.preload();
  for (int pos = 0; pos < 2; ++pos) {
    auto step = compiler.step(m.config.bos_token, pos);
    programs.insert(programs.end(), step.begin(), step.end());
  }
  for (std::size_t i = 0; i < programs.size(); ++i) {
    const auto& p = programs[i];
    write_file(out / fmt::format("{}-{:03}.bin", name, i),
               {reinterpret_cast<const std::uint8_t*>(p.data()), p.size() * sizeof p[0]});
  }
}

void write_seeds(const std::string& target, const fs::path& out) {
  if (target == "llama2c") {
    write_file(out / "tiny-llama.bin", passim::serialize_llama2c(tiny_llama(true)));
    write_file(out / "tiny-llama-wcls.bin", passim::serialize_llama2c(tiny_llama(false)));
  } else if (target == "tokenizer") {
    write_file(out / "tiny-262.tok", tiny_tokenizer_input());
  } else if (target == "gguf") {
    write_file(out / "tiny-llama.gguf", tiny_gguf());
  } else if (target == "psm") {
    for (const auto& [name, m] : tiny_quant_models()) {
      write_file(out / (name + ".psm"), passim::serialize_psm(m));
    }
  } else if (target == "program") {
    for (const auto& [name, m] : tiny_quant_models()) {
      write_programs(out, name, m);
    }
  } else {
    throw std::runtime_error(fmt::format("unknown target '{}'", target));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: passim_fuzz_seeds <llama2c|tokenizer|gguf|psm|program> <out dir>\n";
    return 2;
  }
  try {
    fs::create_directories(argv[2]);
    write_seeds(argv[1], argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "passim_fuzz_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
