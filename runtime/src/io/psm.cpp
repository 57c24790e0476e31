// SPDX-License-Identifier: Apache-2.0
// The project model format (.psm): header, named typed tensors, SHA-256 footer.
// Layout (little-endian):
//   "PASSIMQ\0" | u32 version | u64 file_bytes | i32 dim hidden n_layers n_heads n_kv_heads
//   vocab seq_len | u32 flags (bit 0: shared classifier) | u32 n_tensors |
//   n_tensors x { u16 name_len | name | u8 dtype | u8 ndim | u32 dims[ndim] | data } |
//   32-byte SHA-256 of everything before it.
// Version 2: requantisation steps are (n, 3) int32 (mult, shift, bias) instead of (n, 2);
// `meta.arch` (i32: arch, norm, bos_token, bos_ends_text, batchnorm mode) and
// `meta.norm_eps` (f32) describe the block; GPT models add positions, norm biases, the
// BatchNorm steps, GELU steps and the character vocabulary (docs/model-format.md).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/io/file.hpp"
#include "passim/io/psm.hpp"
#include "passim/io/tokenizer.hpp"
#include "passim/model/config.hpp"

namespace passim {

namespace {

constexpr char kMagic[8] = {'P', 'A', 'S', 'S', 'I', 'M', 'Q', '\0'};
constexpr std::size_t kHeaderBytes = 8 + 4 + 8 + 7 * 4 + 4 + 4;
constexpr std::size_t kDigestBytes = 32;
constexpr std::uint64_t kMaxPsmBytes = std::uint64_t{1} << 34;

enum class DType : std::uint8_t { kI8 = 1, kI16 = 2, kI32 = 3, kI64 = 4, kF32 = 5, kU8 = 6 };

std::size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::kI8:
    case DType::kU8:
      return 1;
    case DType::kI16:
      return 2;
    case DType::kI32:
    case DType::kF32:
      return 4;
    case DType::kI64:
      return 8;
  }
  return 0;
}

template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, std::int8_t>) return DType::kI8;
  else if constexpr (std::is_same_v<T, std::int16_t>) return DType::kI16;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DType::kI32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return DType::kI64;
  else if constexpr (std::is_same_v<T, float>) return DType::kF32;
  else return DType::kU8;
}

// ---- writing --------------------------------------------------------------------------------

class Writer {
 public:
  void append(const void* p, std::size_t n) {
    const std::size_t at = buf_.size();
    buf_.resize(at + n);
    if (n > 0) {
      std::memcpy(buf_.data() + at, p, n);
    }
  }
  template <typename T>
  void put(const T& v) {
    append(&v, sizeof(T));
  }
  template <typename T>
  void tensor(const std::string& name, std::span<const T> data, std::vector<std::uint32_t> dims) {
    put(static_cast<std::uint16_t>(name.size()));
    append(name.data(), name.size());
    put(dtype_of<T>());
    put(static_cast<std::uint8_t>(dims.size()));
    for (const auto d : dims) {
      put(d);
    }
    append(data.data(), data.size_bytes());
    ++count_;
  }
  void requants(const std::string& name, const std::vector<Requant>& rq) {
    std::vector<std::int32_t> flat;
    for (const Requant r : rq) {
      flat.push_back(r.mult);
      flat.push_back(r.shift);
      flat.push_back(r.bias);
    }
    tensor<std::int32_t>(name, flat, {std::uint32_t(rq.size()), 3});
  }
  void norm(const std::string& name, const QuantNorm& n) {
    tensor<std::int16_t>(name + ".gain", n.gain, {std::uint32_t(n.gain.size())});
    tensor<std::int32_t>(name + ".frac_bits", std::span(&n.frac_bits, 1), {1});
    if (!n.bias.empty()) {
      tensor<std::int16_t>(name + ".bias", n.bias, {std::uint32_t(n.bias.size())});
    }
    requants(name + ".rq", {n.rq});
  }
  void text(const std::string& name, const std::string& s) {
    tensor<std::uint8_t>(name, {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()},
                         {std::uint32_t(s.size())});
  }
  std::vector<std::uint8_t>& bytes() { return buf_; }
  std::uint32_t count() const { return count_; }

