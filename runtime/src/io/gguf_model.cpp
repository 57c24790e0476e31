// SPDX-License-Identifier: Apache-2.0
// A llama GGUF file as the runtime's float model and tokenizer.
#include "passim/io/gguf_model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>

#include "passim/io/file.hpp"
#include "passim/model/config.hpp"

namespace passim {

namespace {

constexpr double kRopeBase = 10000.0;  // float_model.cpp and the quantiser's RoPE tables
constexpr float kRmsNormEps = 1e-5f;   // float_model.cpp and quantize.cpp
constexpr int kByteTokenOffset = 3;    // <0xNN> has id NN + 3 (Tokenizer::encode)
constexpr std::uint64_t kGgufByteTokenType = 6;
constexpr const char* kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's space

[[noreturn]] void fail(const GgufFile& f, std::string_view field, std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}: {}", f.source(), field, what));
}

std::string key_field(std::string_view key) { return fmt::format("metadata '{}'", key); }

/// A positive integer key, at most `max`.
int int_key(const GgufFile& f, std::string_view key, int max) {
  const std::uint64_t v = f.get_uint(key);
  if (v < 1 || v > std::uint64_t(max)) {
    fail(f, key_field(key), fmt::format("expected 1..{}, found {}", max, v));
  }
  return static_cast<int>(v);
}

/// Rejects the llama variants that the runtime does not compute.
void check_supported_features(const GgufFile& f, const ModelConfig& c) {
  if (f.find("llama.rope.dimension_count") != nullptr &&
      f.get_uint("llama.rope.dimension_count") != c.head_size()) {
    fail(f, key_field("llama.rope.dimension_count"),
         fmt::format("expected {} (the head size; RoPE over part of a head is not supported), "
                     "found {}",
                     c.head_size(), f.get_uint("llama.rope.dimension_count")));
  }
  if (f.find("llama.rope.freq_base") != nullptr &&
      f.get_float("llama.rope.freq_base") != kRopeBase) {
    fail(f, key_field("llama.rope.freq_base"),
         fmt::format("expected {} (the runtime's RoPE base), found {}", kRopeBase,
                     f.get_float("llama.rope.freq_base")));
  }
  if (f.find("llama.rope.scaling.type") != nullptr &&
      f.get_string("llama.rope.scaling.type") != "none") {
    fail(f, key_field("llama.rope.scaling.type"),
         fmt::format("expected \"none\" (RoPE scaling is not supported), found \"{}\"",
                     f.get_string("llama.rope.scaling.type")));
  }
  const char* eps_key = "llama.attention.layer_norm_rms_epsilon";
  if (f.find(eps_key) != nullptr && static_cast<float>(f.get_float(eps_key)) != kRmsNormEps) {
    fail(f, key_field(eps_key),
         fmt::format("expected {} (the runtime's RMSNorm epsilon), found {}", kRmsNormEps,
                     static_cast<float>(f.get_float(eps_key))));
  }
  if (f.find("llama.expert_count") != nullptr && f.get_uint("llama.expert_count") != 0) {
    fail(f, key_field("llama.expert_count"),
         fmt::format("expected 0 (mixture of experts is not supported), found {}",
                     f.get_uint("llama.expert_count")));
  }
}

/// The vocabulary size: the rows of `token_embd.weight`, which must be a (vocab, `dim`)
/// matrix with `min_vocab`..kMaxVocab rows.
int vocab_from_embedding(const GgufFile& f, int dim, int min_vocab) {
  const GgufTensorInfo* embd = f.find_tensor("token_embd.weight");
  if (embd == nullptr) {
    fail(f, "tensor 'token_embd.weight'", "expected this tensor, found it missing");
  }
  if (embd->dims.size() != 2 || embd->dims[0] != std::uint64_t(dim) ||
      embd->dims[1] < std::uint64_t(min_vocab) || embd->dims[1] > std::uint64_t(kMaxVocab)) {
    fail(f, "tensor 'token_embd.weight' dims",
         fmt::format("expected [{}, vocab_size {}..{}], found [{}]", dim, min_vocab, kMaxVocab,
                     fmt::join(embd->dims, ", ")));
  }
  return static_cast<int>(embd->dims[1]);
}

/// `tokenizer.ggml.bos_token_id`, which must be an id below `vocab_size`.
int bos_token_id(const GgufFile& f, int vocab_size) {
  const std::uint64_t bos = f.get_uint("tokenizer.ggml.bos_token_id");
  if (bos >= std::uint64_t(vocab_size)) {
    fail(f, key_field("tokenizer.ggml.bos_token_id"),
         fmt::format("expected 0..{}, found {}", vocab_size - 1, bos));
  }
  return static_cast<int>(bos);
}

/// Throws naming the first tensor of the file that is not in `names`; `model` says which
/// model's tensors those are ("2-block llama model").
void check_only_tensors(const GgufFile& f, const std::set<std::string>& names,
                        const std::string& model) {
  for (const GgufTensorInfo& t : f.tensors()) {
    if (names.count(t.name) == 0) {
      fail(f, fmt::format("tensor '{}'", t.name),
           fmt::format("expected only the tensors of a {}, found this one (not supported)", model));
    }
  }
}

/// Appends the tensor `name` (dims as in the file: innermost first) to `out` as float32,
/// checking its presence, shape and that every value is finite.
void append_tensor(const GgufFile& f, const std::string& name,
                   const std::vector<std::uint64_t>& dims, std::vector<float>& out) {
  const GgufTensorInfo* t = f.find_tensor(name);
  if (t == nullptr) {
    fail(f, fmt::format("tensor '{}'", name), "expected this tensor, found it missing");
  }
  if (t->dims != dims) {
    fail(f, fmt::format("tensor '{}' dims", name),
         fmt::format("expected [{}], found [{}]", fmt::join(dims, ", "), fmt::join(t->dims, ", ")));
  }
  const std::vector<float> values = f.tensor_f32(*t);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      fail(f, fmt::format("tensor '{}' element {}", name, i),
           fmt::format("expected a finite float, found {}", values[i]));
    }
  }
  out.insert(out.end(), values.begin(), values.end());
}

