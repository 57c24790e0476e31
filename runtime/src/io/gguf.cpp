// SPDX-License-Identifier: Apache-2.0
// GGUF value and tensor types, and the typed accessors of a parsed file (the reader that
// fills it is gguf_reader.cpp).
#include "passim/io/gguf.hpp"

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "gguf_encoding.hpp"

namespace passim {

using gguf::fail;
using gguf::kLastType;
using gguf::load_le;
using gguf::scalar_bytes;

namespace {

/// Name and element size of each metadata value type, indexed by its number in the file
/// (size 0 for strings and arrays, whose size is not fixed).
struct GgufTypeInfo {
  const char* name;
  std::uint64_t bytes;
};
constexpr GgufTypeInfo kGgufTypes[] = {
    {"u8", 1},   {"i8", 1},     {"u16", 2},   {"i16", 2}, {"u32", 4}, {"i32", 4}, {"f32", 4},
    {"bool", 1}, {"string", 0}, {"array", 0}, {"u64", 8}, {"i64", 8}, {"f64", 8}};
static_assert(std::size(kGgufTypes) == kLastType + 1);

bool is_signed_integer(GgufType t) {
  return t == GgufType::kInt8 || t == GgufType::kInt16 || t == GgufType::kInt32 ||
         t == GgufType::kInt64;
}
bool is_unsigned_integer(GgufType t) {
  return t == GgufType::kUint8 || t == GgufType::kUint16 || t == GgufType::kUint32 ||
         t == GgufType::kUint64;
}

/// Element `i` of an integer value, zero-extended to 64 bits.
std::uint64_t unsigned_at(const GgufValue& v, std::size_t i) {
  const std::uint64_t n = scalar_bytes(v.elem_type);
  std::uint64_t u = 0;
  std::memcpy(&u, v.raw.data() + i * n, n);  // little-endian file on a little-endian host
  return u;
}

/// Element `i` of a signed integer value, sign-extended from its width to 64 bits.
std::int64_t signed_at(const GgufValue& v, std::size_t i) {
  const std::uint64_t bits = 8 * scalar_bytes(v.elem_type);
  std::uint64_t u = unsigned_at(v, i);
  if (bits < 64 && ((u >> (bits - 1)) & 1u) != 0) {
    u |= ~std::uint64_t{0} << bits;
  }
  return static_cast<std::int64_t>(u);  // two's complement (guaranteed since C++20)
}

/// Name and block layout of each tensor type this reader knows (ggml's numbering).
struct GgmlTypeInfo {
  GgmlType type;
  const char* name;
  gguf::BlockLayout block;
};
constexpr GgmlTypeInfo kGgmlTypes[] = {
    {GgmlType::kF32, "F32", {1, 4}},       {GgmlType::kF16, "F16", {1, 2}},
    {GgmlType::kQ4_0, "Q4_0", {32, 18}},   {GgmlType::kQ4_1, "Q4_1", {32, 20}},
    {GgmlType::kQ5_0, "Q5_0", {32, 22}},   {GgmlType::kQ5_1, "Q5_1", {32, 24}},
    {GgmlType::kQ8_0, "Q8_0", {32, 34}},   {GgmlType::kQ8_1, "Q8_1", {32, 36}},
    {GgmlType::kQ2_K, "Q2_K", {256, 84}},  {GgmlType::kQ3_K, "Q3_K", {256, 110}},
    {GgmlType::kQ4_K, "Q4_K", {256, 144}}, {GgmlType::kQ5_K, "Q5_K", {256, 176}},
    {GgmlType::kQ6_K, "Q6_K", {256, 210}}, {GgmlType::kQ8_K, "Q8_K", {256, 292}},
    {GgmlType::kI8, "I8", {1, 1}},         {GgmlType::kI16, "I16", {1, 2}},
    {GgmlType::kI32, "I32", {1, 4}},       {GgmlType::kI64, "I64", {1, 8}},
    {GgmlType::kF64, "F64", {1, 8}},       {GgmlType::kBF16, "BF16", {1, 2}},
};

/// The entry of `t` in `kGgmlTypes`, or nullptr for a type this reader does not know.
const GgmlTypeInfo* ggml_type_info(GgmlType t) {
  for (const GgmlTypeInfo& info : kGgmlTypes) {
    if (info.type == t) {
      return &info;
    }
  }
  return nullptr;
}

}  // namespace

void gguf::fail(const std::string& source, std::string_view field, std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}: {}", source, field, what));
}

std::uint64_t gguf::scalar_bytes(GgufType t) {
  const auto i = static_cast<std::uint32_t>(t);
  return i <= kLastType ? kGgufTypes[i].bytes : 0;
}

gguf::BlockLayout gguf::block_layout(GgmlType t) {
  const GgmlTypeInfo* info = ggml_type_info(t);
  return info != nullptr ? info->block : BlockLayout{};
}

std::string gguf_type_name(GgufType t) {
  const auto i = static_cast<std::uint32_t>(t);
  return i <= kLastType ? kGgufTypes[i].name : fmt::format("type {}", i);
}

std::string ggml_type_name(GgmlType t) {
  const GgmlTypeInfo* info = ggml_type_info(t);
  return info != nullptr ? info->name : fmt::format("type {}", static_cast<std::uint32_t>(t));
}

