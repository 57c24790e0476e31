// SPDX-License-Identifier: Apache-2.0
// Lowering of a quantised Llama-style model to accelerator programs (docs/isa.md).
//
// One decoding step, per layer (every arrow through DRAM is a DMA):
//   RMSNORM x -> xn -> DRAM -> input scratchpad -> MATMUL per head (q, k, v)
//   ROPE q, k -> k, v rows to the DRAM KV cache
//   per head: KV window -> vector scratchpad, ATTN_SCORE, SOFTMAX, ATTN_VALUE -> DRAM
//   MATMUL wo -> ADD; RMSNORM -> MATMUL w1, w3 -> SILU, MUL -> DRAM -> MATMUL w2 -> ADD
// then the final RMSNORM and the classifier, whose int32 logits go to DRAM.
#include "passim/compiler/compiler.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace passim {

namespace f = hw::fields;
using hw::Opcode;

namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

/// A Requant step as a parameter-memory entry (docs/isa.md): mult [31:0], shift [37:32] and
/// the signed bias in two's complement in [63:38].
std::uint64_t param_entry(Requant rq) {
  const std::uint64_t bias_mask = (std::uint64_t{1} << kRequantBiasBits) - 1;
  return std::uint64_t(std::uint32_t(rq.mult)) | (std::uint64_t(std::uint32_t(rq.shift)) << 32) |
         ((std::uint64_t(std::int64_t{rq.bias}) & bias_mask) << 38);
}

/// Appends little-endian values to the DRAM image at 64-byte aligned regions.
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
    std::transform(rq.begin(), rq.end(), e.begin(), param_entry);
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
  std::uint64_t reserve(std::uint64_t bytes) {
    const std::uint64_t at = (img_.size() + 63) / 64 * 64;
    img_.resize(at + bytes, 0);
    return at;
  }

 private:
  std::vector<std::uint8_t>& img_;
};

}  // namespace

/// Collects instructions, inserting a BARRIER whenever the issuing unit changes (the
/// controller does not track dependencies, docs/isa.md), and splits into programs.
struct ModelCompiler::Emitter {
  std::size_t prog_depth;
  std::vector<hw::Instr> body;
  int last_unit = -1;

  static int unit_of(Opcode op) {
    switch (op) {
      case Opcode::kDmaLoad:
      case Opcode::kDmaStore:
        return 0;
      case Opcode::kMatmul:
        return 1;
      default:
        return 2;
    }
  }
  void emit(const hw::Instr& in) {
    const int unit = unit_of(static_cast<Opcode>(hw::get_field(in, f::kOpcode)));
    if (last_unit >= 0 && unit != last_unit) {
      body.push_back(hw::make_instr(Opcode::kBarrier, hw::get_field(in, f::kLayer)));
    }
    last_unit = unit;
    body.push_back(in);
  }
  void dma(bool load, int layer, hw::Mem mem, int log2_size, std::uint64_t dram,
           std::size_t spad, std::size_t rows, std::size_t row_len, std::size_t stride,
           bool requant = false) {
    hw::Instr in = hw::make_instr(load ? Opcode::kDmaLoad : Opcode::kDmaStore,
                                  std::uint32_t(layer));
    if (requant) {
      hw::set_field(in, f::dma_store::kRequant, 1);
    }
    hw::set_field(in, f::dma_load::kMem, std::uint32_t(mem));
    hw::set_field(in, f::dma_load::kElemSize, std::uint32_t(log2_size));
    hw::set_field(in, f::dma_load::kDramAddr, std::uint32_t(dram));
    hw::set_field(in, f::dma_load::kSpadAddr, std::uint32_t(spad));
    hw::set_field(in, f::dma_load::kRows, std::uint32_t(rows));
    hw::set_field(in, f::dma_load::kRowLen, std::uint32_t(row_len));
    hw::set_field(in, f::dma_load::kDramStride, std::uint32_t(stride));
    emit(in);
  }
  /// A vector opcode (they share one operand layout).
  void vec(Opcode op, int layer, std::size_t src, std::size_t src2, std::size_t dst,
           std::size_t param, std::size_t len, std::size_t rows, std::uint32_t frac = 0) {
    hw::Instr in = hw::make_instr(op, std::uint32_t(layer));
    hw::set_field(in, f::rmsnorm::kSrcAddr, std::uint32_t(src));
    hw::set_field(in, f::rmsnorm::kSrc2Addr, std::uint32_t(src2));
    hw::set_field(in, f::rmsnorm::kDstAddr, std::uint32_t(dst));
    hw::set_field(in, f::rmsnorm::kParamAddr, std::uint32_t(param));
    hw::set_field(in, f::rmsnorm::kLen, std::uint32_t(len));
    hw::set_field(in, f::rmsnorm::kRows, std::uint32_t(rows));
    if (op == Opcode::kRmsnorm || op == Opcode::kLayernorm) {
      hw::set_field(in, f::rmsnorm::kGainFracBits, frac);
    }
    emit(in);
  }
  /// SOFTMAX over `rows` rows of `len` logits; `online` selects the two-pass version.
  void softmax(int layer, std::size_t src, std::size_t dst, std::size_t len, std::size_t rows,
               bool online) {
    hw::Instr in = hw::make_instr(Opcode::kSoftmax, std::uint32_t(layer));
    hw::set_field(in, f::softmax::kOnline, online ? 1u : 0u);
    hw::set_field(in, f::softmax::kSrcAddr, std::uint32_t(src));
    hw::set_field(in, f::softmax::kDstAddr, std::uint32_t(dst));
    hw::set_field(in, f::softmax::kLen, std::uint32_t(len));
    hw::set_field(in, f::softmax::kRows, std::uint32_t(rows));
    emit(in);
  }
  StepPrograms finish() const {
    StepPrograms out;
    const std::size_t per = prog_depth - 1;  // room for END
    for (std::size_t i = 0; i < body.size(); i += per) {
      std::vector<hw::Instr> p(body.begin() + std::ptrdiff_t(i),
                               body.begin() + std::ptrdiff_t(std::min(body.size(), i + per)));
      p.push_back(hw::make_instr(Opcode::kEnd, 0));
      out.programs.push_back(std::move(p));
    }
    return out;
  }
};

