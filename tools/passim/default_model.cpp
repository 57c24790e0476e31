// SPDX-License-Identifier: Apache-2.0
// The built-in model's bytes, assembled into .rodata from the committed GGUF file
// (PASSIM_DEFAULT_MODEL_PATH, set by tools/passim/CMakeLists.txt).
#include "default_model.hpp"

#ifdef PASSIM_DEFAULT_MODEL_PATH
// .incbin copies the file into the object at assembly time; CMake re-assembles this file
// whenever the model changes (OBJECT_DEPENDS).
asm(".section .rodata\n"
    ".balign 64\n"
    "passim_default_model_begin:\n"
    ".incbin \"" PASSIM_DEFAULT_MODEL_PATH "\"\n"
    "passim_default_model_end:\n"
    ".previous\n");
extern "C" const std::uint8_t passim_default_model_begin[];
extern "C" const std::uint8_t passim_default_model_end[];
#endif

namespace passim::app {

std::span<const std::uint8_t> default_model_bytes() noexcept {
#ifdef PASSIM_DEFAULT_MODEL_PATH
  return {passim_default_model_begin, passim_default_model_end};
#else
  return {};
#endif
}

}  // namespace passim::app
