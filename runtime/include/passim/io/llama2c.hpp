// SPDX-License-Identifier: Apache-2.0
/// \file Loader for llama2.c checkpoints (the legacy "version 0" float32 layout).
#pragma once

#include <filesystem>
#include <cstdint>
#include <vector>

#include "passim/model/weights.hpp"

namespace passim {

/// Reads a llama2.c checkpoint: seven little-endian int32 (dim, hidden_dim, n_layers,
/// n_heads, n_kv_heads, vocab_size, seq_len; a negative vocab_size means an unshared
/// classifier follows), then float32 tensors in llama2.c order.
/// Throws std::runtime_error naming the file, the field and expected vs found when the header
/// is inconsistent, the file size does not match the header (truncated or padded), or a
/// weight is not finite. Nothing is allocated before the size check passes.
[[nodiscard]] FloatModel load_llama2c(const std::filesystem::path& path);

/// Serialises a float model back to the llama2.c layout (RoPE tables written as zeros,
/// since llama2.c recomputes them). Used by tests to build corrupt variants.
[[nodiscard]] std::vector<std::uint8_t> serialize_llama2c(const FloatModel& model);

}  // namespace passim
