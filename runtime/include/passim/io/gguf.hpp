// SPDX-License-Identifier: Apache-2.0
/// \file Reader for GGUF files (versions 2 and 3): typed metadata and tensor infos, every
/// length, count and offset checked against the file size before it is used.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace passim {

/// Metadata value types, numbered as in the file.
enum class GgufType : std::uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5,
  kFloat32 = 6, kBool = 7, kString = 8, kArray = 9,
  kUint64 = 10, kInt64 = 11, kFloat64 = 12,  // types 10-12: GGUF version 2 and later
};

/// Name of a metadata value type ("u32", "string", ...; "type 99" when unknown).
[[nodiscard]] std::string gguf_type_name(GgufType t);

/// Tensor element types that this reader can size (ggml numbering). Only `kF32` and `kF16`
/// can be converted to float; the others are recognised so that their byte ranges can be
/// checked and a clear "unsupported" error given.
enum class GgmlType : std::uint32_t {
  kF32 = 0, kF16 = 1,                                                      // floats
  kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ8_1 = 9,        // block quants
  kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kQ8_K = 15,  // k-quants
  kI8 = 24, kI16 = 25, kI32 = 26, kI64 = 27, kF64 = 28, kBF16 = 30,        // and later
};

/// Name of a tensor type ("F32", "Q4_0", ...; "type 99" when unknown).
[[nodiscard]] std::string ggml_type_name(GgmlType t);

/// One metadata value. A scalar is an array of one element. Numbers and bools keep their
/// little-endian file bytes in `raw`; strings are in `strings`. Nested arrays are rejected
/// by the reader, so `elem_type` is never `kArray`.
struct GgufValue {
  GgufType type = GgufType::kUint8;       ///< `kArray` for arrays, else the scalar type
  GgufType elem_type = GgufType::kUint8;  ///< element type (equals `type` for a scalar)
  std::uint64_t count = 1;                ///< number of elements (1 for a scalar)
  std::vector<std::uint8_t> raw;          ///< count * element size bytes (numbers, bools)
  std::vector<std::string> strings;       ///< count strings (string elements only)
};

/// Where one tensor's data lies. `dims[0]` is the fastest-varying (innermost) dimension, as
/// in the file: a row-major (rows, cols) matrix has dims {cols, rows}.
struct GgufTensorInfo {
  std::string name;
  std::vector<std::uint64_t> dims;  ///< 1..4 dimensions, each >= 1
  GgmlType type = GgmlType::kF32;
  std::uint64_t offset = 0;    ///< from the start of the data section, a multiple of alignment
  std::uint64_t elements = 0;  ///< product of `dims`
  std::uint64_t bytes = 0;     ///< size of the data in the file
};

/// A parsed GGUF file held in memory.
class GgufFile {
 public:
  /// Reads and parses a whole file (at most 16 GiB). Throws std::runtime_error naming the
  /// file, the field and expected vs found on anything malformed (see `parse`).
  [[nodiscard]] static GgufFile read(const std::filesystem::path& path);

  /// Parses `bytes`; `source` names the file in messages. Checks, in file order: the magic
  /// "GGUF", version 2 or 3, the tensor and key counts, every key (non-empty, at most 65535
  /// bytes, unique), value type, string length and array count against the bytes left,
  /// bools (0 or 1), `general.alignment` (a power of two), every tensor name (unique),
  /// n_dims (1..4), dims (>= 1, product without overflow), type (a known ggml type, whole
  /// blocks), offset (aligned) and data range (inside the file).
  /// Nothing is allocated from a count before that check passes.
  [[nodiscard]] static GgufFile parse(std::vector<std::uint8_t> bytes, std::string source);

  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] std::uint32_t version() const noexcept { return version_; }
  [[nodiscard]] std::uint64_t alignment() const noexcept { return alignment_; }
  /// Byte offset of the data section in the file.
  [[nodiscard]] std::uint64_t data_offset() const noexcept { return data_offset_; }
  /// The whole file.
  [[nodiscard]] std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }

  // ---- metadata ----
  [[nodiscard]] const std::map<std::string, GgufValue, std::less<>>& metadata() const noexcept {
    return metadata_;
  }
  /// The value of `key`, or nullptr.
  [[nodiscard]] const GgufValue* find(std::string_view key) const;
  /// The value of `key`; throws naming the key when it is missing.
  [[nodiscard]] const GgufValue& at(std::string_view key) const;
  /// A scalar integer (any integer type) that is >= 0. Throws naming the key on a missing
  /// key, another type, or a negative value.
  [[nodiscard]] std::uint64_t get_uint(std::string_view key) const;
  /// A scalar float32 or float64, widened to double.
  [[nodiscard]] double get_float(std::string_view key) const;
  [[nodiscard]] bool get_bool(std::string_view key) const;
  [[nodiscard]] const std::string& get_string(std::string_view key) const;
  /// An array of strings.
  [[nodiscard]] const std::vector<std::string>& get_string_array(std::string_view key) const;
  /// An array of float32.
  [[nodiscard]] std::vector<float> get_f32_array(std::string_view key) const;
  /// An array of any integer type, widened to int64 (u64 values above INT64_MAX throw).
  [[nodiscard]] std::vector<std::int64_t> get_int_array(std::string_view key) const;

  // ---- tensors ----
  /// Tensor infos in file order.
  [[nodiscard]] const std::vector<GgufTensorInfo>& tensors() const noexcept { return tensors_; }
  /// The tensor called `name`, or nullptr.
  [[nodiscard]] const GgufTensorInfo* find_tensor(std::string_view name) const;
  /// The tensor's bytes in the file (range checked when parsing).
  [[nodiscard]] std::span<const std::uint8_t> tensor_data(const GgufTensorInfo& t) const;
  /// The tensor's elements as float32, in file order: F32 copied, F16 widened exactly.
  /// Throws naming the tensor for any other type.
  [[nodiscard]] std::vector<float> tensor_f32(const GgufTensorInfo& t) const;

 private:
  GgufFile() = default;
  friend class GgufParser;

  std::string source_;
  std::vector<std::uint8_t> bytes_;
  std::uint32_t version_ = 0;
  std::uint64_t alignment_ = 32;
  std::uint64_t data_offset_ = 0;
  std::map<std::string, GgufValue, std::less<>> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, std::size_t, std::less<>> tensor_index_;
};

/// True when the file starts with the GGUF magic (format detection by content, not name).
[[nodiscard]] bool is_gguf_file(const std::filesystem::path& path);

/// When the file's first 4 bytes are "GGUF" with one byte changed (a damaged GGUF file), an
/// error text naming the file, the magic and the bytes found; otherwise "".
[[nodiscard]] std::string gguf_magic_near_miss(const std::filesystem::path& path);

/// IEEE half-precision bits to float (exact: every half is a float).
[[nodiscard]] float f16_to_f32(std::uint16_t h) noexcept;

}  // namespace passim
