// SPDX-License-Identifier: Apache-2.0
/// \file Locating the shared real inputs (stories260K, tok512, texts) from tests.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace passim::test {

/// The data folder: $PASSIM_DATA if set to an absolute path, else the path configured at
/// build time (a relative $PASSIM_DATA is resolved against the source tree when configuring,
/// since tests run from their own build folders).
inline std::filesystem::path data_dir() {
  if (const char* env = std::getenv("PASSIM_DATA"); env != nullptr && *env == '/') {
    return env;
  }
  return PASSIM_DATA_DIR;
}

inline std::filesystem::path model_path() { return data_dir() / "models" / "stories260K.bin"; }
inline std::filesystem::path tokenizer_path() { return data_dir() / "models" / "tok512.bin"; }
/// The same model and tokenizer in one GGUF file.
inline std::filesystem::path gguf_model_path() {
  return data_dir() / "models" / "stories260K.gguf";
}
inline std::filesystem::path sample_text_path() {
  return data_dir() / "text" / "tinystories_sample.txt";
}
inline std::filesystem::path shakespeare_path() {
  return data_dir() / "text" / "tinyshakespeare.txt";
}
/// The project's own models, committed under models/ (no ../shared needed): "ln-gpt" or
/// "bn-gpt" -> models/<name>/<name>.gguf.
inline std::filesystem::path project_model_path(const std::string& name) {
  return std::filesystem::path(PASSIM_MODELS_DIR) / name / (name + ".gguf");
}

}  // namespace passim::test

/// Skips the current test when the shared data is not present (fresh clone without ../shared).
#define PASSIM_REQUIRE_DATA()                                                                 \
  do {                                                                                        \
    if (!std::filesystem::exists(::passim::test::model_path())) {                             \
      GTEST_SKIP() << "stories260K not found at " << ::passim::test::model_path()             \
                   << " (set PASSIM_DATA to the folder holding models/ and text/)";           \
    }                                                                                         \
  } while (0)

/// Skips the current test when the GGUF copy of stories260K (or the .bin it is compared
/// with) is not present.
#define PASSIM_REQUIRE_GGUF()                                                                 \
  do {                                                                                        \
    PASSIM_REQUIRE_DATA();                                                                    \
    if (!std::filesystem::exists(::passim::test::gguf_model_path())) {                        \
      GTEST_SKIP() << "stories260K.gguf not found at " << ::passim::test::gguf_model_path()   \
                   << " (set PASSIM_DATA to the folder holding models/ and text/)";           \
    }                                                                                         \
  } while (0)
