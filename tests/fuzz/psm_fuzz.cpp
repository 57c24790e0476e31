// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the .psm reader (`parse_psm`). The input is the whole file. It is parsed as
// given, then again with its file-size field and SHA-256 footer made to match its contents, so
// that mutations reach the config and the tensor records behind the checksum. A model the
// reader accepts must survive the writer and the reader again.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "passim/io/file.hpp"
#include "passim/io/psm.hpp"

namespace {

constexpr std::size_t kSizeField = 12;  // after the 8-byte magic and the u32 version
constexpr std::size_t kDigestBytes = 32;

/// `bytes` with the file-size field and the footer recomputed (when it is long enough to hold
/// both).
std::vector<std::uint8_t> with_matching_footer(std::vector<std::uint8_t> bytes) {
  if (bytes.size() < kSizeField + 8 + kDigestBytes) {
    return bytes;
  }
  const std::uint64_t total = bytes.size();
  std::memcpy(bytes.data() + kSizeField, &total, sizeof total);
  const std::size_t body = bytes.size() - kDigestBytes;
  const std::vector<std::uint8_t> digest = passim::sha256_raw({bytes.data(), body});
  std::copy(digest.begin(), digest.end(), bytes.begin() + std::ptrdiff_t(body));
  return bytes;
}

void parse(const std::vector<std::uint8_t>& bytes) {
  passim::QuantModel m;
  try {
    m = passim::parse_psm(bytes, "fuzz.psm");
  } catch (const std::runtime_error&) {
    return;  // the documented rejection of a malformed file
  }
  // The writer must write what the reader accepted, and the reader read it back.
  (void)passim::parse_psm(passim::serialize_psm(m), "fuzz.psm rewritten");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> bytes(data, data + size);
  parse(bytes);
  parse(with_matching_footer(bytes));
  return 0;
}
