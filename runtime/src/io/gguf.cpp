// SPDX-License-Identifier: Apache-2.0
// GGUF reader: header, typed metadata, tensor infos and the aligned data section.
#include "passim/io/gguf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "passim/io/file.hpp"

namespace passim {

namespace {

constexpr std::uint64_t kMaxGgufBytes = std::uint64_t{1} << 34;  // 16 GiB, like .bin files
constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};
constexpr std::uint64_t kMaxNameBytes = 65535;  // keys and tensor names
constexpr std::uint32_t kMaxDims = 4;
constexpr std::uint64_t kDefaultAlignment = 32;
constexpr std::uint64_t kMaxAlignment = std::uint64_t{1} << 30;
// The smallest possible encodings, used to bound the counts in the header before looping:
// a key/value is a key length (8), one key byte, a type (4) and a one-byte value; a tensor
// info is a name length (8), one name byte, n_dims (4), one dim (8), a type (4), an offset (8).
constexpr std::uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;
constexpr std::uint32_t kLastType = static_cast<std::uint32_t>(GgufType::kFloat64);
constexpr std::uint64_t kMaxReserve = std::uint64_t{1} << 16;  // elements reserved up front

[[noreturn]] void fail(const std::string& source, std::string_view field, std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}: {}", source, field, what));
}

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

/// Bytes of one element of a numeric or bool metadata type; 0 for strings and arrays.
std::uint64_t scalar_bytes(GgufType t) {
  const auto i = static_cast<std::uint32_t>(t);
  return i <= kLastType ? kGgufTypes[i].bytes : 0;
}

bool is_signed_integer(GgufType t) {
  return t == GgufType::kInt8 || t == GgufType::kInt16 || t == GgufType::kInt32 ||
         t == GgufType::kInt64;
}
bool is_unsigned_integer(GgufType t) {
  return t == GgufType::kUint8 || t == GgufType::kUint16 || t == GgufType::kUint32 ||
         t == GgufType::kUint64;
}

template <typename T>
T load_le(const std::uint8_t* p) {
  T v{};
  std::memcpy(&v, p, sizeof v);  // the format is little-endian, like every supported host
  return v;
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

/// Elements per block and bytes per block of a tensor type ({0, 0} when unknown).
struct BlockLayout {
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
};

/// Name and block layout of each tensor type this reader knows (ggml's numbering).
struct GgmlTypeInfo {
  GgmlType type;
  const char* name;
  BlockLayout block;
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

BlockLayout block_layout(GgmlType t) {
  const GgmlTypeInfo* info = ggml_type_info(t);
  return info != nullptr ? info->block : BlockLayout{};
}

/// A read position in the file. Every read checks the bytes left first.
class Cursor {
 public:
  Cursor(std::span<const std::uint8_t> data, const std::string& source)
      : data_(data), source_(source) {}

  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }
  [[nodiscard]] std::uint64_t remaining() const noexcept { return data_.size() - offset_; }

  void need(std::uint64_t n, std::string_view field) const {
    if (remaining() < n) {
      fail(source_, field,
           fmt::format("expected {} bytes at offset {}, found {} (file truncated)", n, offset_,
                       remaining()));
    }
  }

  template <typename T>
  T read(std::string_view field) {
    need(sizeof(T), field);
    const T v = load_le<T>(data_.data() + offset_);
    offset_ += sizeof(T);
    return v;
  }

  std::span<const std::uint8_t> take(std::uint64_t n, std::string_view field) {
    need(n, field);
    const auto out = data_.subspan(std::size_t(offset_), std::size_t(n));
    offset_ += n;
    return out;
  }

  /// A length-prefixed string of at most `max_len` bytes (and never more than the bytes left).
  std::string read_string(std::string_view field, std::uint64_t max_len) {
    const auto len = read<std::uint64_t>(fmt::format("{} length", field));
    if (len > remaining()) {
      fail(source_, fmt::format("{} length", field),
           fmt::format("expected at most {} (the bytes left at offset {}), found {} (file "
                       "truncated or length corrupt)",
                       remaining(), offset_, len));
    }
    if (len > max_len) {
      fail(source_, fmt::format("{} length", field),
           fmt::format("expected at most {}, found {}", max_len, len));
    }
    const auto bytes = take(len, field);
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }

 private:
  std::span<const std::uint8_t> data_;
  const std::string& source_;
  std::uint64_t offset_ = 0;
};

}  // namespace

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