// ---- llama ----------------------------------------------------------------------------------

/// The head counts of a llama config: head_count divides embedding_length, head_count_kv
/// divides head_count, and the head size is even (RoPE rotates pairs).
void check_llama_heads(const GgufFile& f, const ModelConfig& c) {
  // head_count must divide embedding_length and head_count_kv must divide head_count: name
  // head_count when it breaks both rules, else both keys of the rule broken.
  const bool heads_fit_dim = c.dim % c.n_heads == 0;
  const bool kv_fit_heads = c.n_kv_heads <= c.n_heads && c.n_heads % c.n_kv_heads == 0;
  if (!heads_fit_dim && !kv_fit_heads) {
    fail(f, key_field("llama.attention.head_count"),
         fmt::format("expected a divisor of llama.embedding_length = {} and a multiple of "
                     "llama.attention.head_count_kv = {}, found {}",
                     c.dim, c.n_kv_heads, c.n_heads));
  }
  if (!heads_fit_dim) {
    fail(f, "metadata 'llama.embedding_length' and 'llama.attention.head_count'",
         fmt::format("expected llama.attention.head_count to divide llama.embedding_length, "
                     "found llama.embedding_length = {}, llama.attention.head_count = {}",
                     c.dim, c.n_heads));
  }
  if (!kv_fit_heads) {
    fail(f, "metadata 'llama.attention.head_count' and 'llama.attention.head_count_kv'",
         fmt::format("expected llama.attention.head_count_kv to divide "
                     "llama.attention.head_count, found llama.attention.head_count = {}, "
                     "llama.attention.head_count_kv = {}",
                     c.n_heads, c.n_kv_heads));
  }
  if ((c.dim / c.n_heads) % 2 != 0) {
    fail(f, "head size llama.embedding_length / llama.attention.head_count",
         fmt::format("expected an even number for RoPE, found {} / {} = {}", c.dim, c.n_heads,
                     c.dim / c.n_heads));
  }
}