 private:
  std::vector<std::uint8_t> buf_;
  std::uint32_t count_ = 0;
};

// ---- reading --------------------------------------------------------------------------------

struct TensorRef {
  DType dtype;
  std::vector<std::uint32_t> dims;
  const std::uint8_t* data;
  std::size_t bytes;
};

class Reader {
 public:
  Reader(const std::vector<std::uint8_t>& data, std::string source)
      : data_(data), source_(std::move(source)) {}
  void set_version(std::uint32_t v) { version_ = v; }
  std::uint32_t version() const { return version_; }

  template <typename T>
  T get(const char* field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, data_.data() + off_, sizeof(T));
    off_ += sizeof(T);
    return v;
  }
  void need(std::size_t n, const std::string& field) const {
    if (end_ - off_ < n) {
      throw std::runtime_error(fmt::format(
          "{}: {}: expected {} bytes at offset {}, found {}", source_, field, n, off_, end_ - off_));
    }
  }
  void set_end(std::size_t end) { end_ = end; }
  std::size_t offset() const { return off_; }

  void read_tensors(std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::string idx = fmt::format("tensor #{}", i);
      const auto name_len = get<std::uint16_t>("tensor name length");
      if (name_len == 0 || name_len > 255) {
        throw std::runtime_error(fmt::format("{}: {} name length: expected 1..255, found {}",
                                             source_, idx, name_len));
      }
      need(name_len, idx + " name");
      std::string name(reinterpret_cast<const char*>(data_.data() + off_), name_len);
      off_ += name_len;
      const auto dtype = static_cast<DType>(get<std::uint8_t>("tensor dtype"));
      if (dtype_bytes(dtype) == 0) {
        throw std::runtime_error(fmt::format("{}: tensor {} dtype: expected 1..6, found {}",
                                             source_, name, int(dtype)));
      }
      const auto ndim = get<std::uint8_t>("tensor rank");
      if (ndim < 1 || ndim > 4) {
        throw std::runtime_error(fmt::format("{}: tensor {} rank: expected 1..4, found {}",
                                             source_, name, ndim));
      }
      TensorRef t{dtype, {}, nullptr, dtype_bytes(dtype)};
      for (int d = 0; d < ndim; ++d) {
        const auto dimv = get<std::uint32_t>("tensor dims");
        t.dims.push_back(dimv);
        if (dimv != 0 && t.bytes > (end_ - off_) / dimv) {  // cannot fit: stop before overflow
          throw std::runtime_error(fmt::format(
              "{}: tensor {}: declared shape does not fit in the {} bytes left (file truncated "
              "or corrupt)", source_, name, end_ - off_));
        }
        t.bytes *= dimv;
      }
      need(t.bytes, "tensor " + name + " data");
      t.data = data_.data() + off_;
      off_ += t.bytes;
      if (!tensors_.emplace(name, std::move(t)).second) {
        throw std::runtime_error(fmt::format("{}: tensor {} appears twice", source_, name));
      }
    }
  }

  template <typename T>
  std::vector<T> tensor(const std::string& name, std::vector<std::uint32_t> dims) {
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) {
      throw std::runtime_error(fmt::format("{}: tensor {}: missing", source_, name));
    }
    const TensorRef& t = it->second;
    if (t.dtype != dtype_of<T>()) {
      throw std::runtime_error(fmt::format("{}: tensor {} dtype: expected {}, found {}", source_,
                                           name, int(dtype_of<T>()), int(t.dtype)));
    }
    if (t.dims != dims) {
      throw std::runtime_error(fmt::format("{}: tensor {} shape: expected ({}), found ({})",
                                           source_, name, fmt::join(dims, ", "),
                                           fmt::join(t.dims, ", ")));
    }
    std::vector<T> out(t.bytes / sizeof(T));
    if (t.bytes > 0) {  // an empty tensor (a folded BatchNorm's gain) has no data pointer
      std::memcpy(out.data(), t.data, t.bytes);
    }
    used_.push_back(name);
    return out;
  }

  std::vector<Requant> requants(const std::string& name, std::uint32_t n) {
    const std::uint32_t w = version_ >= 2 ? 3 : 2;
    const auto flat = tensor<std::int32_t>(name, {n, w});
    std::vector<Requant> rq(n);
    const std::int32_t bmax = (1 << (kRequantBiasBits - 1)) - 1;
    for (std::size_t i = 0; i < n; ++i) {
      rq[i] = {flat[w * i], flat[w * i + 1], w == 3 ? flat[w * i + 2] : 0};
      if (rq[i].mult < 0 || rq[i].shift < 0 || rq[i].shift > 63) {
        throw std::runtime_error(fmt::format(
            "{}: tensor {} entry {}: expected mult >= 0 and shift in 0..63, found mult {} "
            "shift {}", source_, name, i, rq[i].mult, rq[i].shift));
      }
      if (rq[i].bias < -bmax - 1 || rq[i].bias > bmax) {
        throw std::runtime_error(fmt::format(
            "{}: tensor {} entry {}: expected a bias in {}..{} ({} bits), found {}", source_,
            name, i, -bmax - 1, bmax, kRequantBiasBits, rq[i].bias));
      }
    }
    return rq;
  }
  Requant requant(const std::string& name) { return requants(name, 1)[0]; }
  /// Steps that only the matmul read-out would honour a bias in: every other one must be 0,
  /// or the golden kernels (which add it) and the hardware (which ignores it) would differ.
  std::vector<Requant> unbiased(const std::string& name, std::uint32_t n) {
    auto rq = requants(name, n);
    for (std::size_t i = 0; i < rq.size(); ++i) {
      if (rq[i].bias != 0) {
        throw std::runtime_error(fmt::format(
            "{}: tensor {} entry {}: expected bias 0 (only projection steps carry a bias), "
            "found {}", source_, name, i, rq[i].bias));
      }
    }
    return rq;
  }
  Requant unbiased(const std::string& name) { return unbiased(name, 1)[0]; }
  bool has(const std::string& name) const { return tensors_.count(name) != 0; }

  QuantNorm norm(const std::string& name, std::uint32_t n, NormKind kind, bool folded) {
    QuantNorm qn;
    if (version_ >= 2) {
      qn.rq = unbiased(name + ".rq");
      if (kind != NormKind::kRms && !folded) {
        qn.bias = tensor<std::int16_t>(name + ".bias", {n});
      }
    }
    qn.gain = tensor<std::int16_t>(name + ".gain", {folded ? 0u : n});
    qn.frac_bits = tensor<std::int32_t>(name + ".frac_bits", {1})[0];
    if (qn.frac_bits < 0 || qn.frac_bits > 13) {
      throw std::runtime_error(fmt::format("{}: tensor {}.frac_bits: expected 0..13, found {}",
                                           source_, name, qn.frac_bits));
    }
    return qn;
  }
  std::string text(const std::string& name) {
    const auto it = tensors_.find(name);
    if (it == tensors_.end() || it->second.dtype != DType::kU8 || it->second.dims.size() != 1) {
      throw std::runtime_error(fmt::format("{}: tensor {}: missing or not a string", source_, name));
    }
    used_.push_back(name);
    return {reinterpret_cast<const char*>(it->second.data), it->second.bytes};
  }
  void check_all_used() const {
    for (const auto& [name, t] : tensors_) {
      if (std::find(used_.begin(), used_.end(), name) == used_.end()) {
        throw std::runtime_error(fmt::format(
            "{}: tensor {}: not part of format version {} (wrong model kind?)", source_, name,
            version_));
      }
    }
  }

 private:
  const std::vector<std::uint8_t>& data_;
  std::string source_;
  std::size_t off_ = 0;
  std::size_t end_ = 0;
  std::map<std::string, TensorRef> tensors_;
  std::vector<std::string> used_;
  std::uint32_t version_ = kPsmVersion;
};