/// Reads the file in order: header, metadata, tensor infos, then checks the data ranges.
class GgufParser {
 public:
  explicit GgufParser(GgufFile& f) : f_(f), cur_(f.bytes_, f.source_) {}

  void run() {
    const auto [tensor_count, kv_count] = header();
    for (std::uint64_t i = 0; i < kv_count; ++i) {
      key_value(i);
    }
    alignment();
    for (std::uint64_t i = 0; i < tensor_count; ++i) {
      tensor_info(i);
    }
    data_section();
  }

 private:
  [[noreturn]] void fail_at(std::string_view field, std::string_view what) const {
    fail(f_.source_, field, what);
  }

  std::pair<std::uint64_t, std::uint64_t> header() {
    const std::uint64_t size = f_.bytes_.size();
    if (size < sizeof kMagic) {
      fail_at("header magic",
              fmt::format("expected the 4 bytes \"GGUF\", found a {}-byte file", size));
    }
    const auto magic = cur_.take(sizeof kMagic, "header magic");
    if (std::memcmp(magic.data(), kMagic, sizeof kMagic) != 0) {
      fail_at("header magic",
              fmt::format("expected \"GGUF\" (47 47 55 46), found {:02X} {:02X} {:02X} {:02X}",
                          magic[0], magic[1], magic[2], magic[3]));
    }
    f_.version_ = cur_.read<std::uint32_t>("header version");
    if (f_.version_ != 2 && f_.version_ != 3) {
      const std::uint32_t swapped = ((f_.version_ & 0xFFu) << 24) | ((f_.version_ & 0xFF00u) << 8) |
                                    ((f_.version_ >> 8) & 0xFF00u) | (f_.version_ >> 24);
      fail_at("header version",
              fmt::format("expected 2 or 3, found {}{}", f_.version_,
                          swapped == 2 || swapped == 3 ? " (a big-endian file?)" : ""));
    }
    const auto tensor_count = cur_.read<std::uint64_t>("header tensor_count");
    const auto kv_count = cur_.read<std::uint64_t>("header metadata_kv_count");
    if (tensor_count > cur_.remaining() / kMinTensorInfoBytes) {
      fail_at("header tensor_count",
              fmt::format(
                  "expected at most {} for a {}-byte file (truncated or count corrupt), found {}",
                  cur_.remaining() / kMinTensorInfoBytes, size, tensor_count));
    }
    if (kv_count > cur_.remaining() / kMinKvBytes) {
      fail_at("header metadata_kv_count",
              fmt::format(
                  "expected at most {} for a {}-byte file (truncated or count corrupt), found {}",
                  cur_.remaining() / kMinKvBytes, size, kv_count));
    }
    return {tensor_count, kv_count};
  }

  GgufType read_type(const std::string& field) {
    const auto t = cur_.read<std::uint32_t>(field);
    if (t > kLastType) {
      fail_at(field, fmt::format("expected a metadata type 0..{}, found {}", kLastType, t));
    }
    return static_cast<GgufType>(t);
  }

  void key_value(std::uint64_t index) {
    const std::string key = cur_.read_string(fmt::format("metadata[{}] key", index), kMaxNameBytes);
    if (key.empty()) {
      fail_at(fmt::format("metadata[{}] key", index), "expected a non-empty key, found \"\"");
    }
    if (f_.metadata_.count(key) != 0) {
      fail_at(fmt::format("metadata[{}] key", index),
              fmt::format("expected a unique key, found \"{}\" twice", key));
    }
    const std::string field = fmt::format("metadata '{}'", key);
    GgufValue v;
    v.type = read_type(field + " value type");
    v.elem_type = v.type;
    if (v.type == GgufType::kArray) {
      v.elem_type = read_type(field + " array element type");
      if (v.elem_type == GgufType::kArray) {
        fail_at(field + " array element type",
                "expected a scalar or string type, found array (nested arrays are not supported)");
      }
      v.count = cur_.read<std::uint64_t>(field + " array count");
      const std::uint64_t min_bytes =
          v.elem_type == GgufType::kString ? 8 : scalar_bytes(v.elem_type);
      if (v.count > cur_.remaining() / min_bytes) {
        fail_at(field + " array count",
                fmt::format("expected at most {} {} elements (the bytes left at offset {}: "
                            "file truncated or count corrupt), found {}",
                            cur_.remaining() / min_bytes, gguf_type_name(v.elem_type),
                            cur_.offset(), v.count));
      }
    }
    elements(v, field);
    f_.metadata_.emplace(key, std::move(v));
  }