float f16_to_f32(std::uint16_t h) noexcept {
  const bool negative = (h & 0x8000u) != 0;
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  float magnitude = 0.0f;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal
  } else if (exponent == 0x1F) {
    magnitude = mantissa == 0 ? std::numeric_limits<float>::infinity()
                              : std::numeric_limits<float>::quiet_NaN();
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return negative ? -magnitude : magnitude;
}

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

const GgufValue& GgufFile::at(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) {
    fail(source_, fmt::format("metadata '{}'", key), "expected this key, found it missing");
  }
  return *v;
}

namespace {
/// Throws unless `v` is a scalar (`want_array` false) or an array (true) of the element
/// type accepted by `ok`; `expected` describes that type.
template <typename Ok>
void check_type(const GgufFile& f, std::string_view key, const GgufValue& v, bool want_array, Ok ok,
                std::string_view expected) {
  const bool is_array = v.type == GgufType::kArray;
  if (is_array != want_array || !ok(v.elem_type)) {
    const std::string found = is_array ? fmt::format("an array of {}", gguf_type_name(v.elem_type))
                                       : gguf_type_name(v.type);
    fail(f.source(), fmt::format("metadata '{}'", key),
         fmt::format("expected {}, found {}", expected, found));
  }
}
}  // namespace

std::uint64_t GgufFile::get_uint(std::string_view key) const {
  const GgufValue& v = at(key);
  check_type(
      *this, key, v, false,
      [](GgufType t) { return is_signed_integer(t) || is_unsigned_integer(t); }, "an integer");
  if (is_unsigned_integer(v.elem_type)) {
    return unsigned_at(v, 0);
  }
  const std::int64_t s = signed_at(v, 0);
  if (s < 0) {
    fail(source_, fmt::format("metadata '{}'", key),
         fmt::format("expected a value >= 0, found {}", s));
  }
  return std::uint64_t(s);
}

double GgufFile::get_float(std::string_view key) const {
  const GgufValue& v = at(key);
  check_type(
      *this, key, v, false,
      [](GgufType t) { return t == GgufType::kFloat32 || t == GgufType::kFloat64; }, "a float");
  return v.elem_type == GgufType::kFloat32 ? double(load_le<float>(v.raw.data()))
                                           : load_le<double>(v.raw.data());
}

bool GgufFile::get_bool(std::string_view key) const {
  const GgufValue& v = at(key);
  check_type(
      *this, key, v, false, [](GgufType t) { return t == GgufType::kBool; }, "a bool");
  return v.raw[0] != 0;
}

const std::string& GgufFile::get_string(std::string_view key) const {
  const GgufValue& v = at(key);
  check_type(
      *this, key, v, false, [](GgufType t) { return t == GgufType::kString; }, "a string");
  return v.strings[0];
}

const std::vector<std::string>& GgufFile::get_string_array(std::string_view key) const {
  const GgufValue& v = at(key);
  check_type(
      *this, key, v, true, [](GgufType t) { return t == GgufType::kString; }, "an array of string");
  return v.strings;
}

std::vector<float> GgufFile::get_f32_array(std::string_view key) const {
  const GgufValue& v = at(key);
  check_type(
      *this, key, v, true, [](GgufType t) { return t == GgufType::kFloat32; }, "an array of f32");
  std::vector<float> out(std::size_t(v.count));
  std::memcpy(out.data(), v.raw.data(), v.raw.size());
  return out;
}

std::vector<std::int64_t> GgufFile::get_int_array(std::string_view key) const {
  const GgufValue& v = at(key);
  check_type(
      *this, key, v, true,
      [](GgufType t) { return is_signed_integer(t) || is_unsigned_integer(t); },
      "an array of integers");
  std::vector<std::int64_t> out(std::size_t(v.count));
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (is_signed_integer(v.elem_type)) {
      out[i] = signed_at(v, i);
      continue;
    }
    const std::uint64_t u = unsigned_at(v, i);
    if (u > std::uint64_t(std::numeric_limits<std::int64_t>::max())) {
      fail(source_, fmt::format("metadata '{}' element {}", key, i),
           fmt::format("expected a value below 2^63, found {}", u));
    }
    out[i] = std::int64_t(u);
  }
  return out;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const std::uint8_t> GgufFile::tensor_data(const GgufTensorInfo& t) const {
  return std::span<const std::uint8_t>(bytes_).subspan(std::size_t(data_offset_ + t.offset),
                                                       std::size_t(t.bytes));
}

std::vector<float> GgufFile::tensor_f32(const GgufTensorInfo& t) const {
  if (t.type != GgmlType::kF32 && t.type != GgmlType::kF16) {
    fail(source_, fmt::format("tensor '{}' type", t.name),
         fmt::format("expected F32 or F16, found {} ({})", ggml_type_name(t.type),
                     static_cast<std::uint32_t>(t.type)));
  }
  const auto data = tensor_data(t);  // t.bytes long, checked against the file when parsing
  std::vector<float> out(std::size_t(t.elements));
  if (t.type == GgmlType::kF32) {
    std::memcpy(out.data(), data.data(), data.size());
  } else {
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = f16_to_f32(load_le<std::uint16_t>(data.data() + 2 * i));
    }
  }
  return out;
}

}  // namespace passim
