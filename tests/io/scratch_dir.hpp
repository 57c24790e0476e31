// SPDX-License-Identifier: Apache-2.0
/// \file Helpers shared by the io tests: a private temporary folder for corrupted copies of the
/// real inputs, byte-level file helpers and a substring assertion for error messages.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "passim/io/file.hpp"

namespace passim::test {

/// A fresh folder under the system temporary directory, removed with its contents when the
/// object goes out of scope. The name holds the running test's name and a random suffix, so
/// tests running in parallel (ctest -j) never share it.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "passim_io";
    if (info != nullptr) {
      name += std::string("_") + info->test_suite_name() + "_" + info->name();
    }
    std::random_device rd;
    for (int attempt = 0; attempt < 100; ++attempt) {
      const auto candidate = std::filesystem::temp_directory_path() /
                             (name + "_" + std::to_string(rd()) + std::to_string(rd()));
      if (std::filesystem::create_directory(candidate)) {
        path_ = candidate;
        return;
      }
    }
    throw std::runtime_error("cannot create a unique temporary folder for " + name);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);  // best effort; never throw from a destructor
  }

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& file) const {
    return path_ / file;
  }

 private:
  std::filesystem::path path_;
};

/// The whole file as bytes (at most 64 MiB; the inputs are about 1 MiB).
inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  return passim::read_file(path, std::uint64_t{1} << 26);
}

/// Writes `bytes` to `path`, replacing any existing file.
inline void write_bytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    throw std::runtime_error("cannot write " + path.string());
  }
}

/// Overwrites sizeof(T) bytes at `offset` with `value` (little-endian host, like the formats).
template <typename T>
void patch(std::vector<std::uint8_t>& bytes, std::size_t offset, T value) {
  ASSERT_LE(offset + sizeof(T), bytes.size());
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

/// Succeeds when `text` contains every one of `parts`; otherwise reports the missing part and
/// the whole text.
inline ::testing::AssertionResult contains_all(std::string_view text,
                                               std::initializer_list<std::string_view> parts) {
  for (const std::string_view part : parts) {
    if (text.find(part) == std::string_view::npos) {
      return ::testing::AssertionFailure()
             << "missing \"" << part << "\" in message: \"" << text << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

/// Runs `fn`, which must throw std::runtime_error, and returns what(); an empty string (and a
/// test failure) when it returns normally or throws something else.
template <typename Fn>
std::string runtime_error_message(Fn&& fn) {
  try {
    fn();
  } catch (const std::runtime_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected std::runtime_error, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected std::runtime_error, but nothing was thrown";
  return {};
}

}  // namespace passim::test