/// Config from the llama.* keys; vocab_size from the rows of `token_embd.weight`.
ModelConfig read_config(const GgufFile& f) {
  if (const std::string& arch = f.get_string("general.architecture"); arch != "llama") {
    fail(f, key_field("general.architecture"),
         fmt::format("expected \"llama\" or \"passim-gpt\", found \"{}\"", arch));
  }
  ModelConfig c;
  c.dim = int_key(f, "llama.embedding_length", kMaxDim);
  c.hidden_dim = int_key(f, "llama.feed_forward_length", kMaxHidden);
  c.n_layers = int_key(f, "llama.block_count", kMaxLayers);
  c.n_heads = int_key(f, "llama.attention.head_count", c.dim);
  c.n_kv_heads = f.find("llama.attention.head_count_kv") != nullptr
                     ? int_key(f, "llama.attention.head_count_kv", c.dim)
                     : c.n_heads;
  c.seq_len = int_key(f, "llama.context_length", kMaxSeqLen);
  check_llama_heads(f, c);
  c.vocab_size = vocab_from_embedding(f, c.dim, 1);
  if (f.find("llama.vocab_size") != nullptr &&
      f.get_uint("llama.vocab_size") != std::uint64_t(c.vocab_size)) {
    fail(f, key_field("llama.vocab_size"),
         fmt::format("expected {} (the rows of token_embd.weight), found {}", c.vocab_size,
                     f.get_uint("llama.vocab_size")));
  }
  check_supported_features(f, c);
  validate_config(c, f.source());  // cannot fail after the checks above; kept as the guard
  return c;
}

std::string block_tensor(int layer, const char* what) {
  return fmt::format("blk.{}.{}.weight", layer, what);
}

/// Every tensor name a llama model with `c` uses (output.weight included: it is optional).
std::set<std::string> llama_tensor_names(const ModelConfig& c) {
  std::set<std::string> names = {"token_embd.weight", "output_norm.weight", "output.weight"};
  for (int l = 0; l < c.n_layers; ++l) {
    for (const char* what : {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm",
                             "ffn_gate", "ffn_down", "ffn_up"}) {
      names.insert(block_tensor(l, what));
    }
  }
  return names;
}

/// The llama tensors (F32 or F16, finite, with the shapes `c` implies) into `w`. GGUF dims
/// are (in, out): a row-major (out, in) matrix, as llama2.c stores it. An `output.weight`
/// bit-identical to the embedding is dropped (a shared classifier, like the llama2.c file).
void read_llama_weights(const GgufFile& f, const ModelConfig& c, FloatWeights& w) {
  const std::uint64_t dim = std::uint64_t(c.dim), hidden = std::uint64_t(c.hidden_dim);
  const std::uint64_t kv = c.kv_dim(), vocab = std::uint64_t(c.vocab_size);
  append_tensor(f, "token_embd.weight", {dim, vocab}, w.token_embedding);
  const struct {
    const char* name;
    std::vector<std::uint64_t> dims;
    std::vector<float>* out;
  } per_layer[] = {
      {"attn_norm", {dim}, &w.rms_att},   {"attn_q", {dim, dim}, &w.wq},
      {"attn_k", {dim, kv}, &w.wk},       {"attn_v", {dim, kv}, &w.wv},
      {"attn_output", {dim, dim}, &w.wo}, {"ffn_norm", {dim}, &w.rms_ffn},
      {"ffn_gate", {dim, hidden}, &w.w1}, {"ffn_down", {hidden, dim}, &w.w2},
      {"ffn_up", {dim, hidden}, &w.w3},
  };
  for (const auto& t : per_layer) {
    for (int l = 0; l < c.n_layers; ++l) {
      append_tensor(f, block_tensor(l, t.name), t.dims, *t.out);
    }
  }
  append_tensor(f, "output_norm.weight", {dim}, w.rms_final);
  if (f.find_tensor("output.weight") != nullptr) {
    append_tensor(f, "output.weight", {dim, vocab}, w.wcls);
    const bool same =
        std::memcmp(w.wcls.data(), w.token_embedding.data(), w.wcls.size() * sizeof(float)) == 0;
    if (same) {
      w.wcls.clear();  // a copy of the embedding: shared, like the llama2.c file
      w.wcls.shrink_to_fit();
    }
  }
}

