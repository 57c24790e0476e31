// SPDX-License-Identifier: Apache-2.0
// llama2.c checkpoint reader.
#include "passim/io/llama2c.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/io/file.hpp"

namespace passim {

namespace {

constexpr std::size_t kHeaderBytes = 7 * sizeof(std::int32_t);
constexpr std::uint64_t kMaxCheckpointBytes = std::uint64_t{1} << 34;  // 16 GiB

std::int32_t read_i32(const std::uint8_t* p) {
  std::int32_t v = 0;
  std::memcpy(&v, p, sizeof v);  // the format is little-endian, like every supported host
  return v;
}

class FloatReader {
 public:
  FloatReader(const std::vector<std::uint8_t>& data, std::string source)
      : data_(data), source_(std::move(source)) {}

  std::vector<float> take(std::uint64_t count, const char* name) {
    std::vector<float> out(count);
    std::memcpy(out.data(), data_.data() + offset_, count * sizeof(float));
    for (std::uint64_t i = 0; i < count; ++i) {
      if (!std::isfinite(out[i])) {
        throw std::runtime_error(fmt::format(
            "{}: tensor {} element {} (byte offset {}): expected a finite float, found {}",
            source_, name, i, offset_ + i * sizeof(float), out[i]));
      }
    }
    offset_ += count * sizeof(float);
    return out;
  }
  void skip(std::uint64_t count) { offset_ += count * sizeof(float); }

