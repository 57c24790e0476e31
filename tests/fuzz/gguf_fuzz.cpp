// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the GGUF reader (`GgufFile::parse`) and what is built from a parsed file: the
// float model (`float_model_from_gguf`, llama and passim-gpt) and the tokenizer
// (`tokenizer_from_gguf`). The input is the whole file.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "passim/io/gguf.hpp"
#include "passim/io/gguf_model.hpp"

namespace {

/// The vocabulary size to read the tokenizer for: the model's, else the number of
/// `tokenizer.ggml.tokens`, else none.
std::optional<int> vocab_size(const passim::GgufFile& f, const std::optional<int>& model_vocab) {
  if (model_vocab) {
    return model_vocab;
  }
  const passim::GgufValue* tokens = f.find("tokenizer.ggml.tokens");
  if (tokens == nullptr || tokens->count > (1u << 20)) {
    return std::nullopt;
  }
  return int(tokens->count);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<passim::GgufFile> file;
  try {
    file.emplace(passim::GgufFile::parse({data, data + size}, "fuzz.gguf"));
  } catch (const std::runtime_error&) {
    return 0;  // the documented rejection of a malformed file
  }
  std::optional<int> model_vocab;
  try {
    model_vocab = passim::float_model_from_gguf(*file).config.vocab_size;
  } catch (const std::runtime_error&) {
    // not a model the runtime computes, or a malformed one
  }
  if (const auto vocab = vocab_size(*file, model_vocab)) {
    try {
      (void)passim::tokenizer_from_gguf(*file, *vocab);
    } catch (const std::runtime_error&) {
      // no tokenizer, or a malformed one
    }
  }
  return 0;
}
