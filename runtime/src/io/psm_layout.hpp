// SPDX-License-Identifier: Apache-2.0
/// \file The layout facts of the project model format (.psm) that its writer (psm_write.cpp)
/// and its reader (psm_read.cpp) share (docs/model-format.md). Private to runtime/src/io.
// Layout (little-endian):
//   "PASSIMQ\0" | u32 version | u64 file_bytes | i32 dim hidden n_layers n_heads n_kv_heads
//   vocab seq_len | u32 flags (bit 0: shared classifier) | u32 n_tensors |
//   n_tensors x { u16 name_len | name | u8 dtype | u8 ndim | u32 dims[ndim] | data } |
//   32-byte SHA-256 of everything before it.
// Version 2: requantisation steps are (n, 3) int32 (mult, shift, bias) instead of (n, 2);
// `meta.arch` (i32: arch, norm, bos_token, bos_ends_text, batchnorm mode) and
// `meta.norm_eps` (f32) describe the block; GPT models add positions, norm biases, the
// BatchNorm steps, GELU steps and the character vocabulary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <type_traits>

#include <fmt/format.h>

namespace passim::psm {

inline constexpr char kMagic[8] = {'P', 'A', 'S', 'S', 'I', 'M', 'Q', '\0'};
/// Magic, version, file_bytes, the 7 config fields, flags and n_tensors.
inline constexpr std::size_t kHeaderBytes = 8 + 4 + 8 + 7 * 4 + 4 + 4;
inline constexpr std::size_t kDigestBytes = 32;

/// Element type of a tensor record, numbered as in the file.
enum class DType : std::uint8_t { kI8 = 1, kI16 = 2, kI32 = 3, kI64 = 4, kF32 = 5, kU8 = 6 };

/// Bytes of one element of `t`; 0 when `t` is not a dtype.
[[nodiscard]] inline std::size_t dtype_bytes(DType t) {
  constexpr std::size_t kBytes[] = {0, 1, 2, 4, 8, 4, 1};  // -, i8, i16, i32, i64, f32, u8
  const auto i = static_cast<std::size_t>(t);
  return i < std::size(kBytes) ? kBytes[i] : 0;
}

/// The dtype that stores elements of type `T` (bytes for `std::uint8_t`).
template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, std::int8_t>) {
    return DType::kI8;
  } else if constexpr (std::is_same_v<T, std::int16_t>) {
    return DType::kI16;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return DType::kI32;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return DType::kI64;
  } else if constexpr (std::is_same_v<T, float>) {
    return DType::kF32;
  } else {
    return DType::kU8;
  }
}

/// The name of a per-layer tensor: "layers.<l>.<what>".
[[nodiscard]] inline std::string layer_name(std::size_t l, const char* what) {
  return fmt::format("layers.{}.{}", l, what);
}

}  // namespace passim::psm
