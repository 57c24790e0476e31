// SPDX-License-Identifier: Apache-2.0
// The DRAM image and the vector-scratchpad regions of a compiled model.
#include "passim/compiler/layout.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/compiler/program.hpp"

namespace passim {

namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

/// Appends little-endian values to the DRAM image in 64-byte aligned regions.
class ImageWriter {
 public:
  explicit ImageWriter(std::vector<std::uint8_t>& img) : img_(img) {}
  template <typename T>
  std::uint64_t put(std::span<const T> v) {
    const std::uint64_t at = reserve(v.size_bytes());
    if (!v.empty()) {  // an empty span (a folded BatchNorm's gain) may have no data pointer
      std::memcpy(img_.data() + at, v.data(), v.size_bytes());
    }
    return at;
  }
  std::uint64_t put_rq(std::span<const Requant> rq) {
    std::vector<std::uint64_t> e(rq.size());
    std::transform(rq.begin(), rq.end(), e.begin(), encode_param);
    return put<std::uint64_t>(e);
  }
  /// W (n, k) row-major stored transposed as W^T (k, n), the weight scratchpad's layout.
  std::uint64_t put_transposed(std::span<const std::int8_t> w, std::size_t n, std::size_t k) {
    std::vector<std::int8_t> t(n * k);
    for (std::size_t o = 0; o < n; ++o) {
      for (std::size_t i = 0; i < k; ++i) {
        t[i * n + o] = w[o * k + i];
      }
    }
    return put<std::int8_t>(t);
  }
  /// The gain row and, if any, the bias row right after it (one DMA of one or two rows); a
  /// BatchNorm's step as a parameter entry.
  NormDram put_norm(const QuantNorm& n, NormKind kind, bool reads_residual = false) {
    std::vector<std::int16_t> rows(n.gain);
    rows.insert(rows.end(), n.bias.begin(), n.bias.end());
    NormDram d;
    d.rows = put<std::int16_t>(rows);
    if (kind == NormKind::kBatch || reads_residual) {
      d.rq = put_rq(std::vector<Requant>{n.rq});
    }
    if (reads_residual && !n.gain.empty()) {
      d.out_rq = put_rq(std::vector<Requant>{n.out_rq});
    }
    return d;
  }
  std::uint64_t reserve(std::uint64_t bytes) {
    const std::uint64_t at = (img_.size() + 63) / 64 * 64;
    img_.resize(at + bytes, 0);
    return at;
  }

