// SPDX-License-Identifier: Apache-2.0
// File reading and hashing.
#include "passim/io/file.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

namespace passim {

namespace {

/// Throws naming the file unless it exists and is a regular file (not a directory, fifo or
/// device, which could block or never end).
void check_regular_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    throw std::runtime_error(fmt::format("{}: file not found", path.string()));
  }
  if (!std::filesystem::is_regular_file(status)) {
    throw std::runtime_error(fmt::format("{}: not a regular file", path.string()));
  }
}

/// The file opened for binary reading; throws naming the file and the reason otherwise.
std::ifstream open_binary(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error(
        fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  }
  return in;
}

}  // namespace

std::vector<std::uint8_t> read_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  check_regular_file(path);
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    throw std::runtime_error(fmt::format("{}: cannot read size: {}", path.string(), ec.message()));
  }
  if (size > max_bytes) {
    throw std::runtime_error(fmt::format("{}: file is {} bytes, more than the {} bytes allowed",
                                         path.string(), size, max_bytes));
  }
  std::ifstream in = open_binary(path);
  std::vector<std::uint8_t> data(size);
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(size));
  if (static_cast<std::uint64_t>(in.gcount()) != size) {
    throw std::runtime_error(fmt::format("{}: short read: expected {} bytes, got {}",
                                         path.string(), size, in.gcount()));
  }
  return data;
}

MagicMatch compare_magic(const std::filesystem::path& path, std::span<const char> magic) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return {};
  }
  std::ifstream in(path, std::ios::binary);
  MagicMatch m;
  m.head.resize(magic.size());
  in.read(reinterpret_cast<char*>(m.head.data()), static_cast<std::streamsize>(magic.size()));
  if (!in || static_cast<std::size_t>(in.gcount()) != magic.size()) {
    return {};
  }
  for (std::size_t i = 0; i < magic.size(); ++i) {
    m.differ += m.head[i] != static_cast<std::uint8_t>(magic[i]) ? 1 : 0;
  }
  return m;
}

std::vector<std::uint8_t> read_file_prefix(const std::filesystem::path& path,
                                           std::size_t max_bytes) {
  check_regular_file(path);
  std::ifstream in = open_binary(path);
  std::vector<std::uint8_t> data(max_bytes);
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(max_bytes));
  data.resize(static_cast<std::size_t>(in.gcount()));
  return data;
}

std::vector<std::uint8_t> sha256_raw(std::span<const std::uint8_t> data) {
  std::vector<std::uint8_t> digest(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &len, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 computation failed");
  }
  digest.resize(len);
  return digest;
}

std::string sha256_hex(std::span<const std::uint8_t> data) {
  std::string out;
  for (const std::uint8_t b : sha256_raw(data)) {
    out += fmt::format("{:02x}", b);
  }
  return out;
}

}  // namespace passim
