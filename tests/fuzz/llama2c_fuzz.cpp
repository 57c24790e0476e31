// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the llama2.c checkpoint reader (`load_llama2c`). The input is the whole file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "passim/io/llama2c.hpp"
#include "scratch_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static passim::fuzz::ScratchFile file(".bin");
  const auto& path = file.write({data, size});
  try {
    const passim::FloatModel m = passim::load_llama2c(path);
    // A file the reader accepts has exactly the size its header implies.
    if (passim::serialize_llama2c(m).size() != size) {
      std::abort();
    }
  } catch (const std::runtime_error&) {
    // The documented rejection of a malformed file.
  }
  return 0;
}
