// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the llama2.c tokenizer reader (`Tokenizer::load`). The input is the vocab_size
// the file is read for (int32, little-endian) followed by the file. A tokenizer that loads then
// encodes a short text and decodes every piece.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "passim/io/tokenizer.hpp"
#include "scratch_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static passim::fuzz::ScratchFile file(".tok");
  std::int32_t vocab_size = 0;
  if (size < sizeof vocab_size) {
    return 0;
  }
  std::memcpy(&vocab_size, data, sizeof vocab_size);
  const auto& path = file.write({data + sizeof vocab_size, size - sizeof vocab_size});
  try {
    const passim::Tokenizer tok = passim::Tokenizer::load(path, vocab_size);
    const std::vector<int> ids =
        tok.encode("Once upon a time, \xC3\xA9\xF0\x9F\x98\x80!", true, true);
    for (int id = 0; id < tok.vocab_size(); ++id) {
      (void)tok.decode(passim::kBosToken, id);
    }
    for (std::size_t i = 1; i < ids.size(); ++i) {
      (void)tok.decode(ids[i - 1], ids[i]);
    }
  } catch (const std::runtime_error&) {
    // The documented rejection of a malformed file, or a text byte that has no piece.
  }
  return 0;
}