std::string layer_name(std::size_t l, const char* what) { return fmt::format("layers.{}.{}", l, what); }

}  // namespace

std::vector<std::uint8_t> serialize_psm(const QuantModel& m) {
  const ModelConfig& c = m.config;
  Writer body;
  const auto dim = std::uint32_t(c.dim), hidden = std::uint32_t(c.hidden_dim);
  const auto kv = std::uint32_t(c.kv_dim()), vocab = std::uint32_t(c.vocab_size);
  const std::int64_t eps = static_cast<std::int64_t>(m.norm_eps);
  const bool gpt = c.arch == Arch::kGpt;
  const std::vector<std::int32_t> arch{std::int32_t(c.arch), std::int32_t(c.norm), c.bos_token,
                                       c.bos_ends_text ? 1 : 0, std::int32_t(m.batchnorm)};
  body.tensor<std::int32_t>("meta.arch", arch, {std::uint32_t(arch.size())});
  body.tensor<float>("meta.norm_eps", std::span(&c.norm_eps, 1), {1});
  body.tensor<std::int64_t>("norm_eps", std::span(&eps, 1), {1});
  body.tensor<std::int8_t>("tok_embeddings.weight", m.token_embedding, {vocab, dim});
  body.requants("tok_embeddings.rq", m.embed_rq);
  if (gpt) {
    body.tensor<std::int8_t>("pos_embeddings.weight", m.pos_embedding,
                             {std::uint32_t(c.seq_len), dim});
    body.requants("pos_embeddings.rq", m.pos_rq);
  }
  if (!m.char_vocab.empty()) {
    std::string chars;
    for (const auto& ch : m.char_vocab) {
      chars += ch;
    }
    body.text("tokenizer.chars", chars);
  }
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    const QuantLayer& L = m.layers[l];
    auto n = [&](const char* what) { return layer_name(l, what); };
    body.norm(n("attn_norm"), L.attn_norm);
    body.tensor<std::int8_t>(n("wq.weight"), L.wq, {dim, dim});
    body.tensor<std::int8_t>(n("wk.weight"), L.wk, {kv, dim});
    body.tensor<std::int8_t>(n("wv.weight"), L.wv, {kv, dim});
    body.tensor<std::int8_t>(n("wo.weight"), L.wo, {dim, dim});
    body.requants(n("wq.rq"), L.rq_q);
    body.requants(n("wk.rq"), L.rq_k);
    body.requants(n("wv.rq"), L.rq_v);
    body.requants(n("wo.rq"), L.rq_o);
    body.requants(n("score.rq"), L.score_rq);
    body.requants(n("attn_out.rq"), L.attn_out_rq);
    body.norm(n("ffn_norm"), L.ffn_norm);
    body.tensor<std::int8_t>(n("w1.weight"), L.w1, {hidden, dim});
    body.tensor<std::int8_t>(n("w2.weight"), L.w2, {dim, hidden});
    body.requants(n("w1.rq"), L.rq_1);
    body.requants(n("w2.rq"), L.rq_2);
    if (gpt) {
      body.requants(n("gelu_in.rq"), {L.gelu_in_rq});
      body.requants(n("gelu_out.rq"), {L.gelu_out_rq});
    } else {
      body.tensor<std::int8_t>(n("w3.weight"), L.w3, {hidden, dim});
      body.requants(n("w3.rq"), L.rq_3);
      body.requants(n("silu_in.rq"), {L.silu_in_rq});
      body.requants(n("silu_out.rq"), {L.silu_out_rq});
      body.requants(n("mul.rq"), L.mul_rq);
    }
    body.tensor<float>(n("scales"), m.scales.layer.at(l),
                       {std::uint32_t(Act::kCount)});
  }
  body.norm("norm", m.final_norm);
  if (!m.wcls.empty()) {
    body.tensor<std::int8_t>("output.weight", m.wcls, {vocab, dim});
  }
  body.requants("output.rq", m.rq_cls);
  if (!gpt) {
    const auto half = std::uint32_t(c.head_size() / 2);
    body.tensor<std::int16_t>("rope.cos", m.rope_cos, {std::uint32_t(c.seq_len), half});
    body.tensor<std::int16_t>("rope.sin", m.rope_sin, {std::uint32_t(c.seq_len), half});
  }
  body.tensor<float>("scales.residual", std::span(&m.scales.residual, 1), {1});
  body.tensor<float>("scales.final_norm", std::span(&m.scales.final_norm, 1), {1});
  body.text("meta.source_sha256", m.source_sha256);
  body.text("meta.calibration", m.calibration);

  Writer out;
  for (const char ch : kMagic) {
    out.put(ch);
  }
  out.put(kPsmVersion);
  const std::uint64_t total = kHeaderBytes + body.bytes().size() + kDigestBytes;
  out.put(total);
  for (const int v : {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size,
                      c.seq_len}) {
    out.put(std::int32_t(v));
  }
  out.put(std::uint32_t(c.shared_classifier ? 1 : 0));
  out.put(body.count());
  out.append(body.bytes().data(), body.bytes().size());
  const auto digest = sha256_raw(out.bytes());
  out.append(digest.data(), digest.size());
  return std::move(out.bytes());
}