 private:
  std::vector<std::uint8_t>& img_;
};

LayerDram put_layer(ImageWriter& w, const QuantLayer& L, const LayerDesc& ld, std::size_t dim) {
  const AttentionDesc& a = ld.attention;
  const std::size_t q = a.q_dim(), kv = a.kv_dim(), hidden = ld.ffn.hidden;
  const bool swiglu = ld.ffn.kind == FfnKind::kSwiGlu;
  LayerDram d;
  d.attn_norm = w.put_norm(L.attn_norm, a.norm.kind, a.norm.placement == NormPlacement::kPost);
  d.ffn_norm = w.put_norm(L.ffn_norm, ld.ffn.norm.kind,
                          ld.ffn.norm.placement == NormPlacement::kPost);
  d.wq = w.put_transposed(L.wq, q, dim);
  d.wk = w.put_transposed(L.wk, kv, dim);
  d.wv = w.put_transposed(L.wv, kv, dim);
  d.wo = w.put_transposed(L.wo, dim, q);
  d.w1 = w.put_transposed(L.w1, hidden, dim);
  if (swiglu) {
    d.w3 = w.put_transposed(L.w3, hidden, dim);
  }
  d.w2 = w.put_transposed(L.w2, dim, hidden);
  d.rq_q = w.put_rq(L.rq_q);
  d.rq_k = w.put_rq(L.rq_k);
  d.rq_v = w.put_rq(L.rq_v);
  d.rq_o = w.put_rq(L.rq_o);
  d.rq_1 = w.put_rq(L.rq_1);
  d.rq_3 = w.put_rq(L.rq_3);
  d.rq_2 = w.put_rq(L.rq_2);
  std::vector<Requant> attn;
  for (std::size_t h = 0; h < a.n_heads; ++h) {
    attn.push_back(L.score_rq[h]);
    attn.push_back(L.attn_out_rq[h]);
  }
  d.rq_attn = w.put_rq(attn);
  d.rq_act = swiglu ? w.put_rq(std::vector<Requant>{L.silu_in_rq, L.silu_out_rq})
                    : w.put_rq(std::vector<Requant>{L.gelu_in_rq, L.gelu_out_rq});
  d.rq_mul = w.put_rq(L.mul_rq);
  return d;
}

void put_model(ImageWriter& w, const QuantModel& m, const ModelDesc& desc, Layout& out) {
  const std::size_t dim = desc.dim;
  for (std::size_t l = 0; l < desc.layers.size(); ++l) {
    out.layers.push_back(put_layer(w, m.layers[l], desc.layers[l], dim));
  }
  ModelDram& d = out.dram;
  d.embedding = w.put<std::int8_t>(m.token_embedding);
  d.rq_embed = w.put_rq(m.embed_rq);
  if (desc.embedding.positions == PositionKind::kLearned) {
    d.pos_embedding = w.put<std::int8_t>(m.pos_embedding);
    d.rq_pos = w.put_rq(m.pos_rq);
  }
  d.final_norm = w.put_norm(m.final_norm, desc.head.norm, !desc.head.has_norm);
  d.cls = w.put_transposed(m.classifier(), desc.head.classes, dim);
  d.rq_cls = w.put_rq(m.rq_cls);
  const std::uint64_t eps = m.norm_eps;
  d.eps = w.put<std::uint64_t>(std::span(&eps, 1));
  d.rope_cos = w.put<std::int16_t>(m.rope_cos);
  d.rope_sin = w.put<std::int16_t>(m.rope_sin);
  const std::size_t hs = desc.layers.front().attention.head_size;
  std::vector<std::int8_t> eye(4 * hs * hs, 0);  // (2 hs, 2 hs)
  for (std::size_t i = 0; i < 2 * hs; ++i) {
    eye[i * 2 * hs + i] = 1;
  }
  d.attn_eye = w.put<std::int8_t>(eye);
  d.digit_rq = w.put_rq(
      std::vector<Requant>{{.mult = 1, .shift = 8}, {.mult = 32897, .shift = 31}});
  if (desc.embedding.features > 0) {
    d.input_proj = w.put_transposed(m.input_proj, dim, desc.embedding.features);
    d.rq_input = w.put_rq(m.rq_input);
  }
}

void reserve_activations(ImageWriter& w, const ModelDesc& desc, const hw::HwConfig& cfg,
                         Layout& out) {
  const AttentionDesc& a = desc.layers.front().attention;
  const std::size_t hidden = desc.layers.front().ffn.hidden;
  ModelDram& d = out.dram;
  d.xn = w.reserve(desc.dim);
  d.att = w.reserve(a.q_dim());
  d.hid = w.reserve(hidden);
  const std::uint64_t cache = desc.layers.size() * a.n_kv_heads * desc.embedding.max_positions *
                              a.head_size;
  d.k_cache = w.reserve(cache * 2);
  d.v_cache = w.reserve(cache);
  d.logits = w.reserve(desc.head.classes * 4);
  d.program = w.reserve(cfg.prog_depth * 16);
}

/// The widest weight tile that fits 1/`share` of the weight scratchpad and of the parameter
/// memory, a multiple of both C and L so that each tile lands word-aligned (0: none fits).
std::size_t columns_in(const ModelDesc& desc, const hw::HwConfig& cfg, std::size_t share) {
  const std::size_t step = std::lcm(cfg.array_cols, cfg.lanes);
  const AttentionDesc& a = desc.layers.front().attention;
  const std::size_t k_max = std::max({desc.dim, desc.layers.front().ffn.hidden, a.q_dim(),
                                      desc.embedding.features});
  return std::min<std::size_t>({cfg.weight_depth / share / k_max * cfg.array_cols,
                                cfg.param_depth / share, 2047}) / step * step;
}

/// The widest weight tile: as many output channels as fit the weight scratchpad and the
/// parameter memory.
std::size_t tile_columns(const ModelDesc& desc, const hw::HwConfig& cfg) {
  const std::size_t step = std::lcm(cfg.array_cols, cfg.lanes);
  const AttentionDesc& a = desc.layers.front().attention;
  const std::size_t k_max = std::max({desc.dim, desc.layers.front().ffn.hidden, a.q_dim()});
  const std::size_t cols = columns_in(desc, cfg, 1);
  if (cols == 0) {
    throw std::runtime_error(fmt::format(
        "config {}: weight scratchpad of {} words x {} cannot hold one {}-deep tile of {} "
        "columns", cfg.name, cfg.weight_depth, cfg.array_cols, k_max, step));
  }
  if (ceil_div(k_max, cfg.array_rows) > cfg.input_depth) {
    throw std::runtime_error(fmt::format("config {}: input scratchpad of {} words cannot hold "
                                         "a row of {}", cfg.name, cfg.input_depth, k_max));
  }
  // The q, k and v projections may run one head per tile: dim deep, head_size wide.
  const std::size_t head_words = desc.dim * ceil_div(a.head_size, cfg.array_cols);
  if (head_words > cfg.weight_depth || a.head_size > cfg.param_depth) {
    throw std::runtime_error(fmt::format(
        "config {}: weight scratchpad of {} words x {} cannot hold one head's {}-deep tile of "
        "{} columns ({} words)", cfg.name, cfg.weight_depth, cfg.array_cols, desc.dim,
        a.head_size, head_words));
  }
  // The attention block loads every head's two steps at once (compiler.cpp, attend()).
  if (2 * a.n_heads > cfg.param_depth) {
    throw std::runtime_error(fmt::format(
        "config {}: parameter memory of {} entries cannot hold the {} attention steps of {} "
        "heads", cfg.name, cfg.param_depth, 2 * a.n_heads, a.n_heads));
  }
  return cols;
}

/// The fixed vector-scratchpad regions for `rows` positions; returns the words they take.
std::size_t plan_fixed_regions(const ModelDesc& desc, const hw::HwConfig& cfg,
                               std::size_t chunk_cols, std::size_t rows, VectorLayout& v) {
  const AttentionDesc& a = desc.layers.front().attention;
  const FfnDesc& f = desc.layers.front().ffn;
  auto words = [&](std::size_t n) { return ceil_div(n, cfg.lanes); };
  std::size_t at = 0;
  auto take = [&](std::size_t n) {
    const std::size_t region = at;
    at += n;
    return region;
  };
  const bool bias_row = a.norm.kind != NormKind::kRms;  // LayerNorm, BatchNorm: gain and bias
  const bool swiglu = f.kind == FfnKind::kSwiGlu;      // GELU runs in place on hid
  const std::size_t wh = words(a.head_size);
  v.rows = rows;
  v.x = take(rows * words(desc.dim));
  v.xn = take(rows * words(desc.dim));
  v.gain = take((bias_row ? 2 : 1) * words(desc.dim));
  v.q = take(rows * a.n_heads * wh);
  v.k_new = take(rows * a.n_kv_heads * wh);
  v.v_new = take(rows * a.n_kv_heads * wh);
  v.rope = take(a.rope ? 2 * words(a.head_size / 2) : 0);
  v.att = take(rows * a.n_heads * wh);
  v.branch = take(rows * words(desc.dim));
  v.gate = take(swiglu ? rows * words(f.hidden) : 0);
  v.up = take(swiglu ? rows * words(f.hidden) : 0);
  v.hid = take(rows * words(f.hidden));
  v.logits = take(words(chunk_cols));
  return at;
}

/// The KV window of `t` positions from word `at` on, if it fits the scratchpad.
bool place_kv_window(const ModelDesc& desc, const hw::HwConfig& cfg, std::size_t at,
                     std::size_t t, VectorLayout& v) {
  auto words = [&](std::size_t n) { return ceil_div(n, cfg.lanes); };
  const std::size_t hw_words = words(desc.layers.front().attention.head_size);
  if (t == 0 || at + 2 * t * hw_words + 2 * words(t) > cfg.vector_depth) {
    return false;
  }
  v.k_win = at;
  v.v_win = at + t * hw_words;
  v.scores = at + 2 * t * hw_words;
  v.probs = v.scores + words(t);
  return true;
}

/// The longest KV window one position at a time leaves room for.
void plan_kv_window(const ModelDesc& desc, const hw::HwConfig& cfg, std::size_t at,
                    Layout& out) {
  if (at >= cfg.vector_depth) {
    throw std::runtime_error(fmt::format("config {}: vector scratchpad of {} words cannot "
                                         "hold the activations ({} words)", cfg.name,
                                         cfg.vector_depth, at));
  }
  const std::size_t hw_words = ceil_div(desc.layers.front().attention.head_size, cfg.lanes);
  std::size_t t = std::min(desc.embedding.max_positions, (cfg.vector_depth - at) / (2 * hw_words));
  while (t > 0 && !place_kv_window(desc, cfg, at, t, out.vec)) {
    --t;
  }
  if (t == 0) {
    throw std::runtime_error(fmt::format("config {}: no room for a KV window", cfg.name));
  }
  out.max_positions = int(t);
}

/// The most rows of one whole-sequence pass: MATMUL's m (the accumulator depth), the rows of
/// the widest matmul input in the input scratchpad, one parameter entry per row (EMBED).
std::size_t max_sequence_rows(const ModelDesc& desc, const hw::HwConfig& cfg) {
  const AttentionDesc& a = desc.layers.front().attention;
  const std::size_t k_max = std::max({desc.dim, desc.layers.front().ffn.hidden, a.q_dim()});
  return std::min({std::size_t(cfg.acc_depth), cfg.input_depth / ceil_div(k_max, cfg.array_rows),
                   std::size_t(cfg.param_depth), desc.embedding.max_positions,
                   std::size_t{1023}});
}

void reserve_sequence(ImageWriter& w, const ModelDesc& desc, const hw::HwConfig& cfg,
                      Layout& out) {
  const std::size_t rows = out.max_rows, hs = desc.layers.front().attention.head_size;
  const std::size_t t = desc.embedding.max_positions;
  ModelDram& d = out.dram;
  d.seq_xn = w.reserve(rows * desc.dim);
  d.seq_att = w.reserve(rows * desc.layers.front().attention.q_dim());
  d.seq_hid = w.reserve(rows * desc.layers.front().ffn.hidden);
  d.key_digits = w.reserve(t * 2 * hs);
  d.key_t = w.reserve(2 * hs * t);
  d.query_digits = w.reserve(rows * desc.layers.front().attention.n_heads * 3 *
                             key_group_bytes(hs, cfg));  // zero where never written
  d.prob_digits = w.reserve(rows * 2 * prob_group_bytes(t, cfg));
  d.zeros = w.reserve(std::max(t, hs));
  if (desc.embedding.features > 0) {
    d.features = w.reserve(t * desc.embedding.features);
  }
  if (unmasked(desc)) {
    d.seq_x = w.reserve(t * desc.dim * 2);
  }
  d.bytes = out.image.size();
  out.image.resize(std::size_t(d.logits));
}

}  // namespace