  /// Reads `v.count` elements of `v.elem_type` (the count is already bounded by the file).
  void elements(GgufValue& v, const std::string& field) {
    if (v.elem_type == GgufType::kString) {
      v.strings.reserve(std::size_t(std::min<std::uint64_t>(v.count, kMaxReserve)));
      for (std::uint64_t j = 0; j < v.count; ++j) {
        const std::string name =
            v.type == GgufType::kArray ? fmt::format("{} element {}", field, j) : field;
        v.strings.push_back(cur_.read_string(name, std::numeric_limits<std::uint64_t>::max()));
      }
      return;
    }
    const auto bytes = cur_.take(v.count * scalar_bytes(v.elem_type), field);
    v.raw.assign(bytes.begin(), bytes.end());
    if (v.elem_type == GgufType::kBool) {
      for (std::size_t j = 0; j < v.raw.size(); ++j) {
        if (v.raw[j] > 1) {
          fail_at(v.type == GgufType::kArray ? fmt::format("{} element {}", field, j) : field,
                  fmt::format("expected a bool (0 or 1), found {}", v.raw[j]));
        }
      }
    }
  }

  void alignment() {
    if (f_.find("general.alignment") == nullptr) {
      f_.alignment_ = kDefaultAlignment;
      return;
    }
    const std::uint64_t a = f_.get_uint("general.alignment");
    if (a == 0 || a > kMaxAlignment || (a & (a - 1)) != 0) {
      fail_at("metadata 'general.alignment'",
              fmt::format("expected a power of two up to {}, found {}", kMaxAlignment, a));
    }
    f_.alignment_ = a;
  }

  void tensor_info(std::uint64_t index) {
    GgufTensorInfo t;
    t.name = cur_.read_string(fmt::format("tensor_info[{}] name", index), kMaxNameBytes);
    if (t.name.empty()) {
      fail_at(fmt::format("tensor_info[{}] name", index), "expected a non-empty name, found \"\"");
    }
    if (f_.tensor_index_.count(t.name) != 0) {
      fail_at(fmt::format("tensor_info[{}] name", index),
              fmt::format("expected a unique name, found \"{}\" twice", t.name));
    }
    const std::string field = fmt::format("tensor '{}'", t.name);
    const auto n_dims = cur_.read<std::uint32_t>(field + " n_dims");
    if (n_dims < 1 || n_dims > kMaxDims) {
      fail_at(field + " n_dims", fmt::format("expected 1..{}, found {}", kMaxDims, n_dims));
    }
    t.elements = 1;
    for (std::uint32_t j = 0; j < n_dims; ++j) {
      const std::string dim_field = fmt::format("{} dims[{}]", field, j);
      const auto d = cur_.read<std::uint64_t>(dim_field);
      if (d < 1 || d > std::uint64_t(std::numeric_limits<std::int64_t>::max()) / t.elements) {
        fail_at(
            dim_field,
            fmt::format("expected 1..{} (element count below 2^63), found {}",
                        std::uint64_t(std::numeric_limits<std::int64_t>::max()) / t.elements, d));
      }
      t.dims.push_back(d);
      t.elements *= d;
    }
    const auto type = cur_.read<std::uint32_t>(field + " type");
    t.type = static_cast<GgmlType>(type);
    const BlockLayout block = block_layout(t.type);
    if (block.elements == 0) {
      fail_at(field + " type", fmt::format("expected a known ggml tensor type, found {}", type));
    }
    if (t.dims[0] % block.elements != 0) {
      fail_at(field + " dims[0]",
              fmt::format("expected a multiple of the {} block size {}, found {}",
                          ggml_type_name(t.type), block.elements, t.dims[0]));
    }
    const std::uint64_t blocks = t.elements / block.elements;
    if (blocks > std::numeric_limits<std::uint64_t>::max() / block.bytes) {
      fail_at(field + " dims",
              fmt::format("expected a byte size below 2^64, found {} elements of {}", t.elements,
                          ggml_type_name(t.type)));
    }
    t.bytes = blocks * block.bytes;  // checked against the file in data_section()
    t.offset = cur_.read<std::uint64_t>(field + " offset");
    if (t.offset % f_.alignment_ != 0) {
      fail_at(field + " offset", fmt::format("expected a multiple of the alignment {}, found {}",
                                             f_.alignment_, t.offset));
    }
    f_.tensor_index_.emplace(t.name, f_.tensors_.size());
    f_.tensors_.push_back(std::move(t));
  }