void save_psm(const QuantModel& m, const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  const std::string name = path.string();
  std::error_code ec;
  if (name.empty()) {
    throw std::runtime_error("output path: expected a file name, found an empty string");
  }
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec)) {
    throw std::runtime_error(fmt::format("{}: exists and is not a regular file; not replaced",
                                         name));
  }
  const auto bytes = serialize_psm(m);
  // Write next to the target, then rename: a failure never leaves a half-written model
  // under the real name, and the temporary file is removed.
  const fs::path tmp = path.string() + ".tmp";
  bool ok = false;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) {
      out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
      out.flush();
      ok = static_cast<bool>(out);
    }
  }
  if (!ok) {
    const std::string reason = std::strerror(errno);
    fs::remove(tmp, ec);
    throw std::runtime_error(fmt::format("{}: cannot write the model: {}", name, reason));
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error(fmt::format("{}: cannot write the model: {}", name, ec.message()));
  }
}

QuantModel parse_psm(const std::vector<std::uint8_t>& data, const std::string& source) {
  if (data.size() < sizeof kMagic || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0) {
    throw std::runtime_error(fmt::format(
        "{}: magic: expected \"PASSIMQ\" (a model written by passim quantize), found other bytes",
        source));
  }
  Reader r(data, source);
  r.set_end(data.size());
  (void)r.get<std::array<char, 8>>("magic");
  const auto version = r.get<std::uint32_t>("version");
  if (version != 1 && version != kPsmVersion) {
    throw std::runtime_error(fmt::format("{}: format version: expected 1..{}, found {}", source,
                                         kPsmVersion, version));
  }
  r.set_version(version);
  const auto total = r.get<std::uint64_t>("file size field");
  if (total != data.size()) {
    throw std::runtime_error(fmt::format("{}: file size: expected {} bytes, found {} ({})",
                                         source, total, data.size(),
                                         data.size() < total ? "truncated" : "trailing data"));
  }
  if (data.size() < kHeaderBytes + kDigestBytes) {
    throw std::runtime_error(fmt::format("{}: file size: expected at least {} bytes, found {}",
                                         source, kHeaderBytes + kDigestBytes, data.size()));
  }
  const std::size_t body_end = data.size() - kDigestBytes;
  const auto digest = sha256_raw({data.data(), body_end});
  if (!std::equal(digest.begin(), digest.end(), data.begin() + std::ptrdiff_t(body_end))) {
    throw std::runtime_error(fmt::format(
        "{}: checksum: the SHA-256 footer does not match the contents (file corrupt)", source));
  }
  r.set_end(body_end);
  QuantModel m;
  ModelConfig& c = m.config;
  c.dim = r.get<std::int32_t>("dim");
  c.hidden_dim = r.get<std::int32_t>("hidden_dim");
  c.n_layers = r.get<std::int32_t>("n_layers");
  c.n_heads = r.get<std::int32_t>("n_heads");
  c.n_kv_heads = r.get<std::int32_t>("n_kv_heads");
  c.vocab_size = r.get<std::int32_t>("vocab_size");
  c.seq_len = r.get<std::int32_t>("seq_len");
  const auto flags = r.get<std::uint32_t>("flags");
  if ((flags & ~1u) != 0) {
    throw std::runtime_error(fmt::format(
        "{}: flags: expected bit 0 (shared classifier) only, found {:#x}", source, flags));
  }
  c.shared_classifier = (flags & 1u) != 0;
  r.read_tensors(r.get<std::uint32_t>("tensor count"));
  if (r.offset() != body_end) {
    throw std::runtime_error(fmt::format("{}: {} unexplained bytes before the checksum", source,
                                         body_end - r.offset()));
  }
  if (version >= 2) {
    const auto a = r.tensor<std::int32_t>("meta.arch", {5});
    if (a[0] < 0 || a[0] > 1 || a[1] < 0 || a[1] > 2 || a[3] < 0 || a[3] > 1 || a[4] < 0 ||
        a[4] > 1) {
      throw std::runtime_error(fmt::format(
          "{}: tensor meta.arch: expected arch 0..1, norm 0..2, flags 0..1, found {}", source,
          fmt::join(a, ", ")));
    }
    if (a[4] != 0 && a[1] != int(NormKind::kBatch)) {
      throw std::runtime_error(fmt::format(
          "{}: tensor meta.arch: expected BatchNorm mode 0 for a model without BatchNorm, "
          "found {}", source, a[4]));
    }
    c.arch = Arch(a[0]);
    c.norm = NormKind(a[1]);
    c.bos_token = a[2];
    c.bos_ends_text = a[3] != 0;
    m.batchnorm = BatchNormMode(a[4]);
    c.norm_eps = r.tensor<float>("meta.norm_eps", {1})[0];
  }
  validate_config(c, source);
  if (c.dim > 4096 || c.hidden_dim > 4096) {
    throw std::runtime_error(fmt::format("{}: dim/hidden_dim: expected <= 4096, found {}/{}",
                                         source, c.dim, c.hidden_dim));
  }
  const bool gpt = c.arch == Arch::kGpt;
  const bool folded = c.norm == NormKind::kBatch && m.batchnorm == BatchNormMode::kFolded;

  const auto dim = std::uint32_t(c.dim), hidden = std::uint32_t(c.hidden_dim);
  const auto kv = std::uint32_t(c.kv_dim()), vocab = std::uint32_t(c.vocab_size);
  const std::int64_t eps = r.tensor<std::int64_t>("norm_eps", {1})[0];
  if (eps < 0 || eps >= (std::int64_t{1} << 40)) {
    throw std::runtime_error(fmt::format("{}: tensor norm_eps: expected 0..2^40, found {}",
                                         source, eps));
  }
  m.norm_eps = std::uint64_t(eps);
  m.token_embedding = r.tensor<std::int8_t>("tok_embeddings.weight", {vocab, dim});
  m.embed_rq = r.unbiased("tok_embeddings.rq", vocab);
  if (gpt) {
    m.pos_embedding = r.tensor<std::int8_t>("pos_embeddings.weight",
                                            {std::uint32_t(c.seq_len), dim});
    m.pos_rq = r.unbiased("pos_embeddings.rq", std::uint32_t(c.seq_len));
  }
  if (r.has("tokenizer.chars")) {
    const std::string chars = r.text("tokenizer.chars");
    for (std::size_t i = 0; i < chars.size();) {
      const std::size_t len = utf8_char_bytes(chars, i);
      if (len == 0) {
        throw std::runtime_error(fmt::format(
            "{}: tensor tokenizer.chars byte {}: expected well-formed UTF-8, found 0x{:02X}",
            source, i, static_cast<unsigned char>(chars[i])));
      }
      m.char_vocab.push_back(chars.substr(i, len));
      i += len;
    }
    if (m.char_vocab.size() != std::size_t(c.vocab_size)) {
      throw std::runtime_error(fmt::format(
          "{}: tensor tokenizer.chars: expected {} characters (vocab_size), found {}", source,
          c.vocab_size, m.char_vocab.size()));
    }
  }
  for (std::size_t l = 0; l < std::size_t(c.n_layers); ++l) {
    QuantLayer L;
    auto n = [&](const char* what) { return layer_name(l, what); };
    L.attn_norm = r.norm(n("attn_norm"), dim, c.norm, folded);
    L.wq = r.tensor<std::int8_t>(n("wq.weight"), {dim, dim});
    L.wk = r.tensor<std::int8_t>(n("wk.weight"), {kv, dim});
    L.wv = r.tensor<std::int8_t>(n("wv.weight"), {kv, dim});
    L.wo = r.tensor<std::int8_t>(n("wo.weight"), {dim, dim});
    L.rq_q = r.requants(n("wq.rq"), dim);
    L.rq_k = r.requants(n("wk.rq"), kv);
    L.rq_v = r.requants(n("wv.rq"), kv);
    L.rq_o = r.requants(n("wo.rq"), dim);
    L.score_rq = r.unbiased(n("score.rq"), std::uint32_t(c.n_heads));
    L.attn_out_rq = r.unbiased(n("attn_out.rq"), std::uint32_t(c.n_heads));
    L.ffn_norm = r.norm(n("ffn_norm"), dim, c.norm, folded);
    L.w1 = r.tensor<std::int8_t>(n("w1.weight"), {hidden, dim});
    L.w2 = r.tensor<std::int8_t>(n("w2.weight"), {dim, hidden});
    L.rq_1 = r.requants(n("w1.rq"), hidden);
    L.rq_2 = r.requants(n("w2.rq"), dim);
    if (gpt) {
      L.gelu_in_rq = r.unbiased(n("gelu_in.rq"));
      L.gelu_out_rq = r.unbiased(n("gelu_out.rq"));
    } else {
      L.w3 = r.tensor<std::int8_t>(n("w3.weight"), {hidden, dim});
      L.rq_3 = r.requants(n("w3.rq"), hidden);
      L.silu_in_rq = r.unbiased(n("silu_in.rq"));
      L.silu_out_rq = r.unbiased(n("silu_out.rq"));
      L.mul_rq = r.unbiased(n("mul.rq"), hidden);
    }
    const std::uint32_t n_acts = version >= 2 ? std::uint32_t(Act::kCount) : 12u;
    const auto sc = r.tensor<float>(n("scales"), {n_acts});
    std::array<float, std::size_t(Act::kCount)> arr{};
    std::copy(sc.begin(), sc.end(), arr.begin());
    m.scales.layer.push_back(arr);
    m.layers.push_back(std::move(L));
  }
  m.final_norm = r.norm("norm", dim, c.norm, folded);
  if (!c.shared_classifier || r.has("output.weight")) {
    m.wcls = r.tensor<std::int8_t>("output.weight", {vocab, dim});
  }
  m.rq_cls = r.requants("output.rq", vocab);
  if (!gpt) {
    const auto half = std::uint32_t(c.head_size() / 2);
    m.rope_cos = r.tensor<std::int16_t>("rope.cos", {std::uint32_t(c.seq_len), half});
    m.rope_sin = r.tensor<std::int16_t>("rope.sin", {std::uint32_t(c.seq_len), half});
  }
  m.scales.residual = r.tensor<float>("scales.residual", {1})[0];
  m.scales.final_norm = r.tensor<float>("scales.final_norm", {1})[0];
  m.source_sha256 = r.text("meta.source_sha256");
  m.calibration = r.text("meta.calibration");
  r.check_all_used();
  return m;
}

QuantModel load_psm(const std::filesystem::path& path) {
  return parse_psm(read_file(path, kMaxPsmBytes), path.string());
}

std::string psm_magic_near_miss(const std::filesystem::path& path) {
  const MagicMatch m = compare_magic(path, kMagic);
  if (m.differ == 0 || m.differ > 2) {
    return {};
  }
  return fmt::format(
      "{}: magic: expected \"PASSIMQ\" (a model written by passim quantize), found {:02x}: "
      "a damaged .psm file ({} of 8 bytes differ)",
      path.string(), fmt::join(m.head, " "), m.differ);
}

bool is_psm_file(const std::filesystem::path& path) {
  const MagicMatch m = compare_magic(path, kMagic);  // never opens a fifo or a device
  return !m.head.empty() && m.differ == 0;
}

}  // namespace passim
