// SPDX-License-Identifier: Apache-2.0
/// \file How GGUF encodes values: the facts that the reader (gguf_reader.cpp) and the typed
/// accessors of `GgufFile` (gguf.cpp) share. Private to runtime/src/io.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "passim/io/gguf.hpp"

namespace passim::gguf {

inline constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};
/// The highest metadata value type number (`GgufType::kFloat64`).
inline constexpr std::uint32_t kLastType = static_cast<std::uint32_t>(GgufType::kFloat64);

/// Throws std::runtime_error "<source>: <field>: <what>".
[[noreturn]] void fail(const std::string& source, std::string_view field, std::string_view what);

/// The value of type `T` stored at `p`.
template <typename T>
T load_le(const std::uint8_t* p) {
  T v{};
  std::memcpy(&v, p, sizeof v);  // the format is little-endian, like every supported host
  return v;
}

/// Bytes of one element of a numeric or bool metadata type; 0 for strings and arrays.
[[nodiscard]] std::uint64_t scalar_bytes(GgufType t);

/// Elements per block and bytes per block of a tensor type ({0, 0} when unknown).
struct BlockLayout {
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
};
[[nodiscard]] BlockLayout block_layout(GgmlType t);

}  // namespace passim::gguf
