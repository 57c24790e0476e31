// SPDX-License-Identifier: Apache-2.0
/// \file A small GGUF writer for tests: builds valid files in memory and remembers where each
/// field was written, so that a test can corrupt exactly one field.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "passim/io/gguf.hpp"

namespace passim::test {

/// A built file and the byte offset of each field. Offset names:
///   "magic", "version", "tensor_count", "kv_count";
///   "key:K" (length of key K), "type:K" (value type), "value:K" (the value; for an array its
///   element type), "count:K" (array count), "elem:K:i" (length of string element i);
///   "name:T" (length of tensor name T), "n_dims:T", "dims:T", "ttype:T", "offset:T";
///   "infos" (first tensor info), "infos_end", "data" (data section), "data:T".
struct GgufImage {
  std::vector<std::uint8_t> bytes;
  std::map<std::string, std::size_t> offsets;

  [[nodiscard]] std::size_t at(const std::string& field) const {
    const auto it = offsets.find(field);
    if (it == offsets.end()) {
      throw std::out_of_range("no field " + field + " in the test GGUF image");
    }
    return it->second;
  }
};

class GgufWriter {
 public:
  GgufWriter& u32(const std::string& key, std::uint32_t v) {
    return scalar(key, GgufType::kUint32, v);
  }
  GgufWriter& i32(const std::string& key, std::int32_t v) {
    return scalar(key, GgufType::kInt32, v);
  }
  GgufWriter& u64(const std::string& key, std::uint64_t v) {
    return scalar(key, GgufType::kUint64, v);
  }
  GgufWriter& f32(const std::string& key, float v) { return scalar(key, GgufType::kFloat32, v); }
  GgufWriter& f64(const std::string& key, double v) { return scalar(key, GgufType::kFloat64, v); }
  GgufWriter& boolean(const std::string& key, std::uint8_t v) {
    return scalar(key, GgufType::kBool, v);
  }
  GgufWriter& str(const std::string& key, const std::string& v) {
    Kv kv{key, GgufType::kString, {}, {}};
    put_string(kv.payload, v);
    kvs_.push_back(std::move(kv));
    return *this;
  }
  GgufWriter& strings(const std::string& key, const std::vector<std::string>& v) {
    Kv kv{key, GgufType::kArray, {}, {}};
    put(kv.payload, static_cast<std::uint32_t>(GgufType::kString));
    put(kv.payload, std::uint64_t(v.size()));
    for (const std::string& s : v) {
      kv.elements.push_back(kv.payload.size());
      put_string(kv.payload, s);
    }
    kvs_.push_back(std::move(kv));
    return *this;
  }
  template <typename T>
  GgufWriter& array(const std::string& key, GgufType elem_type, const std::vector<T>& v) {
    Kv kv{key, GgufType::kArray, {}, {}};
    put(kv.payload, static_cast<std::uint32_t>(elem_type));
    put(kv.payload, std::uint64_t(v.size()));
    for (const T& x : v) {
      put(kv.payload, x);
    }
    kvs_.push_back(std::move(kv));
    return *this;
  }
  /// A value with any type field and payload bytes (for malformed values).
  GgufWriter& raw_kv(const std::string& key, std::uint32_t type,
                     std::vector<std::uint8_t> payload) {
    kvs_.push_back(Kv{key, static_cast<GgufType>(type), std::move(payload), {}});
    return *this;
  }

  /// A tensor with `dims` innermost first, any type, and its data bytes.
  GgufWriter& tensor(const std::string& name, std::vector<std::uint64_t> dims, std::uint32_t type,
                     std::vector<std::uint8_t> data) {
    tensors_.push_back(Tensor{name, std::move(dims), type, std::move(data)});
    return *this;
  }
  GgufWriter& tensor_f32(const std::string& name, std::vector<std::uint64_t> dims,
                         const std::vector<float>& values) {
    std::vector<std::uint8_t> data(values.size() * sizeof(float));
    std::memcpy(data.data(), values.data(), data.size());
    return tensor(name, std::move(dims), static_cast<std::uint32_t>(GgmlType::kF32),
                  std::move(data));
  }