  void data_section() {
    const std::uint64_t size = f_.bytes_.size();
    const std::uint64_t infos_end = cur_.offset();
    // infos_end <= size <= 16 GiB and alignment <= 2^30: no overflow.
    f_.data_offset_ = (infos_end + f_.alignment_ - 1) / f_.alignment_ * f_.alignment_;
    if (f_.tensors_.empty()) {
      return;
    }
    if (f_.data_offset_ > size) {
      fail_at("data section",
              fmt::format("expected to start at offset {} (tensor infos end at {}, alignment "
                          "{}), found a {}-byte file (truncated)",
                          f_.data_offset_, infos_end, f_.alignment_, size));
    }
    const std::uint64_t data_bytes = size - f_.data_offset_;
    for (const GgufTensorInfo& t : f_.tensors_) {
      if (t.offset > data_bytes || t.bytes > data_bytes - t.offset) {
        fail_at(fmt::format("tensor '{}' data", t.name),
                fmt::format("expected {} bytes at data offset {} (file offset {} + {}), found a "
                            "{}-byte data section (file truncated or offset past the end)",
                            t.bytes, t.offset, f_.data_offset_, t.offset, data_bytes));
      }
    }
    // Tensor data ranges may not overlap.
    std::vector<const GgufTensorInfo*> by_offset;
    by_offset.reserve(f_.tensors_.size());
    for (const GgufTensorInfo& t : f_.tensors_) {
      by_offset.push_back(&t);
    }
    std::sort(by_offset.begin(), by_offset.end(),
              [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
    for (std::size_t i = 1; i < by_offset.size(); ++i) {
      const GgufTensorInfo& prev = *by_offset[i - 1];
      const GgufTensorInfo& t = *by_offset[i];
      if (t.offset < prev.offset + prev.bytes) {
        fail_at(fmt::format("tensor '{}' offset", t.name),
                fmt::format("expected at least {} (the end of tensor '{}'), found {} "
                            "(overlapping tensor data)",
                            prev.offset + prev.bytes, prev.name, t.offset));
      }
    }
    // Nothing may follow the last tensor but the padding to the alignment (a file with
    // trailing bytes is a concatenation or a corruption, as for .bin and .psm).
    const GgufTensorInfo& last = *by_offset.back();
    const std::uint64_t end = last.offset + last.bytes;
    const std::uint64_t padded = (end + f_.alignment_ - 1) / f_.alignment_ * f_.alignment_;
    if (data_bytes > padded) {
      fail_at("file size",
              fmt::format("expected at most {} bytes (the data of tensor '{}' ends at file offset "
                          "{}, padded to the alignment {}), found {} (trailing data)",
                          f_.data_offset_ + padded, last.name, f_.data_offset_ + end,
                          f_.alignment_, size));
    }
  }

  GgufFile& f_;
  Cursor cur_;
};

GgufFile GgufFile::parse(std::vector<std::uint8_t> bytes, std::string source) {
  GgufFile f;
  f.bytes_ = std::move(bytes);
  f.source_ = std::move(source);
  GgufParser(f).run();
  return f;
}

GgufFile GgufFile::read(const std::filesystem::path& path) {
  return parse(read_file(path, kMaxGgufBytes), path.string());
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

std::string gguf_magic_near_miss(const std::filesystem::path& path) {
  const MagicMatch m = compare_magic(path, kMagic);
  if (m.differ != 1) {
    return {};
  }
  return fmt::format("{}: header magic: expected \"GGUF\", found {:02x}: a damaged GGUF file",
                     path.string(), fmt::join(m.head, " "));
}

bool is_gguf_file(const std::filesystem::path& path) {
  const MagicMatch m = compare_magic(path, kMagic);  // never opens a fifo or a device
  return !m.head.empty() && m.differ == 0;
}

}  // namespace passim