 private:
  const std::vector<std::uint8_t>& data_;
  std::string source_;
  std::uint64_t offset_ = kHeaderBytes;
};

/// The vocab_size field as the file stores it: negative when an unshared classifier follows.
std::int32_t header_vocab(const ModelConfig& c) {
  return c.shared_classifier ? c.vocab_size : -c.vocab_size;
}

/// The config in the 7 header fields (`header` holds at least kHeaderBytes). Throws naming
/// the file for an export.py version-1 or -2 file, or a config `validate_config` rejects.
ModelConfig config_from_header(const std::vector<std::uint8_t>& header, const std::string& source) {
  // llama2.c's export.py --version 1 (float32) and 2 (Q8_0) start with the magic 0x616b3432
  // and a version number; run.c (and this loader) read the legacy version-0 layout.
  constexpr std::int32_t kExportMagic = 0x616b3432;
  if (read_i32(header.data()) == kExportMagic) {
    const std::int32_t version = read_i32(header.data() + 4);
    throw std::runtime_error(fmt::format(
        "{}: header: expected a legacy llama2.c checkpoint (export.py --version 0, run.c's "
        "format), found an export.py version-{} file (magic 0x616b3432{}); export it with "
        "--version 0",
        source, version,
        version == 2 ? ", int8 Q8_0" : version == 1 ? ", float32" : ""));
  }
  ModelConfig c;
  c.dim = read_i32(header.data() + 0);
  c.hidden_dim = read_i32(header.data() + 4);
  c.n_layers = read_i32(header.data() + 8);
  c.n_heads = read_i32(header.data() + 12);
  c.n_kv_heads = read_i32(header.data() + 16);
  const std::int32_t vocab_raw = read_i32(header.data() + 20);
  c.seq_len = read_i32(header.data() + 24);
  c.shared_classifier = vocab_raw > 0;
  c.vocab_size = vocab_raw == INT32_MIN ? 0 : std::abs(vocab_raw);
  validate_config(c, source);
  return c;
}

/// The float32 tensors after the header, in llama2.c order, each checked to be finite.
FloatWeights read_weights(const std::vector<std::uint8_t>& data, const std::string& source,
                          const ModelConfig& c) {
  const std::uint64_t dim = std::uint64_t(c.dim);
  const std::uint64_t hidden = std::uint64_t(c.hidden_dim);
  const std::uint64_t layers = std::uint64_t(c.n_layers);
  const std::uint64_t kv_dim = c.kv_dim();
  FloatReader r(data, source);
  FloatWeights w;
  w.token_embedding = r.take(std::uint64_t(c.vocab_size) * dim, "token_embedding");
  w.rms_att = r.take(layers * dim, "rms_att_weight");
  w.wq = r.take(layers * dim * dim, "wq");
  w.wk = r.take(layers * kv_dim * dim, "wk");
  w.wv = r.take(layers * kv_dim * dim, "wv");
  w.wo = r.take(layers * dim * dim, "wo");
  w.rms_ffn = r.take(layers * dim, "rms_ffn_weight");
  w.w1 = r.take(layers * hidden * dim, "w1");
  w.w2 = r.take(layers * dim * hidden, "w2");
  w.w3 = r.take(layers * hidden * dim, "w3");
  w.rms_final = r.take(dim, "rms_final_weight");
  r.skip(std::uint64_t(c.seq_len) * c.head_size());  // freq_cis_real, freq_cis_imag (unused)
  if (!c.shared_classifier) {
    w.wcls = r.take(std::uint64_t(c.vocab_size) * dim, "wcls");
  }
  return w;
}

}  // namespace

FloatModel load_llama2c(const std::filesystem::path& path) {
  const std::string source = path.string();
  // Validate the header and the file size before reading (and allocating) the weights.
  const std::vector<std::uint8_t> header = read_file_prefix(path, kHeaderBytes);
  const std::uint64_t file_bytes = std::filesystem::file_size(path);
  if (header.size() < kHeaderBytes) {
    throw std::runtime_error(fmt::format(
        "{}: llama2.c header: expected at least {} bytes, found a {}-byte file", source,
        kHeaderBytes, file_bytes));
  }
  const ModelConfig c = config_from_header(header, source);
  const std::uint64_t expected = kHeaderBytes + llama2c_param_count(c) * sizeof(float);
  if (file_bytes != expected) {
    throw std::runtime_error(fmt::format(
        "{}: file size: expected {} bytes for dim={} hidden_dim={} n_layers={} n_heads={} "
        "n_kv_heads={} vocab_size={} seq_len={}, found {} bytes ({})",
        source, expected, c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, header_vocab(c),
        c.seq_len, file_bytes, file_bytes < expected ? "truncated" : "trailing data"));
  }
  const std::vector<std::uint8_t> data = read_file(path, kMaxCheckpointBytes);
  if (data.size() != expected) {
    throw std::runtime_error(fmt::format("{}: file changed while reading", source));
  }
  FloatModel m;
  m.config = c;
  m.source = source;
  m.sha256 = sha256_hex(data);
  m.weights = read_weights(data, source, c);
  return m;
}

std::vector<std::uint8_t> serialize_llama2c(const FloatModel& model) {
  const ModelConfig& c = model.config;
  std::vector<std::uint8_t> out;
  auto append = [&](const void* p, std::size_t n) {
    const std::size_t at = out.size();
    out.resize(at + n);
    std::memcpy(out.data() + at, p, n);
  };
  auto put_i32 = [&](std::int32_t v) { append(&v, sizeof v); };
  auto put = [&](const std::vector<float>& v) { append(v.data(), v.size() * sizeof(float)); };
  put_i32(c.dim);
  put_i32(c.hidden_dim);
  put_i32(c.n_layers);
  put_i32(c.n_heads);
  put_i32(c.n_kv_heads);
  put_i32(header_vocab(c));
  put_i32(c.seq_len);
  const FloatWeights& w = model.weights;
  for (const auto* t : {&w.token_embedding, &w.rms_att, &w.wq, &w.wk, &w.wv, &w.wo, &w.rms_ffn,
                        &w.w1, &w.w2, &w.w3, &w.rms_final}) {
    put(*t);
  }
  put(std::vector<float>(std::size_t(c.seq_len) * c.head_size(), 0.0f));
  if (!c.shared_classifier) {
    put(w.wcls);
  }
  return out;
}

}  // namespace passim
