// SPDX-License-Identifier: Apache-2.0
/// \file The project's quantised model format (.psm): versioned, typed, checksummed
/// (docs/model-format.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "passim/quant/quant_model.hpp"

namespace passim {

/// Version 2 adds GPT blocks (arch, norm kind, biases, positions, GELU, BatchNorm mode) and
/// the requantisation bias; version 1 files (llama) still load.
inline constexpr std::uint32_t kPsmVersion = 2;

/// Writes the project format: magic "PASSIMQ\0", version, config, named typed tensors, and
/// a SHA-256 of everything before it. Returns the bytes (see save_psm for files). Throws
/// std::runtime_error for an encoder config (post-norm, unmasked, no final norm), which this
/// version has no fields for.
[[nodiscard]] std::vector<std::uint8_t> serialize_psm(const QuantModel& m);
void save_psm(const QuantModel& m, const std::filesystem::path& path);

/// Reads the project format. Every length, offset, dtype and shape is checked against the
/// file size and the config; the checksum detects corruption. Throws std::runtime_error
/// naming the file, the field or tensor, and expected vs found.
[[nodiscard]] QuantModel parse_psm(const std::vector<std::uint8_t>& data, const std::string& source);
[[nodiscard]] QuantModel load_psm(const std::filesystem::path& path);

/// True when the file starts with the project-format magic.
[[nodiscard]] bool is_psm_file(const std::filesystem::path& path);

/// When the file's first 8 bytes are the project-format magic "PASSIMQ\0" with one or two
/// bytes changed (a damaged .psm, which would otherwise be read as some other format), an
/// error text naming the file, the magic and the bytes found; otherwise "".
[[nodiscard]] std::string psm_magic_near_miss(const std::filesystem::path& path);

}  // namespace passim
