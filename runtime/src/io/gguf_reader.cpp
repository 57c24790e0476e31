// SPDX-License-Identifier: Apache-2.0
// GGUF reader: header, typed metadata, tensor infos and the aligned data section.
#include "passim/io/gguf.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "gguf_encoding.hpp"
#include "passim/io/file.hpp"

namespace passim {

using gguf::block_layout;
using gguf::BlockLayout;
using gguf::fail;
using gguf::kLastType;
using gguf::kMagic;
using gguf::load_le;
using gguf::scalar_bytes;

namespace {

constexpr std::uint64_t kMaxGgufBytes = std::uint64_t{1} << 34;  // 16 GiB, like .bin files
constexpr std::uint64_t kMaxNameBytes = 65535;  // keys and tensor names
constexpr std::uint32_t kMaxDims = 4;
constexpr std::uint64_t kDefaultAlignment = 32;
constexpr std::uint64_t kMaxAlignment = std::uint64_t{1} << 30;
// The smallest possible encodings, used to bound the counts in the header before looping:
// a key/value is a key length (8), one key byte, a type (4) and a one-byte value; a tensor
// info is a name length (8), one name byte, n_dims (4), one dim (8), a type (4), an offset (8).
constexpr std::uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;
constexpr std::uint64_t kMaxReserve = std::uint64_t{1} << 16;  // elements reserved up front

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
    check_count("header tensor_count", tensor_count, kMinTensorInfoBytes);
    check_count("header metadata_kv_count", kv_count, kMinKvBytes);
    return {tensor_count, kv_count};
  }

  /// Throws unless `count` entries of at least `min_bytes` each fit in the bytes left.
  void check_count(std::string_view field, std::uint64_t count, std::uint64_t min_bytes) const {
    if (count > cur_.remaining() / min_bytes) {
      fail_at(field,
              fmt::format(
                  "expected at most {} for a {}-byte file (truncated or count corrupt), found {}",
                  cur_.remaining() / min_bytes, f_.bytes_.size(), count));
    }
  }

  /// A key or tensor name (`what`): non-empty, at most `kMaxNameBytes`, not in `seen` yet.
  template <typename Index>
  std::string read_unique_name(const std::string& field, std::string_view what, const Index& seen) {
    std::string name = cur_.read_string(field, kMaxNameBytes);
    if (name.empty()) {
      fail_at(field, fmt::format("expected a non-empty {}, found \"\"", what));
    }
    if (seen.count(name) != 0) {
      fail_at(field, fmt::format("expected a unique {}, found \"{}\" twice", what, name));
    }
    return name;
  }

  GgufType read_type(const std::string& field) {
    const auto t = cur_.read<std::uint32_t>(field);
    if (t > kLastType) {
      fail_at(field, fmt::format("expected a metadata type 0..{}, found {}", kLastType, t));
    }
    return static_cast<GgufType>(t);
  }

  void key_value(std::uint64_t index) {
    const std::string key =
        read_unique_name(fmt::format("metadata[{}] key", index), "key", f_.metadata_);
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
    t.name = read_unique_name(fmt::format("tensor_info[{}] name", index), "name", f_.tensor_index_);
    const std::string field = fmt::format("tensor '{}'", t.name);
    dims(t, field);
    type_and_size(t, field);
    t.offset = cur_.read<std::uint64_t>(field + " offset");
    if (t.offset % f_.alignment_ != 0) {
      fail_at(field + " offset", fmt::format("expected a multiple of the alignment {}, found {}",
                                             f_.alignment_, t.offset));
    }
    f_.tensor_index_.emplace(t.name, f_.tensors_.size());
    f_.tensors_.push_back(std::move(t));
  }

  /// n_dims (1..4) and the dims (each >= 1, their product below 2^63): sets `t.dims` and
  /// `t.elements`.
  void dims(GgufTensorInfo& t, const std::string& field) {
    const auto n_dims = cur_.read<std::uint32_t>(field + " n_dims");
    if (n_dims < 1 || n_dims > kMaxDims) {
      fail_at(field + " n_dims", fmt::format("expected 1..{}, found {}", kMaxDims, n_dims));
    }
    constexpr auto kMaxElements = std::uint64_t(std::numeric_limits<std::int64_t>::max());
    t.elements = 1;
    for (std::uint32_t j = 0; j < n_dims; ++j) {
      const std::string dim_field = fmt::format("{} dims[{}]", field, j);
      const auto d = cur_.read<std::uint64_t>(dim_field);
      if (d < 1 || d > kMaxElements / t.elements) {
        fail_at(dim_field, fmt::format("expected 1..{} (element count below 2^63), found {}",
                                       kMaxElements / t.elements, d));
      }
      t.dims.push_back(d);
      t.elements *= d;
    }
  }

  /// The tensor type (a known ggml type whose blocks tile dims[0]): sets `t.type` and
  /// `t.bytes` (checked against the file in `data_section`).
  void type_and_size(GgufTensorInfo& t, const std::string& field) {
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
    t.bytes = blocks * block.bytes;
  }

  /// The data section starts at the first aligned offset after the tensor infos; every
  /// tensor's data lies inside it, no two overlap, and only padding follows the last.
  void data_section() {
    const std::uint64_t size = f_.bytes_.size();
    const std::uint64_t infos_end = cur_.offset();
    f_.data_offset_ = align_up(infos_end);
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
    check_no_trailing_data(check_no_overlap(), data_bytes);
  }

  /// `offset` rounded up to the alignment (offset <= 16 GiB, alignment <= 2^30: no overflow).
  std::uint64_t align_up(std::uint64_t offset) const {
    return (offset + f_.alignment_ - 1) / f_.alignment_ * f_.alignment_;
  }

  /// Throws when two tensors' data ranges overlap; returns the tensor whose data is last.
  const GgufTensorInfo& check_no_overlap() const {
    std::vector<const GgufTensorInfo*> by_offset;
    by_offset.reserve(f_.tensors_.size());
    for (const GgufTensorInfo& t : f_.tensors_) {
      by_offset.push_back(&t);
    }
    std::sort(
        by_offset.begin(), by_offset.end(),
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
    return *by_offset.back();
  }

  /// Nothing may follow the `last` tensor's data but the padding to the alignment (a file
  /// with trailing bytes is a concatenation or a corruption, as for .bin and .psm).
  void check_no_trailing_data(const GgufTensorInfo& last, std::uint64_t data_bytes) const {
    const std::uint64_t end = last.offset + last.bytes;
    const std::uint64_t padded = align_up(end);
    if (data_bytes > padded) {
      fail_at("file size",
              fmt::format("expected at most {} bytes (the data of tensor '{}' ends at file offset "
                          "{}, padded to the alignment {}), found {} (trailing data)",
                          f_.data_offset_ + padded, last.name, f_.data_offset_ + end, f_.alignment_,
                          f_.bytes_.size()));
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
