// SPDX-License-Identifier: Apache-2.0
// The .psm writer: the model's tensors as named typed records, in the order of
// docs/model-format.md, framed by the header and the SHA-256 footer.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/io/file.hpp"
#include "passim/io/psm.hpp"
#include "passim/model/config.hpp"
#include "psm_layout.hpp"

namespace passim {

namespace {

using psm::layer_name;

/// Appends tensor records (and counts them).
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
    put(psm::dtype_of<T>());
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

/// `meta.arch`, `meta.norm_eps` and the integer `norm_eps`.
void write_meta(Writer& body, const QuantModel& m) {
  const ModelConfig& c = m.config;
  const std::vector<std::int32_t> arch{std::int32_t(c.arch), std::int32_t(c.norm), c.bos_token,
                                       c.bos_ends_text ? 1 : 0, std::int32_t(m.batchnorm)};
  body.tensor<std::int32_t>("meta.arch", arch, {std::uint32_t(arch.size())});
  body.tensor<float>("meta.norm_eps", std::span(&c.norm_eps, 1), {1});
  const std::int64_t eps = static_cast<std::int64_t>(m.norm_eps);
  body.tensor<std::int64_t>("norm_eps", std::span(&eps, 1), {1});
}

/// Token rows (and, for GPT, position rows) with their steps, then the character vocabulary.
void write_embeddings(Writer& body, const QuantModel& m) {
  const ModelConfig& c = m.config;
  const auto dim = std::uint32_t(c.dim), vocab = std::uint32_t(c.vocab_size);
  body.tensor<std::int8_t>("tok_embeddings.weight", m.token_embedding, {vocab, dim});
  body.requants("tok_embeddings.rq", m.embed_rq);
  if (c.arch == Arch::kGpt) {
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
}

/// The tensors of layer `l`: attention, then the feed-forward block (GELU or SwiGLU).
void write_layer(Writer& body, const QuantModel& m, std::size_t l) {
  const ModelConfig& c = m.config;
  const auto dim = std::uint32_t(c.dim), hidden = std::uint32_t(c.hidden_dim);
  const auto kv = std::uint32_t(c.kv_dim());
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
  if (c.arch == Arch::kGpt) {
    body.requants(n("gelu_in.rq"), {L.gelu_in_rq});
    body.requants(n("gelu_out.rq"), {L.gelu_out_rq});
  } else {
    body.tensor<std::int8_t>(n("w3.weight"), L.w3, {hidden, dim});
    body.requants(n("w3.rq"), L.rq_3);
    body.requants(n("silu_in.rq"), {L.silu_in_rq});
    body.requants(n("silu_out.rq"), {L.silu_out_rq});
    body.requants(n("mul.rq"), L.mul_rq);
  }
  body.tensor<float>(n("scales"), m.scales.layer.at(l), {std::uint32_t(Act::kCount)});
}

/// The final norm, the classifier and, for llama, the RoPE tables.
void write_head(Writer& body, const QuantModel& m) {
  const ModelConfig& c = m.config;
  body.norm("norm", m.final_norm);
  if (!m.wcls.empty()) {
    body.tensor<std::int8_t>("output.weight", m.wcls,
                             {std::uint32_t(c.vocab_size), std::uint32_t(c.dim)});
  }
  body.requants("output.rq", m.rq_cls);
  if (c.arch != Arch::kGpt) {
    const auto half = std::uint32_t(c.head_size() / 2);
    body.tensor<std::int16_t>("rope.cos", m.rope_cos, {std::uint32_t(c.seq_len), half});
    body.tensor<std::int16_t>("rope.sin", m.rope_sin, {std::uint32_t(c.seq_len), half});
  }
}

/// The scales kept for reports, and where the model came from.
void write_provenance(Writer& body, const QuantModel& m) {
  body.tensor<float>("scales.residual", std::span(&m.scales.residual, 1), {1});
  body.tensor<float>("scales.final_norm", std::span(&m.scales.final_norm, 1), {1});
  body.text("meta.source_sha256", m.source_sha256);
  body.text("meta.calibration", m.calibration);
}

/// The whole file: header, the records of `body`, then the SHA-256 of all that.
std::vector<std::uint8_t> frame(Writer& body, const ModelConfig& c) {
  Writer out;
  for (const char ch : psm::kMagic) {
    out.put(ch);
  }
  out.put(kPsmVersion);
  const std::uint64_t total = psm::kHeaderBytes + body.bytes().size() + psm::kDigestBytes;
  out.put(total);
  for (const int v :
       {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len}) {
    out.put(std::int32_t(v));
  }
  out.put(std::uint32_t(c.shared_classifier ? 1 : 0));
  out.put(body.count());
  out.append(body.bytes().data(), body.bytes().size());
  const auto digest = sha256_raw(out.bytes());
  out.append(digest.data(), digest.size());
  return std::move(out.bytes());
}

}  // namespace

std::vector<std::uint8_t> serialize_psm(const QuantModel& m) {
  const ModelConfig& c = m.config;
  if (c.norm_placement != NormPlacement::kPre || c.mask != MaskKind::kCausal || !c.head_norm) {
    // version 2 has no fields for an encoder's blocks: refuse rather than lose them
    throw std::runtime_error(
        "psm: config: expected pre-norm causal blocks with a final norm, found an encoder "
        "(post-norm, unmasked or without a final norm), which version 2 cannot store");
  }
  Writer body;
  write_meta(body, m);
  write_embeddings(body, m);
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    write_layer(body, m, l);
  }
  write_head(body, m);
  write_provenance(body, m);
  return frame(body, m.config);
}

void save_psm(const QuantModel& m, const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  const std::string name = path.string();
  std::error_code ec;
  if (name.empty()) {
    throw std::runtime_error("output path: expected a file name, found an empty string");
  }
  if (m.config.input_features > 0) {
    throw std::runtime_error(fmt::format(
        "{}: a model over {} input features cannot be saved as .psm (the format holds token "
        "models); quantise it from its source file on each run instead", name,
        m.config.input_features));
  }
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec)) {
    throw std::runtime_error(
        fmt::format("{}: exists and is not a regular file; not replaced", name));
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

}  // namespace passim