  /// Drops the key or tensor called `name` (to test missing ones).
  GgufWriter& remove(const std::string& name) {
    std::erase_if(kvs_, [&](const Kv& kv) { return kv.key == name; });
    std::erase_if(tensors_, [&](const Tensor& t) { return t.name == name; });
    return *this;
  }

  /// The file: header, key/values, tensor infos, zero padding to `alignment`, then each
  /// tensor's data at the next multiple of `alignment`.
  [[nodiscard]] GgufImage build(std::uint32_t version = 3, std::uint64_t alignment = 32) const {
    GgufImage img;
    auto& b = img.bytes;
    img.offsets["magic"] = b.size();
    b.insert(b.end(), {'G', 'G', 'U', 'F'});
    img.offsets["version"] = b.size();
    put(b, version);
    img.offsets["tensor_count"] = b.size();
    put(b, std::uint64_t(tensors_.size()));
    img.offsets["kv_count"] = b.size();
    put(b, std::uint64_t(kvs_.size()));
    for (const Kv& kv : kvs_) {
      img.offsets["key:" + kv.key] = b.size();
      put_string(b, kv.key);
      img.offsets["type:" + kv.key] = b.size();
      put(b, static_cast<std::uint32_t>(kv.type));
      const std::size_t value_at = b.size();
      img.offsets["value:" + kv.key] = value_at;
      if (kv.type == GgufType::kArray) {
        img.offsets["count:" + kv.key] = value_at + 4;
      }
      for (std::size_t i = 0; i < kv.elements.size(); ++i) {
        img.offsets["elem:" + kv.key + ":" + std::to_string(i)] = value_at + kv.elements[i];
      }
      b.insert(b.end(), kv.payload.begin(), kv.payload.end());
    }
    img.offsets["infos"] = b.size();
    std::vector<std::uint64_t> data_offsets;
    std::uint64_t data_end = 0;
    for (const Tensor& t : tensors_) {
      img.offsets["name:" + t.name] = b.size();
      put_string(b, t.name);
      img.offsets["n_dims:" + t.name] = b.size();
      put(b, static_cast<std::uint32_t>(t.dims.size()));
      img.offsets["dims:" + t.name] = b.size();
      for (const std::uint64_t d : t.dims) {
        put(b, d);
      }
      img.offsets["ttype:" + t.name] = b.size();
      put(b, t.type);
      img.offsets["offset:" + t.name] = b.size();
      put(b, data_end);
      data_offsets.push_back(data_end);
      data_end = round_up(data_end + t.data.size(), alignment);
    }
    img.offsets["infos_end"] = b.size();
    b.resize(round_up(b.size(), alignment), 0);
    const std::size_t data_at = b.size();
    img.offsets["data"] = data_at;
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
      const Tensor& t = tensors_[i];
      b.resize(data_at + data_offsets[i], 0);
      img.offsets["data:" + t.name] = b.size();
      b.insert(b.end(), t.data.begin(), t.data.end());
    }
    return img;
  }

 private:
  struct Kv {
    std::string key;
    GgufType type;
    std::vector<std::uint8_t> payload;  ///< the value as written after the type field
    std::vector<std::size_t> elements;  ///< offsets of string elements in `payload`
  };
  struct Tensor {
    std::string name;
    std::vector<std::uint64_t> dims;
    std::uint32_t type;
    std::vector<std::uint8_t> data;
  };

  template <typename T>
  static void put(std::vector<std::uint8_t>& b, T v) {
    const std::size_t at = b.size();
    b.resize(at + sizeof v);
    std::memcpy(b.data() + at, &v, sizeof v);
  }
  static void put_string(std::vector<std::uint8_t>& b, const std::string& s) {
    put(b, std::uint64_t(s.size()));
    b.insert(b.end(), s.begin(), s.end());
  }
  static std::uint64_t round_up(std::uint64_t n, std::uint64_t a) { return (n + a - 1) / a * a; }

  template <typename T>
  GgufWriter& scalar(const std::string& key, GgufType type, T v) {
    Kv kv{key, type, {}, {}};
    put(kv.payload, v);
    kvs_.push_back(std::move(kv));
    return *this;
  }

  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
};

}  // namespace passim::test
