// SPDX-License-Identifier: Apache-2.0
/// \file The model built into the `passim` binary: the project's LayerNorm character GPT
/// (models/ln-gpt/ln-gpt.gguf, model card models/ln-gpt/README.md), so that `passim run`
/// works with no arguments and no data on disk.
#pragma once

#include <cstdint>
#include <span>

namespace passim::app {

/// The GGUF bytes of the built-in model; empty when the build had no models/ln-gpt/ln-gpt.gguf.
[[nodiscard]] std::span<const std::uint8_t> default_model_bytes() noexcept;

/// The name reports and messages use for it.
inline constexpr const char* kDefaultModelName = "built-in models/ln-gpt/ln-gpt.gguf";

}  // namespace passim::app