std::size_t key_group_bytes(std::size_t head_size, const hw::HwConfig& cfg) {
  return ceil_div(2 * head_size, cfg.array_rows) * cfg.array_rows;
}

std::size_t prob_group_bytes(std::size_t t_len, const hw::HwConfig& cfg) {
  return ceil_div(2 * t_len, cfg.array_rows) * cfg.array_rows;
}

std::size_t double_buffered_columns(const ModelDesc& desc, const hw::HwConfig& cfg) {
  return columns_in(desc, cfg, 2);
}

Layout plan_layout(const QuantModel& model, const ModelDesc& desc, const hw::HwConfig& cfg) {
  Layout out;
  ImageWriter w(out.image);
  put_model(w, model, desc, out);
  reserve_activations(w, desc, cfg, out);
  out.chunk_cols = tile_columns(desc, cfg);
  out.max_rows = max_sequence_rows(desc, cfg);
  reserve_sequence(w, desc, cfg, out);
  plan_kv_window(desc, cfg, plan_fixed_regions(desc, cfg, out.chunk_cols, 1, out.vec), out);
  if (out.dram.bytes > (std::uint64_t{1} << 32)) {
    throw std::runtime_error(fmt::format("compiler: model needs {} bytes of DRAM, more than "
                                         "the 32-bit DMA address reaches", out.dram.bytes));
  }
  return out;
}

bool plan_rows(const ModelDesc& desc, const hw::HwConfig& cfg, const Layout& layout,
               std::size_t rows, std::size_t t_len, VectorLayout& out) {
  if (rows == 0 || rows > layout.max_rows) {
    return false;
  }
  const std::size_t at = plan_fixed_regions(desc, cfg, layout.chunk_cols, rows, out);
  return place_kv_window(desc, cfg, at, t_len, out);
}

DmaMoves dma_moves(const ModelDram& d, const hw::Instr& in) {
  namespace f = hw::fields;
  const auto op = static_cast<hw::Opcode>(hw::get_field(in, f::kOpcode));
  if (op != hw::Opcode::kDmaLoad && op != hw::Opcode::kDmaStore) {
    return DmaMoves::kNone;
  }
  const std::uint64_t addr = hw::get_field(in, f::dma_load::kDramAddr);  // DMA_STORE: same field
  if (addr < d.xn) {
    return DmaMoves::kWeights;
  }
  if (addr >= d.k_cache && addr < d.logits) {  // k_cache, then v_cache, end at logits
    return DmaMoves::kKvCache;
  }
  return DmaMoves::kActivations;
}

}  // namespace passim