// ---- passim-gpt -----------------------------------------------------------------------------

constexpr const char* kGptArch = "passim-gpt";

/// `passim-gpt.norm`: "layernorm" or "batchnorm".
NormKind read_gpt_norm(const GgufFile& f) {
  const std::string& norm = f.get_string("passim-gpt.norm");
  if (norm == "layernorm") {
    return NormKind::kLayer;
  }
  if (norm == "batchnorm") {
    return NormKind::kBatch;
  }
  fail(f, key_field("passim-gpt.norm"),
       fmt::format("expected \"layernorm\" or \"batchnorm\", found \"{}\"", norm));
}

/// Config from the passim-gpt.* keys (models/export_gguf.py writes them).
ModelConfig read_gpt_config(const GgufFile& f) {
  ModelConfig c;
  c.arch = Arch::kGpt;
  c.dim = int_key(f, "passim-gpt.embedding_length", kMaxDim);
  c.hidden_dim = int_key(f, "passim-gpt.feed_forward_length", kMaxHidden);
  c.n_layers = int_key(f, "passim-gpt.block_count", kMaxLayers);
  c.n_heads = int_key(f, "passim-gpt.attention.head_count", c.dim);
  c.n_kv_heads = c.n_heads;
  if (f.find("passim-gpt.attention.head_count_kv") != nullptr &&
      f.get_uint("passim-gpt.attention.head_count_kv") != std::uint64_t(c.n_heads)) {
    fail(f, key_field("passim-gpt.attention.head_count_kv"),
         fmt::format("expected {} (passim-gpt.attention.head_count: GPT blocks have no GQA), "
                     "found {}",
                     c.n_heads, f.get_uint("passim-gpt.attention.head_count_kv")));
  }
  c.seq_len = int_key(f, "passim-gpt.context_length", kMaxSeqLen);
  if (c.dim % c.n_heads != 0) {
    fail(f, key_field("passim-gpt.embedding_length"),
         fmt::format("expected a multiple of passim-gpt.attention.head_count = {}, found {}",
                     c.n_heads, c.dim));
  }
  c.norm = read_gpt_norm(f);
  if (f.find("passim-gpt.activation") != nullptr &&
      f.get_string("passim-gpt.activation") != "gelu") {
    fail(f, key_field("passim-gpt.activation"),
         fmt::format("expected \"gelu\", found \"{}\"", f.get_string("passim-gpt.activation")));
  }
  const double eps = f.get_float("passim-gpt.norm_epsilon");
  if (!(eps > 0.0 && eps < 1.0)) {
    fail(f, key_field("passim-gpt.norm_epsilon"), fmt::format("expected in (0, 1), found {}", eps));
  }
  c.norm_eps = static_cast<float>(eps);
  c.vocab_size = vocab_from_embedding(f, c.dim, 2);
  c.bos_token = bos_token_id(f, c.vocab_size);
  c.bos_ends_text = false;  // a character model's BOS is an ordinary character (newline)
  validate_config(c, f.source());
  return c;
}

/// Every tensor name a GPT model with `c` uses: weights and biases of the projections and
/// norms (and the norms' running statistics under BatchNorm).
std::set<std::string> gpt_tensor_names(const ModelConfig& c) {
  std::set<std::string> names = {"token_embd.weight", "position_embd.weight"};
  auto norm_names = [&](const std::string& prefix) {
    names.insert(prefix + ".weight");
    names.insert(prefix + ".bias");
    if (c.norm == NormKind::kBatch) {
      names.insert(prefix + ".running_mean");
      names.insert(prefix + ".running_var");
    }
  };
  for (int l = 0; l < c.n_layers; ++l) {
    for (const char* what : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_up", "ffn_down"}) {
      names.insert(fmt::format("blk.{}.{}.weight", l, what));
      names.insert(fmt::format("blk.{}.{}.bias", l, what));
    }
    norm_names(fmt::format("blk.{}.attn_norm", l));
    norm_names(fmt::format("blk.{}.ffn_norm", l));
  }
  norm_names("output_norm");
  return names;
}

