// SPDX-License-Identifier: Apache-2.0
/// \file Whole-file reading with clear errors, and SHA-256 (OpenSSL) for model identity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace passim {

/// Reads a whole file. Throws std::runtime_error naming the file if it cannot be opened,
/// is not a regular file, or is larger than `max_bytes`.
[[nodiscard]] std::vector<std::uint8_t> read_file(const std::filesystem::path& path,
                                                  std::uint64_t max_bytes);

/// Reads at most the first `max_bytes` bytes of a file (fewer if the file is shorter).
/// Throws std::runtime_error naming the file if it is missing or cannot be read.
[[nodiscard]] std::vector<std::uint8_t> read_file_prefix(const std::filesystem::path& path,
                                                         std::size_t max_bytes);

/// How a file's first bytes compare with a format's magic: `differ` bytes of `head` (the
/// file's first magic.size() bytes) are not the magic's. `head` is empty (and `differ` 0)
/// when the file is missing, not a regular file, or shorter than the magic; never throws.
struct MagicMatch {
  std::vector<std::uint8_t> head;
  int differ = 0;
};
[[nodiscard]] MagicMatch compare_magic(const std::filesystem::path& path,
                                       std::span<const char> magic);

/// SHA-256 of `data` as 64 lowercase hex digits.
[[nodiscard]] std::string sha256_hex(std::span<const std::uint8_t> data);
/// SHA-256 of `data` as 32 raw bytes.
[[nodiscard]] std::vector<std::uint8_t> sha256_raw(std::span<const std::uint8_t> data);

}  // namespace passim
