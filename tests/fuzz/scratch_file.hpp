// SPDX-License-Identifier: Apache-2.0
/// \file A scratch file for fuzz targets whose loader takes a path, not bytes.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <system_error>

namespace passim::fuzz {

/// A file named after this process (libFuzzer's -jobs and -fork run several at once), rewritten
/// with every input and removed when the process exits normally. It lives in /dev/shm when that
/// folder exists (memory, not disk: truncating and rewriting a file on ext4 costs more than the
/// parse), else in the temporary folder.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& suffix)
      : path_(folder() / ("passim-fuzz-" + std::to_string(::getpid()) + suffix)) {}
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }

  /// Replaces the file's contents with `bytes` and returns its path. A failed write is the
  /// machine's fault, not the parser's: it aborts rather than feed the loader a partial file.
  const std::filesystem::path& write(std::span<const std::uint8_t> bytes) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    out.close();
    if (!out) {
      std::abort();
    }
    return path_;
  }

 private:
  static std::filesystem::path folder() {
    std::error_code ignored;
    const std::filesystem::path shm = "/dev/shm";
    return std::filesystem::is_directory(shm, ignored) ? shm
                                                       : std::filesystem::temp_directory_path();
  }

  std::filesystem::path path_;
};

}  // namespace passim::fuzz
