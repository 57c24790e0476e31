// SPDX-License-Identifier: Apache-2.0
// Reading a model and its tokenizer, and quantising it in memory.
#include "passim/eval/load.hpp"

#include <filesystem>
#include <new>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/eval/calibrate.hpp"
#include "passim/eval/perplexity.hpp"
#include "passim/io/file.hpp"
#include "passim/io/gguf.hpp"
#include "passim/io/gguf_model.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/io/psm.hpp"
#include "passim/quant/quantize.hpp"

namespace passim {

namespace fs = std::filesystem;

namespace {

constexpr int kDefaultCalibPositions = 128;

/// `read` with running out of memory reported as such, with what was being done.
template <typename Read>
auto out_of_memory_as_error(const std::string& doing, const Read& read) {
  try {
    return read();
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(fmt::format("out of memory while {}", doing));
  }
}

std::string find_tokenizer(const ModelSource& src) {
  std::string path = tokenizer_path(src.path, src.tokenizer);
  if (path.empty()) {
    throw std::runtime_error(fmt::format(
        "--tokenizer: not given, and neither tokenizer.bin nor tok512.bin is next to {}",
        src.path));
  }
  return path;
}

/// A llama2.c tokenizer file, or the tokenizer in a GGUF file's metadata (by content).
Tokenizer load_tokenizer(const std::string& path, int vocab_size) {
  if (is_gguf_file(path)) {
    return tokenizer_from_gguf(GgufFile::read(path), vocab_size);
  }
  return Tokenizer::load(path, vocab_size);
}

void read_gguf(const ModelSource& src, LoadedModel& m) {
  const GgufFile file =
      src.path.empty()
          ? GgufFile::parse(std::vector<std::uint8_t>(src.builtin.begin(), src.builtin.end()),
                            src.builtin_name)
          : GgufFile::read(src.path);
  m.float_model = float_model_from_gguf(file);
  m.config = m.float_model->config;
  m.sha256 = m.float_model->sha256;
  if (src.tokenizer.empty()) {
    m.tokenizer = tokenizer_from_gguf(file, m.config.vocab_size);
  }
}

void read_psm(const ModelSource& src, LoadedModel& m) {
  if (src.need_float) {
    throw std::runtime_error(fmt::format(
        "{}: backend float needs a float model (llama2.c .bin or GGUF), found a quantised "
        ".psm model", src.path));
  }
  m.quant_model = load_psm(src.path);
  m.config = m.quant_model->config;
  m.sha256 = sha256_hex(read_file(src.path, std::uint64_t{1} << 34));
  if (!m.quant_model->char_vocab.empty() && src.tokenizer.empty()) {
    m.tokenizer = Tokenizer::char_level(m.quant_model->char_vocab, m.config.bos_token, src.path);
  }
}

}  // namespace

std::string tokenizer_path(const std::string& model, const std::string& tokenizer) {
  if (!tokenizer.empty() || model.empty()) {
    return tokenizer;
  }
  std::error_code ec;
  for (const char* name : {"tokenizer.bin", "tok512.bin"}) {
    const fs::path p = fs::path(model).parent_path() / name;
    if (fs::exists(p, ec)) {
      return p.string();
    }
  }
  return {};
}

LoadedModel read_model(const ModelSource& src) {
  LoadedModel m;
  m.name = src.path.empty() ? src.builtin_name : src.path;
  out_of_memory_as_error(fmt::format("loading the model {}", m.name), [&] {
    // The format is told by the file's first bytes, never by its name.
    if (src.path.empty() || is_gguf_file(src.path)) {
      read_gguf(src, m);
    } else if (is_psm_file(src.path)) {
      read_psm(src, m);
    } else {
      // Neither magic: a llama2.c checkpoint, unless a magic is there with a byte or two
      // changed (then say so instead of reporting a bad llama2.c header).
      for (const std::string& why : {psm_magic_near_miss(src.path),
                                     gguf_magic_near_miss(src.path)}) {
        if (!why.empty()) {
          throw std::runtime_error(why);
        }
      }
      m.float_model = load_llama2c(src.path);
      m.config = m.float_model->config;
      m.sha256 = m.float_model->sha256;
    }
    return 0;
  });
  if (!m.tokenizer) {
    const std::string path = find_tokenizer(src);
    m.tokenizer = out_of_memory_as_error(fmt::format("loading the tokenizer {}", path),
                                         [&] { return load_tokenizer(path, m.config.vocab_size); });
  }
  return m;
}

Calibration calibration_for(const FloatModel& fm, const Tokenizer& tok,
                            const std::string& calib_text, const Notice& notice) {
  std::vector<std::vector<int>> ids;
  std::string source;
  if (!calib_text.empty()) {
    ids = calibration_documents(fm.config, tok, calib_text, notice);
    source = fmt::format("text {} ({} documents)", fs::path(calib_text).filename().string(),
                         ids.size());
  } else {
    ids = self_generated_calibration(fm, kDefaultCalibPositions);
    source = "self-generated text (greedy + 3 sampled runs)";
  }
  Calibration c = calibrate(fm, ids);
  c.description = fmt::format("{}, {} positions", source, c.positions);
  notice(fmt::format("calibration: {}", c.description));
  if (c.positions < kDefaultCalibPositions) {
    notice(fmt::format("warning: calibration saw only {} positions; activation scales may clip",
                       c.positions));
  }
  return c;
}

void quantise_in_memory(LoadedModel& m, const std::string& calib_text, BatchNormMode batchnorm,
                        const Notice& notice) {
  notice(fmt::format("quantising {} in memory", m.name));
  out_of_memory_as_error(fmt::format("quantising the model {}", m.name), [&] {
    QuantOptions qo;
    qo.batchnorm = batchnorm;
    // The calibration text is read first: a text that cannot be read is not the model's fault.
    Calibration calib;
    try {
      calib = calibration_for(*m.float_model, *m.tokenizer, calib_text, notice);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      if (calib_text.empty()) {  // the model's own text: its forward pass failed
        throw std::runtime_error(fmt::format("{}: calibration: {}", m.name, e.what()));
      }
      throw std::runtime_error(fmt::format("--calib-text: {}", e.what()));
    }
    try {
      m.quant_model = quantize(*m.float_model, calib, qo);
    } catch (const std::bad_alloc&) {
      throw;  // not the model's fault
    } catch (const std::exception& e) {
      // Weights or activations outside what int8 with int32 requantisation can represent.
      throw std::runtime_error(
          fmt::format("{}: cannot quantise this model: {}", m.name, e.what()));
    }
    return 0;
  });
  if (m.tokenizer->is_char_level()) {
    for (int i = 0; i < m.tokenizer->vocab_size(); ++i) {
      m.quant_model->char_vocab.push_back(m.tokenizer->piece(i));
    }
  }
}

}  // namespace passim