/// The GPT tensors (F32 or F16, finite, with the shapes `c` implies) into `w`.
void read_gpt_weights(const GgufFile& f, const ModelConfig& c, FloatWeights& w) {
  const std::uint64_t dim = std::uint64_t(c.dim), hidden = std::uint64_t(c.hidden_dim);
  const std::uint64_t vocab = std::uint64_t(c.vocab_size), seq = std::uint64_t(c.seq_len);
  append_tensor(f, "token_embd.weight", {dim, vocab}, w.token_embedding);
  append_tensor(f, "position_embd.weight", {dim, seq}, w.pos_embedding);
  struct Entry {
    std::string name;
    std::vector<std::uint64_t> dims;
    std::vector<float>* out;
  };
  std::vector<Entry> per_layer = {
      {"attn_norm.weight", {dim}, &w.rms_att},   {"attn_norm.bias", {dim}, &w.att_norm_bias},
      {"attn_q.weight", {dim, dim}, &w.wq},      {"attn_q.bias", {dim}, &w.bq},
      {"attn_k.weight", {dim, dim}, &w.wk},      {"attn_k.bias", {dim}, &w.bk},
      {"attn_v.weight", {dim, dim}, &w.wv},      {"attn_v.bias", {dim}, &w.bv},
      {"attn_output.weight", {dim, dim}, &w.wo}, {"attn_output.bias", {dim}, &w.bo},
      {"ffn_norm.weight", {dim}, &w.rms_ffn},    {"ffn_norm.bias", {dim}, &w.ffn_norm_bias},
      {"ffn_up.weight", {dim, hidden}, &w.w1},   {"ffn_up.bias", {hidden}, &w.b1},
      {"ffn_down.weight", {hidden, dim}, &w.w2}, {"ffn_down.bias", {dim}, &w.b2},
  };
  if (c.norm == NormKind::kBatch) {
    per_layer.push_back({"attn_norm.running_mean", {dim}, &w.att_norm_mean});
    per_layer.push_back({"attn_norm.running_var", {dim}, &w.att_norm_var});
    per_layer.push_back({"ffn_norm.running_mean", {dim}, &w.ffn_norm_mean});
    per_layer.push_back({"ffn_norm.running_var", {dim}, &w.ffn_norm_var});
  }
  for (const auto& t : per_layer) {
    for (int l = 0; l < c.n_layers; ++l) {
      append_tensor(f, fmt::format("blk.{}.{}", l, t.name), t.dims, *t.out);
    }
  }
  append_tensor(f, "output_norm.weight", {dim}, w.rms_final);
  append_tensor(f, "output_norm.bias", {dim}, w.final_norm_bias);
  if (c.norm == NormKind::kBatch) {
    append_tensor(f, "output_norm.running_mean", {dim}, w.final_norm_mean);
    append_tensor(f, "output_norm.running_var", {dim}, w.final_norm_var);
  }
}

/// Throws naming the tensor and element of the first negative BatchNorm running variance.
void check_variances(const GgufFile& f, const FloatWeights& w, std::size_t dim) {
  const std::pair<const std::vector<float>*, const char*> vars[] = {
      {&w.att_norm_var, "attn_norm"}, {&w.ffn_norm_var, "ffn_norm"}, {&w.final_norm_var, ""}};
  for (const auto& [var, what] : vars) {
    for (std::size_t i = 0; i < var->size(); ++i) {
      if ((*var)[i] < 0.0f) {
        const std::string tensor = *what == '\0'
                                       ? std::string("output_norm.running_var")
                                       : fmt::format("blk.{}.{}.running_var", i / dim, what);
        fail(f, fmt::format("tensor '{}' element {}", tensor, i % dim),
             fmt::format("expected a variance >= 0, found {}", (*var)[i]));
      }
    }
  }
}

