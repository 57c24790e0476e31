// SPDX-License-Identifier: Apache-2.0
// The .psm reader: the header and checksum, the table of tensor records, then the model's
// tensors looked up by name, section by section (docs/model-format.md).
#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/io/file.hpp"
#include "passim/io/psm.hpp"
#include "passim/io/tokenizer.hpp"
#include "passim/model/config.hpp"
#include "psm_layout.hpp"

namespace passim {

namespace {

using psm::DType;
using psm::kDigestBytes;
using psm::kHeaderBytes;
using psm::kMagic;
using psm::layer_name;

constexpr std::uint64_t kMaxPsmBytes = std::uint64_t{1} << 34;

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
  const std::string& source() const { return source_; }
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
      throw std::runtime_error(fmt::format("{}: {}: expected {} bytes at offset {}, found {}",
                                           source_, field, n, off_, end_ - off_));
    }
  }
  void set_end(std::size_t end) { end_ = end; }
  std::size_t offset() const { return off_; }

  void read_tensors(std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::string idx = fmt::format("tensor #{}", i);
      const auto name_len = get<std::uint16_t>("tensor name length");
      if (name_len == 0 || name_len > 255) {
        throw std::runtime_error(
            fmt::format("{}: {} name length: expected 1..255, found {}", source_, idx, name_len));
      }
      need(name_len, idx + " name");
      std::string name(reinterpret_cast<const char*>(data_.data() + off_), name_len);
      off_ += name_len;
      const auto dtype = static_cast<DType>(get<std::uint8_t>("tensor dtype"));
      if (psm::dtype_bytes(dtype) == 0) {
        throw std::runtime_error(
            fmt::format("{}: tensor {} dtype: expected 1..6, found {}", source_, name, int(dtype)));
      }
      const auto ndim = get<std::uint8_t>("tensor rank");
      if (ndim < 1 || ndim > 4) {
        throw std::runtime_error(
            fmt::format("{}: tensor {} rank: expected 1..4, found {}", source_, name, ndim));
      }
      TensorRef t{dtype, {}, nullptr, psm::dtype_bytes(dtype)};
      for (int d = 0; d < ndim; ++d) {
        const auto dimv = get<std::uint32_t>("tensor dims");
        t.dims.push_back(dimv);
        if (dimv != 0 && t.bytes > (end_ - off_) / dimv) {  // cannot fit: stop before overflow
          throw std::runtime_error(fmt::format(
              "{}: tensor {}: declared shape does not fit in the {} bytes left (file truncated "
              "or corrupt)",
              source_, name, end_ - off_));
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
    if (t.dtype != psm::dtype_of<T>()) {
      throw std::runtime_error(fmt::format("{}: tensor {} dtype: expected {}, found {}", source_,
                                           name, int(psm::dtype_of<T>()), int(t.dtype)));
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
            "shift {}",
            source_, name, i, rq[i].mult, rq[i].shift));
      }
      if (rq[i].bias < -bmax - 1 || rq[i].bias > bmax) {
        throw std::runtime_error(
            fmt::format("{}: tensor {} entry {}: expected a bias in {}..{} ({} bits), found {}",
                        source_, name, i, -bmax - 1, bmax, kRequantBiasBits, rq[i].bias));
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
            "found {}",
            source_, name, i, rq[i].bias));
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
      throw std::runtime_error(
          fmt::format("{}: tensor {}: missing or not a string", source_, name));
    }
    used_.push_back(name);
    return {reinterpret_cast<const char*>(it->second.data), it->second.bytes};
  }
  void check_all_used() const {
    for (const auto& [name, t] : tensors_) {
      if (std::find(used_.begin(), used_.end(), name) == used_.end()) {
        throw std::runtime_error(
            fmt::format("{}: tensor {}: not part of format version {} (wrong model kind?)", source_,
                        name, version_));
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

/// Checks the magic, the version, the file size and the SHA-256 footer, and leaves `r` at
/// the config with its end at the footer. Returns the offset of the footer.
std::size_t read_header_and_checksum(Reader& r, const std::vector<std::uint8_t>& data) {
  const std::string& source = r.source();
  if (data.size() < sizeof kMagic || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0) {
    throw std::runtime_error(fmt::format(
        "{}: magic: expected \"PASSIMQ\" (a model written by passim quantize), found other bytes",
        source));
  }
  r.set_end(data.size());
  (void)r.get<std::array<char, 8>>("magic");
  const auto version = r.get<std::uint32_t>("version");
  if (version != 1 && version != kPsmVersion) {
    throw std::runtime_error(
        fmt::format("{}: format version: expected 1..{}, found {}", source, kPsmVersion, version));
  }
  r.set_version(version);
  const auto total = r.get<std::uint64_t>("file size field");
  if (total != data.size()) {
    throw std::runtime_error(fmt::format("{}: file size: expected {} bytes, found {} ({})", source,
                                         total, data.size(),
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
  return body_end;
}

/// The 7 config fields and the flags of the header.
ModelConfig read_config(Reader& r) {
  ModelConfig c;
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
        "{}: flags: expected bit 0 (shared classifier) only, found {:#x}", r.source(), flags));
  }
  c.shared_classifier = (flags & 1u) != 0;
  return c;
}

/// The table of tensor records, which must end exactly at the checksum.
void read_records(Reader& r, std::size_t body_end) {
  r.read_tensors(r.get<std::uint32_t>("tensor count"));
  if (r.offset() != body_end) {
    throw std::runtime_error(fmt::format("{}: {} unexplained bytes before the checksum", r.source(),
                                         body_end - r.offset()));
  }
}

/// Version 2's `meta.arch` and `meta.norm_eps` (version 1 keeps the llama defaults).
void read_arch(Reader& r, QuantModel& m) {
  ModelConfig& c = m.config;
  const auto a = r.tensor<std::int32_t>("meta.arch", {5});
  if (a[0] < 0 || a[0] > 1 || a[1] < 0 || a[1] > 2 || a[3] < 0 || a[3] > 1 || a[4] < 0 ||
      a[4] > 1) {
    throw std::runtime_error(
        fmt::format("{}: tensor meta.arch: expected arch 0..1, norm 0..2, flags 0..1, found {}",
                    r.source(), fmt::join(a, ", ")));
  }
  if (a[4] != 0 && a[1] != int(NormKind::kBatch)) {
    throw std::runtime_error(fmt::format(
        "{}: tensor meta.arch: expected BatchNorm mode 0 for a model without BatchNorm, "
        "found {}",
        r.source(), a[4]));
  }
  c.arch = Arch(a[0]);
  c.norm = NormKind(a[1]);
  c.bos_token = a[2];
  c.bos_ends_text = a[3] != 0;
  m.batchnorm = BatchNormMode(a[4]);
  c.norm_eps = r.tensor<float>("meta.norm_eps", {1})[0];
}

/// `norm_eps`, the token rows and, for GPT, the position rows, with their steps.
void read_embeddings(Reader& r, QuantModel& m) {
  const ModelConfig& c = m.config;
  const auto dim = std::uint32_t(c.dim), vocab = std::uint32_t(c.vocab_size);
  const std::int64_t eps = r.tensor<std::int64_t>("norm_eps", {1})[0];
  if (eps < 0 || eps >= (std::int64_t{1} << 40)) {
    throw std::runtime_error(
        fmt::format("{}: tensor norm_eps: expected 0..2^40, found {}", r.source(), eps));
  }
  m.norm_eps = std::uint64_t(eps);
  m.token_embedding = r.tensor<std::int8_t>("tok_embeddings.weight", {vocab, dim});
  m.embed_rq = r.unbiased("tok_embeddings.rq", vocab);
  if (c.arch == Arch::kGpt) {
    m.pos_embedding =
        r.tensor<std::int8_t>("pos_embeddings.weight", {std::uint32_t(c.seq_len), dim});
    m.pos_rq = r.unbiased("pos_embeddings.rq", std::uint32_t(c.seq_len));
  }
}

/// The optional `tokenizer.chars`: vocab_size well-formed UTF-8 characters.
void read_char_vocab(Reader& r, QuantModel& m) {
  if (!r.has("tokenizer.chars")) {
    return;
  }
  const std::string chars = r.text("tokenizer.chars");
  for (std::size_t i = 0; i < chars.size();) {
    const std::size_t len = utf8_char_bytes(chars, i);
    if (len == 0) {
      throw std::runtime_error(fmt::format(
          "{}: tensor tokenizer.chars byte {}: expected well-formed UTF-8, found 0x{:02X}",
          r.source(), i, static_cast<unsigned char>(chars[i])));
    }
    m.char_vocab.push_back(chars.substr(i, len));
    i += len;
  }
  if (m.char_vocab.size() != std::size_t(m.config.vocab_size)) {
    throw std::runtime_error(
        fmt::format("{}: tensor tokenizer.chars: expected {} characters (vocab_size), found {}",
                    r.source(), m.config.vocab_size, m.char_vocab.size()));
  }
}

/// True when the norms are BatchNorms folded into the projections (no gain, no bias).
bool folded_batchnorm(const QuantModel& m) {
  return m.config.norm == NormKind::kBatch && m.batchnorm == BatchNormMode::kFolded;
}

/// The tensors of layer `l` (attention, then GELU or SwiGLU), and its activation scales.
void read_layer(Reader& r, QuantModel& m, std::size_t l) {
  const ModelConfig& c = m.config;
  const auto dim = std::uint32_t(c.dim), hidden = std::uint32_t(c.hidden_dim);
  const auto kv = std::uint32_t(c.kv_dim()), heads = std::uint32_t(c.n_heads);
  const bool folded = folded_batchnorm(m);
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
  L.score_rq = r.unbiased(n("score.rq"), heads);
  L.attn_out_rq = r.unbiased(n("attn_out.rq"), heads);
  L.ffn_norm = r.norm(n("ffn_norm"), dim, c.norm, folded);
  L.w1 = r.tensor<std::int8_t>(n("w1.weight"), {hidden, dim});
  L.w2 = r.tensor<std::int8_t>(n("w2.weight"), {dim, hidden});
  L.rq_1 = r.requants(n("w1.rq"), hidden);
  L.rq_2 = r.requants(n("w2.rq"), dim);
  if (c.arch == Arch::kGpt) {
    L.gelu_in_rq = r.unbiased(n("gelu_in.rq"));
    L.gelu_out_rq = r.unbiased(n("gelu_out.rq"));
  } else {
    L.w3 = r.tensor<std::int8_t>(n("w3.weight"), {hidden, dim});
    L.rq_3 = r.requants(n("w3.rq"), hidden);
    L.silu_in_rq = r.unbiased(n("silu_in.rq"));
    L.silu_out_rq = r.unbiased(n("silu_out.rq"));
    L.mul_rq = r.unbiased(n("mul.rq"), hidden);
  }
  const std::uint32_t n_acts = r.version() >= 2 ? std::uint32_t(Act::kCount) : 12u;
  const auto sc = r.tensor<float>(n("scales"), {n_acts});
  std::array<float, std::size_t(Act::kCount)> arr{};
  std::copy(sc.begin(), sc.end(), arr.begin());
  m.scales.layer.push_back(arr);
  m.layers.push_back(std::move(L));
}

/// The final norm, the classifier and, for llama, the RoPE tables.
void read_head(Reader& r, QuantModel& m) {
  const ModelConfig& c = m.config;
  const auto dim = std::uint32_t(c.dim), vocab = std::uint32_t(c.vocab_size);
  m.final_norm = r.norm("norm", dim, c.norm, folded_batchnorm(m));
  if (!c.shared_classifier || r.has("output.weight")) {
    m.wcls = r.tensor<std::int8_t>("output.weight", {vocab, dim});
  }
  m.rq_cls = r.requants("output.rq", vocab);
  if (c.arch != Arch::kGpt) {
    const auto half = std::uint32_t(c.head_size() / 2);
    m.rope_cos = r.tensor<std::int16_t>("rope.cos", {std::uint32_t(c.seq_len), half});
    m.rope_sin = r.tensor<std::int16_t>("rope.sin", {std::uint32_t(c.seq_len), half});
  }
}

/// The scales kept for reports, and where the model came from.
void read_provenance(Reader& r, QuantModel& m) {
  m.scales.residual = r.tensor<float>("scales.residual", {1})[0];
  m.scales.final_norm = r.tensor<float>("scales.final_norm", {1})[0];
  m.source_sha256 = r.text("meta.source_sha256");
  m.calibration = r.text("meta.calibration");
}

}  // namespace

QuantModel parse_psm(const std::vector<std::uint8_t>& data, const std::string& source) {
  Reader r(data, source);
  const std::size_t body_end = read_header_and_checksum(r, data);
  QuantModel m;
  m.config = read_config(r);
  read_records(r, body_end);
  if (r.version() >= 2) {
    read_arch(r, m);
  }
  const ModelConfig& c = m.config;
  validate_config(c, source);
  if (c.dim > 4096 || c.hidden_dim > 4096) {
    throw std::runtime_error(fmt::format("{}: dim/hidden_dim: expected <= 4096, found {}/{}",
                                         source, c.dim, c.hidden_dim));
  }
  read_embeddings(r, m);
  read_char_vocab(r, m);
  for (std::size_t l = 0; l < std::size_t(c.n_layers); ++l) {
    read_layer(r, m, l);
  }
  read_head(r, m);
  read_provenance(r, m);
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