ModelCompiler::ModelCompiler(const QuantModel& model, const hw::HwConfig& cfg, CompileOptions opts)
    : model_(model), cfg_(cfg), opts_(opts) {
  const ModelConfig& c = model.config;
  const std::size_t dim = std::size_t(c.dim), hidden = std::size_t(c.hidden_dim);
  const std::size_t kv = c.kv_dim(), hs = c.head_size(), vocab = std::size_t(c.vocab_size);
  const std::size_t seq = std::size_t(c.seq_len), half = hs / 2;
  const auto nh = std::size_t(c.n_heads), nkv = std::size_t(c.n_kv_heads);

  ImageWriter w(image_);
  const bool gpt = c.arch == Arch::kGpt;
  // GPT norms: the gain row and the bias row back to back (one DMA of two rows).
  auto put_norm_rows = [&](const QuantNorm& n) {
    std::vector<std::int16_t> rows(n.gain);
    rows.insert(rows.end(), n.bias.begin(), n.bias.end());
    return w.put<std::int16_t>(rows);
  };
  for (const QuantLayer& L : model.layers) {
    LayerDram d{};
    if (gpt) {
      d.attn_nb = put_norm_rows(L.attn_norm);
      d.ffn_nb = put_norm_rows(L.ffn_norm);
      d.rq_attn_norm = w.put_rq(std::vector<Requant>{L.attn_norm.rq});
      d.rq_ffn_norm = w.put_rq(std::vector<Requant>{L.ffn_norm.rq});
      d.rq_gelu = w.put_rq(std::vector<Requant>{L.gelu_in_rq, L.gelu_out_rq});
    }
    d.attn_gain = w.put<std::int16_t>(L.attn_norm.gain);
    d.ffn_gain = w.put<std::int16_t>(L.ffn_norm.gain);
    d.wq = w.put_transposed(L.wq, dim, dim);
    d.wk = w.put_transposed(L.wk, kv, dim);
    d.wv = w.put_transposed(L.wv, kv, dim);
    d.wo = w.put_transposed(L.wo, dim, dim);
    d.w1 = w.put_transposed(L.w1, hidden, dim);
    if (!gpt) {
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
    for (std::size_t h = 0; h < nh; ++h) {
      attn.push_back(L.score_rq[h]);
      attn.push_back(L.attn_out_rq[h]);
    }
    d.rq_attn = w.put_rq(attn);
    d.rq_silu = w.put_rq(std::vector<Requant>{L.silu_in_rq, L.silu_out_rq});
    d.rq_mul = w.put_rq(L.mul_rq);
    layer_dram_.push_back(d);
  }
  dram_.embedding = w.put<std::int8_t>(model.token_embedding);
  dram_.rq_embed = w.put_rq(model.embed_rq);
  if (gpt) {
    dram_.pos_embedding = w.put<std::int8_t>(model.pos_embedding);
    dram_.rq_pos = w.put_rq(model.pos_rq);
    dram_.final_nb = put_norm_rows(model.final_norm);
    dram_.rq_final_norm = w.put_rq(std::vector<Requant>{model.final_norm.rq});
  }
  dram_.final_gain = w.put<std::int16_t>(model.final_norm.gain);
  dram_.cls = w.put_transposed(model.classifier(), vocab, dim);
  dram_.rq_cls = w.put_rq(model.rq_cls);
  const std::uint64_t eps = model.norm_eps;
  dram_.eps = w.put<std::uint64_t>(std::span(&eps, 1));
  dram_.rope_cos = w.put<std::int16_t>(model.rope_cos);
  dram_.rope_sin = w.put<std::int16_t>(model.rope_sin);
  dram_.xn = w.reserve(dim);
  dram_.att = w.reserve(dim);
  dram_.hid = w.reserve(hidden);
  const std::uint64_t layers = model.layers.size();
  dram_.k_cache = w.reserve(layers * nkv * seq * hs * 2);
  dram_.v_cache = w.reserve(layers * nkv * seq * hs);
  logits_addr_ = w.reserve(vocab * 4);
  prog_addr_ = w.reserve(cfg.prog_depth * 16);
  dram_bytes_ = image_.size();
  image_.resize(std::size_t(logits_addr_));  // activations, caches and programs start at zero
  if (dram_bytes_ > (std::uint64_t{1} << 32)) {
    throw std::runtime_error(fmt::format("compiler: model needs {} bytes of DRAM, more than "
                                         "the 32-bit DMA address reaches", dram_bytes_));
  }

  // Vector scratchpad: fixed regions, then the KV window gets what is left.
  const std::size_t L = cfg.lanes;
  auto words = [&](std::size_t n) { return ceil_div(n, L); };
  std::size_t at = 0;
  auto take = [&](std::size_t n) {
    const std::size_t a = at;
    at += n;
    return a;
  };
  vec_.x = take(words(dim));
  vec_.xn = take(words(dim));
  vec_.gain = take((gpt ? 2 : 1) * words(dim));  // GPT: the bias row follows the gain row
  vec_.q = take(nh * words(hs));
  vec_.k_new = take(nkv * words(hs));
  vec_.v_new = take(nkv * words(hs));
  vec_.rope = take(gpt ? 0 : 2 * words(half));  // GPT blocks have no RoPE
  vec_.att = take(nh * words(hs));
  vec_.branch = take(words(dim));
  vec_.gate = take(gpt ? 0 : words(hidden));  // GELU runs in place on hid: no gate or up rows
  vec_.up = take(gpt ? 0 : words(hidden));
  vec_.hid = take(words(hidden));
  // Weight tiles: as many output channels as fit the weight scratchpad and the parameter
  // memory, a multiple of both C and L so that each tile lands word-aligned.
  const std::size_t step = std::lcm(cfg.array_cols, L);
  const std::size_t k_max = std::max(dim, hidden);
  chunk_cols_ = std::min<std::size_t>({cfg.weight_depth / k_max * cfg.array_cols,
                                       cfg.param_depth, 2047}) / step * step;
  if (chunk_cols_ == 0) {
    throw std::runtime_error(fmt::format(
        "config {}: weight scratchpad of {} words x {} cannot hold one {}-deep tile of {} "
        "columns", cfg.name, cfg.weight_depth, cfg.array_cols, k_max, step));
  }
  vec_.logits = take(words(chunk_cols_));
  if (ceil_div(k_max, cfg.array_rows) > cfg.input_depth) {
    throw std::runtime_error(fmt::format("config {}: input scratchpad of {} words cannot hold "
                                         "a row of {}", cfg.name, cfg.input_depth, k_max));
  }
  // KV window: t rows of K and V (words(hs) each) plus scores and probabilities (t each).
  if (at >= cfg.vector_depth) {
    throw std::runtime_error(fmt::format("config {}: vector scratchpad of {} words cannot "
                                         "hold the activations ({} words)", cfg.name,
                                         cfg.vector_depth, at));
  }
  const std::size_t left = cfg.vector_depth - at;
  std::size_t t = std::min(seq, left / (2 * words(hs)));
  while (t > 0 && 2 * t * words(hs) + 2 * words(t) > left) {
    --t;
  }
  if (t == 0) {
    throw std::runtime_error(fmt::format("config {}: no room for a KV window", cfg.name));
  }
  max_positions_ = int(t);
  vec_.k_win = take(t * words(hs));
  vec_.v_win = take(t * words(hs));
  vec_.scores = take(words(t));
  vec_.probs = take(words(t));
}

void ModelCompiler::emit_matmul(Emitter& e, int layer, std::uint64_t w_t, std::uint64_t rq,
                                std::size_t k, std::size_t n, std::size_t col0,
                                std::size_t ncols, std::size_t dst, int out_bits) const {
  // Weight tile W^T[:, col0 : col0 + ncols] and its requantisation steps, then the product.
  e.dma(true, layer, hw::Mem::kWeight, 0, w_t + col0, 0, k, ncols, n);
  e.dma(true, layer, hw::Mem::kParam, 3, rq + col0 * 8, 0, 1, ncols, ncols * 8);
  hw::Instr in = hw::make_instr(Opcode::kMatmul, std::uint32_t(layer));
  hw::set_field(in, f::matmul::kOutBits, std::uint32_t(out_bits));
  hw::set_field(in, f::matmul::kRequantEn, 1);
  hw::set_field(in, f::matmul::kAAddr, 0);
  hw::set_field(in, f::matmul::kWAddr, 0);
  hw::set_field(in, f::matmul::kDstAddr, std::uint32_t(dst));
  hw::set_field(in, f::matmul::kRqAddr, 0);
  hw::set_field(in, f::matmul::kM, 1);
  hw::set_field(in, f::matmul::kK, std::uint32_t(k));
  hw::set_field(in, f::matmul::kN, std::uint32_t(ncols));
  e.emit(in);
}

void ModelCompiler::emit_projection(Emitter& e, int layer, std::uint64_t w_t, std::uint64_t rq,
                                    std::size_t k, std::size_t n, std::size_t dst,
                                    int out_bits) const {
  for (std::size_t col0 = 0; col0 < n; col0 += chunk_cols_) {
    const std::size_t nc = std::min(chunk_cols_, n - col0);
    emit_matmul(e, layer, w_t, rq, k, n, col0, nc, dst + col0 / cfg_.lanes, out_bits);
  }
}

void ModelCompiler::emit_norm(Emitter& e, int layer, std::uint64_t gain, int frac_bits) const {
  const auto dim = std::size_t(model_.config.dim);
  e.dma(true, layer, hw::Mem::kVector, 1, gain, vec_.gain, 1, dim, dim * 2);
  e.dma(true, layer, hw::Mem::kParam, 3, dram_.eps, 0, 1, 1, 8);
  e.vec(Opcode::kRmsnorm, layer, vec_.x, vec_.gain, vec_.xn, 0, dim, 1,
        std::uint32_t(frac_bits));
  // The int8 result becomes the matmul input through DRAM.
  e.dma(false, layer, hw::Mem::kVector, 0, dram_.xn, vec_.xn, 1, dim, dim);
  e.dma(true, layer, hw::Mem::kInput, 0, dram_.xn, 0, 1, dim, dim);
}

void ModelCompiler::emit_attention(Emitter& e, int l, int pos) const {
  const ModelConfig& c = model_.config;
  const LayerDram& d = layer_dram_[std::size_t(l)];
  const std::size_t hs = c.head_size();
  const auto nh = std::size_t(c.n_heads), nkv = std::size_t(c.n_kv_heads);
  const std::size_t seq = std::size_t(c.seq_len), t_len = std::size_t(pos) + 1;
  const std::size_t wh = ceil_div(hs, cfg_.lanes);
  const auto upos = std::size_t(pos);
  const std::size_t group = nh / nkv;
  for (std::size_t g = 0; g < nkv; ++g) {
    const std::uint64_t row0 = (std::size_t(l) * nkv + g) * seq;
    e.dma(false, l, hw::Mem::kVector, 1, dram_.k_cache + (row0 + upos) * hs * 2,
          vec_.k_new + g * wh, 1, hs, hs * 2);
    e.dma(false, l, hw::Mem::kVector, 0, dram_.v_cache + (row0 + upos) * hs,
          vec_.v_new + g * wh, 1, hs, hs);
    // This KV head's window, positions 0..pos, shared by its `group` query heads.
    e.dma(true, l, hw::Mem::kVector, 1, dram_.k_cache + row0 * hs * 2, vec_.k_win, t_len, hs,
          hs * 2);
    e.dma(true, l, hw::Mem::kVector, 0, dram_.v_cache + row0 * hs, vec_.v_win, t_len, hs, hs);
    for (std::size_t h = g * group; h < (g + 1) * group; ++h) {
      e.dma(true, l, hw::Mem::kParam, 3, d.rq_attn + h * 16, 0, 1, 2, 16);
      e.vec(Opcode::kAttnScore, l, vec_.q + h * wh, vec_.k_win, vec_.scores, 0, hs, t_len);
      e.softmax(l, vec_.scores, vec_.probs, t_len, 1,
                opts_.softmax == kernels::SoftmaxMode::kOnline);
      e.vec(Opcode::kAttnValue, l, vec_.probs, vec_.v_win, vec_.att + h * wh, 1, hs, t_len);
      e.dma(false, l, hw::Mem::kVector, 0, dram_.att + h * hs, vec_.att + h * wh, 1, hs, hs);
    }
  }
}

void ModelCompiler::emit_layer(Emitter& e, int l, int pos) const {
  const ModelConfig& c = model_.config;
  const QuantLayer& L = model_.layers[std::size_t(l)];
  const LayerDram& d = layer_dram_[std::size_t(l)];
  const std::size_t dim = std::size_t(c.dim), hidden = std::size_t(c.hidden_dim);
  const std::size_t kv = c.kv_dim(), hs = c.head_size(), half = hs / 2;
  const auto nh = std::size_t(c.n_heads), nkv = std::size_t(c.n_kv_heads);
  const std::size_t wh = ceil_div(hs, cfg_.lanes);
  const auto upos = std::size_t(pos);

  // ---- attention ----
  emit_norm(e, l, d.attn_gain, L.attn_norm.frac_bits);
  for (std::size_t h = 0; h < nh; ++h) {  // one word-aligned row per head
    emit_matmul(e, l, d.wq, d.rq_q, dim, dim, h * hs, hs, vec_.q + h * wh, kQkBits);
  }
  for (std::size_t g = 0; g < nkv; ++g) {
    emit_matmul(e, l, d.wk, d.rq_k, dim, kv, g * hs, hs, vec_.k_new + g * wh, kQkBits);
    emit_matmul(e, l, d.wv, d.rq_v, dim, kv, g * hs, hs, vec_.v_new + g * wh, 8);
  }
  e.dma(true, l, hw::Mem::kVector, 1, dram_.rope_cos + upos * half * 2, vec_.rope, 1, half,
        half * 2);
  e.dma(true, l, hw::Mem::kVector, 1, dram_.rope_sin + upos * half * 2,
        vec_.rope + ceil_div(half, cfg_.lanes), 1, half, half * 2);
  e.vec(Opcode::kRope, l, vec_.q, vec_.rope, vec_.q, 0, hs, nh);
  e.vec(Opcode::kRope, l, vec_.k_new, vec_.rope, vec_.k_new, 0, hs, nkv);
  emit_attention(e, l, pos);
  e.dma(true, l, hw::Mem::kInput, 0, dram_.att, 0, 1, dim, dim);
  emit_projection(e, l, d.wo, d.rq_o, dim, dim, vec_.branch, 16);
  e.vec(Opcode::kAdd, l, vec_.x, vec_.branch, vec_.x, 0, dim, 1);

  // ---- feed-forward (SwiGLU) ----
  emit_norm(e, l, d.ffn_gain, L.ffn_norm.frac_bits);
  emit_projection(e, l, d.w1, d.rq_1, dim, hidden, vec_.gate, 16);
  emit_projection(e, l, d.w3, d.rq_3, dim, hidden, vec_.up, 16);
  e.dma(true, l, hw::Mem::kParam, 3, d.rq_silu, 0, 1, 2, 16);
  e.vec(Opcode::kSilu, l, vec_.gate, 0, vec_.gate, 0, hidden, 1);
  for (std::size_t c0 = 0; c0 < hidden; c0 += chunk_cols_) {  // per-channel steps in tiles
    const std::size_t nc = std::min(chunk_cols_, hidden - c0);
    const std::size_t wo = c0 / cfg_.lanes;
    e.dma(true, l, hw::Mem::kParam, 3, d.rq_mul + c0 * 8, 0, 1, nc, nc * 8);
    e.vec(Opcode::kMul, l, vec_.gate + wo, vec_.up + wo, vec_.hid + wo, 0, nc, 1);
  }
  e.dma(false, l, hw::Mem::kVector, 0, dram_.hid, vec_.hid, 1, hidden, hidden);
  e.dma(true, l, hw::Mem::kInput, 0, dram_.hid, 0, 1, hidden, hidden);
  emit_projection(e, l, d.w2, d.rq_2, hidden, dim, vec_.branch, 16);
  e.vec(Opcode::kAdd, l, vec_.x, vec_.branch, vec_.x, 0, dim, 1);
}

void ModelCompiler::emit_gpt_norm(Emitter& e, int layer, const QuantNorm& n, std::uint64_t nb,
                                  std::uint64_t rq) const {
  const ModelConfig& c = model_.config;
  const auto dim = std::size_t(c.dim);
  const bool folded = c.norm == NormKind::kBatch && model_.batchnorm == BatchNormMode::kFolded;
  if (folded) {
    // The affine map lives in the next matmul's weights and bias: only the residual's
    // int16 -> int8 step remains, applied by the DMA on its way to DRAM (no vector pass).
    e.dma(true, layer, hw::Mem::kParam, 3, rq, 0, 1, 1, 8);
    e.dma(false, layer, hw::Mem::kVector, 0, dram_.xn, vec_.x, 1, dim, dim, true);
  } else {
    e.dma(true, layer, hw::Mem::kVector, 1, nb, vec_.gain, 2, dim, dim * 2);
    if (c.norm == NormKind::kLayer) {
      e.dma(true, layer, hw::Mem::kParam, 3, dram_.eps, 0, 1, 1, 8);
      e.vec(Opcode::kLayernorm, layer, vec_.x, vec_.gain, vec_.xn, 0, dim, 1,
            std::uint32_t(n.frac_bits));
    } else {
      e.dma(true, layer, hw::Mem::kParam, 3, rq, 0, 1, 1, 8);
      e.vec(Opcode::kBatchnorm, layer, vec_.x, vec_.gain, vec_.xn, 0, dim, 1);
    }
    e.dma(false, layer, hw::Mem::kVector, 0, dram_.xn, vec_.xn, 1, dim, dim);
  }
  e.dma(true, layer, hw::Mem::kInput, 0, dram_.xn, 0, 1, dim, dim);
}

void ModelCompiler::emit_gpt_layer(Emitter& e, int l, int pos) const {
  const ModelConfig& c = model_.config;
  const QuantLayer& L = model_.layers[std::size_t(l)];
  const LayerDram& d = layer_dram_[std::size_t(l)];
  const std::size_t dim = std::size_t(c.dim), hidden = std::size_t(c.hidden_dim);
  const std::size_t hs = c.head_size(), nh = std::size_t(c.n_heads);
  const std::size_t wh = ceil_div(hs, cfg_.lanes);

  // ---- attention (no RoPE; biases ride in the requantisation steps) ----
  emit_gpt_norm(e, l, L.attn_norm, d.attn_nb, d.rq_attn_norm);
  for (std::size_t h = 0; h < nh; ++h) {
    emit_matmul(e, l, d.wq, d.rq_q, dim, dim, h * hs, hs, vec_.q + h * wh, kQkBits);
    emit_matmul(e, l, d.wk, d.rq_k, dim, dim, h * hs, hs, vec_.k_new + h * wh, kQkBits);
    emit_matmul(e, l, d.wv, d.rq_v, dim, dim, h * hs, hs, vec_.v_new + h * wh, 8);
  }
  emit_attention(e, l, pos);
  e.dma(true, l, hw::Mem::kInput, 0, dram_.att, 0, 1, dim, dim);
  emit_projection(e, l, d.wo, d.rq_o, dim, dim, vec_.branch, 16);
  e.vec(Opcode::kAdd, l, vec_.x, vec_.branch, vec_.x, 0, dim, 1);

  // ---- feed-forward (GELU) ----
  emit_gpt_norm(e, l, L.ffn_norm, d.ffn_nb, d.rq_ffn_norm);
  emit_projection(e, l, d.w1, d.rq_1, dim, hidden, vec_.hid, 8);
  e.dma(true, l, hw::Mem::kParam, 3, d.rq_gelu, 0, 1, 2, 16);
  e.vec(Opcode::kGelu, l, vec_.hid, 0, vec_.hid, 0, hidden, 1);
  e.dma(false, l, hw::Mem::kVector, 0, dram_.hid, vec_.hid, 1, hidden, hidden);
  e.dma(true, l, hw::Mem::kInput, 0, dram_.hid, 0, 1, hidden, hidden);
  emit_projection(e, l, d.w2, d.rq_2, hidden, dim, vec_.branch, 16);
  e.vec(Opcode::kAdd, l, vec_.x, vec_.branch, vec_.x, 0, dim, 1);
}

StepPrograms ModelCompiler::step(int token, int pos) const {
  const ModelConfig& c = model_.config;
  if (pos < 0 || pos >= max_positions_) {
    throw std::runtime_error(fmt::format(
        "config {}: position {} is outside the KV window of {} positions that its vector "
        "scratchpad ({} words) holds; use a larger config", cfg_.name, pos, max_positions_,
        cfg_.vector_depth));
  }
  if (token < 0 || token >= c.vocab_size) {
    throw std::runtime_error(fmt::format("token: expected 0..{}, found {}", c.vocab_size - 1,
                                         token));
  }
  const std::size_t dim = std::size_t(c.dim), vocab = std::size_t(c.vocab_size);
  const int head = c.n_layers;  // counters attribute the embedding to layer 0, the head here
  Emitter e{cfg_.prog_depth, {}, -1};
  // x (dim) int16 = requantised embedding row
  e.dma(true, 0, hw::Mem::kVector, 0, dram_.embedding + std::size_t(token) * dim, vec_.x, 1,
        dim, dim);
  e.dma(true, 0, hw::Mem::kParam, 3, dram_.rq_embed + std::size_t(token) * 8, 0, 1, 1, 8);
  e.vec(Opcode::kEmbed, 0, vec_.x, 0, vec_.x, 0, dim, 1);
  if (c.arch == Arch::kGpt) {
    // + the learned position row, requantised into the residual scale the same way
    const auto upos = std::size_t(pos);
    e.dma(true, 0, hw::Mem::kVector, 0, dram_.pos_embedding + upos * dim, vec_.branch, 1, dim,
          dim);
    e.dma(true, 0, hw::Mem::kParam, 3, dram_.rq_pos + upos * 8, 0, 1, 1, 8);
    e.vec(Opcode::kEmbed, 0, vec_.branch, 0, vec_.branch, 0, dim, 1);
    e.vec(Opcode::kAdd, 0, vec_.x, vec_.branch, vec_.x, 0, dim, 1);
    for (int l = 0; l < c.n_layers; ++l) {
      emit_gpt_layer(e, l, pos);
    }
    emit_gpt_norm(e, head, model_.final_norm, dram_.final_nb, dram_.rq_final_norm);
  } else {
    for (int l = 0; l < c.n_layers; ++l) {
      emit_layer(e, l, pos);
    }
    emit_norm(e, head, dram_.final_gain, model_.final_norm.frac_bits);
  }
  for (std::size_t c0 = 0; c0 < vocab; c0 += chunk_cols_) {
    const std::size_t nc = std::min(chunk_cols_, vocab - c0);
    emit_matmul(e, head, dram_.cls, dram_.rq_cls, dim, vocab, c0, nc, vec_.logits, 32);
    e.dma(false, head, hw::Mem::kVector, 2, logits_addr_ + c0 * 4, vec_.logits, 1, nc, nc * 4);
  }
  return e.finish();
}

}  // namespace passim