/// The float model of a llama file, without its source and hash.
FloatModel llama_model_from_gguf(const GgufFile& f) {
  FloatModel m;
  m.config = read_config(f);
  check_only_tensors(f, llama_tensor_names(m.config),
                     fmt::format("{}-block llama model", m.config.n_layers));
  read_llama_weights(f, m.config, m.weights);
  m.config.shared_classifier = m.weights.wcls.empty();
  return m;
}

/// The float model of a passim-gpt file, without its source and hash.
FloatModel gpt_model_from_gguf(const GgufFile& f) {
  FloatModel m;
  m.config = read_gpt_config(f);
  const ModelConfig& c = m.config;
  check_only_tensors(f, gpt_tensor_names(c),
                     fmt::format("{}-block {} GPT model", c.n_layers, norm_name(c.norm)));
  read_gpt_weights(f, c, m.weights);
  if (c.norm == NormKind::kBatch) {
    check_variances(f, m.weights, std::size_t(c.dim));
  }
  m.config.shared_classifier = true;
  return m;
}

}  // namespace

FloatModel float_model_from_gguf(const GgufFile& f) {
  const bool gpt =
      f.find("general.architecture") != nullptr && f.get_string("general.architecture") == kGptArch;
  FloatModel m = gpt ? gpt_model_from_gguf(f) : llama_model_from_gguf(f);
  m.source = f.source();
  m.sha256 = sha256_hex(f.bytes());
  return m;
}

namespace {

/// The runtime's fixed tokenizer conventions: BOS 1, EOS 2, the dummy-prefix space.
void check_special_tokens(const GgufFile& f) {
  for (const auto& [key, id] :
       {std::pair<const char*, int>{"tokenizer.ggml.bos_token_id", kBosToken},
        {"tokenizer.ggml.eos_token_id", kEosToken}}) {
    if (f.find(key) != nullptr && f.get_uint(key) != std::uint64_t(id)) {
      fail(f, key_field(key),
           fmt::format("expected {} (the runtime's id, as in run.c), found {}", id,
                       f.get_uint(key)));
    }
  }
  if (f.find("tokenizer.ggml.add_space_prefix") != nullptr &&
      !f.get_bool("tokenizer.ggml.add_space_prefix")) {
    fail(f, key_field("tokenizer.ggml.add_space_prefix"),
         "expected true (the encoder always adds the dummy-prefix space, as run.c), found false");
  }
}

/// Byte fallback: the encoder maps byte b to id b + 3, so ids 3..258 must be "<0x00>".."<0xFF>"
/// (of type byte when `types` is given).
void check_byte_pieces(const GgufFile& f, const std::vector<std::string>& tokens,
                       const std::vector<std::int64_t>& types) {
  for (std::size_t id = kByteTokenOffset; id < std::min<std::size_t>(tokens.size(), 256 + 3);
       ++id) {
    const std::string want = fmt::format("<0x{:02X}>", id - kByteTokenOffset);
    if (tokens[id] != want) {
      fail(f, fmt::format("metadata 'tokenizer.ggml.tokens' element {}", id),
           fmt::format("expected \"{}\" (byte-fallback pieces have id byte + 3), found \"{}\"",
                       want, tokens[id]));
    }
    if (!types.empty() && types[id] != std::int64_t(kGgufByteTokenType)) {
      fail(f, fmt::format("metadata 'tokenizer.ggml.token_type' element {}", id),
           fmt::format("expected {} (byte), found {}", kGgufByteTokenType, types[id]));
    }
  }
}

/// A SentencePiece token as llama2.c's tokenizer export writes it: U+2581 becomes a space,
/// and BOS and EOS are wrapped in newlines ("\n<s>\n", "\n</s>\n").
std::string llama2c_piece(const std::string& token, std::size_t id) {
  std::string piece;
  for (std::size_t i = 0; i < token.size();) {
    if (token.compare(i, 3, kSpaceMarker) == 0) {
      piece += ' ';
      i += 3;
    } else {
      piece += token[i++];
    }
  }
  if (id == std::size_t(kBosToken) || id == std::size_t(kEosToken)) {
    piece = "\n" + piece + "\n";
  }
  return piece;
}

/// Throws naming `key` unless its array has `size` == `vocab_size` entries.
void check_entries(const GgufFile& f, const char* key, std::size_t size, std::size_t vocab_size) {
  if (size != vocab_size) {
    fail(f, key_field(key),
         fmt::format("expected {} entries (the model's vocab_size), found {}", vocab_size, size));
  }
}

/// Every merge score is finite: a NaN would silently change every merge decision.
void check_scores(const GgufFile& f, const std::vector<float>& scores) {
  for (std::size_t id = 0; id < scores.size(); ++id) {
    if (!std::isfinite(scores[id])) {
      fail(f, fmt::format("metadata 'tokenizer.ggml.scores' element {}", id),
           fmt::format("expected a finite float (the merge score of token {}), found {}", id,
                       scores[id]));
    }
  }
}

/// A `passim-char` vocabulary: one character per token and a BOS id.
Tokenizer char_tokenizer_from_gguf(const GgufFile& f, int vocab_size) {
  const auto& chars = f.get_string_array("tokenizer.ggml.tokens");
  check_entries(f, "tokenizer.ggml.tokens", chars.size(), std::size_t(vocab_size));
  return Tokenizer::char_level(chars, bos_token_id(f, vocab_size), f.source());
}

/// A `llama` (SentencePiece) vocabulary, converted as llama2.c's tokenizer export does it.
Tokenizer llama_tokenizer_from_gguf(const GgufFile& f, int vocab_size) {
  if (vocab_size < 3 || vocab_size > kMaxVocab) {
    throw std::runtime_error(
        fmt::format("{}: vocab_size: expected 3..{}, found {}", f.source(), kMaxVocab, vocab_size));
  }
  if (const std::string& model = f.get_string("tokenizer.ggml.model"); model != "llama") {
    fail(f, key_field("tokenizer.ggml.model"),
         fmt::format("expected \"llama\" (SentencePiece pieces with scores), found \"{}\"", model));
  }
  const auto& tokens = f.get_string_array("tokenizer.ggml.tokens");
  std::vector<float> scores = f.get_f32_array("tokenizer.ggml.scores");
  std::vector<std::int64_t> types;
  if (f.find("tokenizer.ggml.token_type") != nullptr) {
    types = f.get_int_array("tokenizer.ggml.token_type");
  }
  const std::size_t vocab = std::size_t(vocab_size);
  check_entries(f, "tokenizer.ggml.tokens", tokens.size(), vocab);
  check_entries(f, "tokenizer.ggml.scores", scores.size(), vocab);
  if (!types.empty()) {
    check_entries(f, "tokenizer.ggml.token_type", types.size(), vocab);
  }
  check_scores(f, scores);
  check_special_tokens(f);
  check_byte_pieces(f, tokens, types);
  std::vector<std::string> pieces;
  pieces.reserve(vocab);
  for (std::size_t id = 0; id < vocab; ++id) {
    pieces.push_back(llama2c_piece(tokens[id], id));
  }
  return Tokenizer(std::move(pieces), std::move(scores));
}

}  // namespace

Tokenizer tokenizer_from_gguf(const GgufFile& f, int vocab_size) {
  if (vocab_size >= 2 && vocab_size <= kMaxVocab && f.find("tokenizer.ggml.model") != nullptr &&
      f.get_string("tokenizer.ggml.model") == "passim-char") {
    return char_tokenizer_from_gguf(f, vocab_size);
  }
  return llama_tokenizer_from_gguf(f, vocab_size);
}

}  // namespace passim
