// SPDX-License-Identifier: Apache-2.0
// Lowering of a quantised model to accelerator programs (docs/isa.md), walking its
// description. One decoding step (every arrow through DRAM is a DMA):
//   EMBED the token row (+ ADD the learned position row) into x
//   per layer: norm x -> xn -> DRAM -> input scratchpad -> MATMUL per head (q, k, v)
//              ROPE q, k (RoPE models); k, v rows to the DRAM KV cache
//              per head: KV window -> vector scratchpad, ATTN_SCORE, SOFTMAX, ATTN_VALUE -> DRAM
//              MATMUL wo -> ADD; norm -> FFN (SwiGLU: MATMUL w1, w3, SILU, MUL; GELU: MATMUL
//              w1, GELU) -> DRAM -> MATMUL w2 -> ADD
//   the final norm and the classifier, whose int32 logits go to DRAM.
#include "passim/compiler/compiler.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace passim {

using hw::Mem;
using hw::Opcode;

ModelCompiler::ModelCompiler(const QuantModel& model, const hw::HwConfig& cfg, CompileOptions opts)
    : model_(model), desc_(describe(model.config)), cfg_(cfg), opts_(opts) {
  require_pre_norm_causal(desc_, "compiler");
  layout_ = plan_layout(model, desc_, cfg);
}

std::vector<std::vector<hw::Instr>> ModelCompiler::step(int token, int pos) const {
  if (pos < 0 || pos >= layout_.max_positions) {
    throw std::runtime_error(fmt::format(
        "config {}: position {} is outside the KV window of {} positions that its vector "
        "scratchpad ({} words) holds; use a larger config", cfg_.name, pos,
        layout_.max_positions, cfg_.vector_depth));
  }
  if (token < 0 || std::size_t(token) >= desc_.embedding.vocab) {
    throw std::runtime_error(
        fmt::format("token: expected 0..{}, found {}", desc_.embedding.vocab - 1, token));
  }
  ProgramBuilder b(cfg_.prog_depth);
  embed(b, token, std::size_t(pos));  // x (dim) int16
  for (std::size_t l = 0; l < desc_.layers.size(); ++l) {
    attention_block(b, l, std::size_t(pos));  // x (dim) += attention(norm(x))
    ffn_block(b, l);                          // x (dim) += ffn(norm(x))
  }
  head(b);  // logits (classes) int32 Q.16 in DRAM
  return b.programs();
}

void ModelCompiler::embed(ProgramBuilder& b, int token, std::size_t pos) const {
  // x (dim) int16 = the requantised token row (+ the learned position row, requantised the
  // same way). Counters attribute the embedding to layer 0.
  const ModelDram& d = layout_.dram;
  const VectorLayout& v = layout_.vec;
  const std::size_t dim = desc_.dim, row = std::size_t(token);
  b.set_layer(0);
  b.load({.mem = Mem::kVector, .dram = d.embedding + row * dim, .spad = v.x, .row_len = dim,
          .stride = dim});
  b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = d.rq_embed + row * 8, .row_len = 1,
          .stride = 8});
  b.vector({.op = Opcode::kEmbed, .src = v.x, .dst = v.x, .len = dim});
  if (desc_.embedding.positions == PositionKind::kLearned) {
    b.load({.mem = Mem::kVector, .dram = d.pos_embedding + pos * dim, .spad = v.branch,
            .row_len = dim, .stride = dim});
    b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = d.rq_pos + pos * 8, .row_len = 1,
            .stride = 8});
    b.vector({.op = Opcode::kEmbed, .src = v.branch, .dst = v.branch, .len = dim});
    b.vector({.op = Opcode::kAdd, .src = v.x, .src2 = v.branch, .dst = v.x, .len = dim});
  }
}

void ModelCompiler::norm(ProgramBuilder& b, NormKind kind, const QuantNorm& n,
                         const NormDram& d) const {
  // The int8 matmul input: RMSNORM (2 passes), LAYERNORM (3), BATCHNORM (1) into xn, or a
  // folded BatchNorm's int16 -> int8 step applied by the DMA on its way to DRAM (0 passes).
  // It reaches the input scratchpad through DRAM.
  const ModelDram& dram = layout_.dram;
  const VectorLayout& v = layout_.vec;
  const std::size_t dim = desc_.dim;
  if (kind == NormKind::kBatch && model_.batchnorm == BatchNormMode::kFolded) {
    b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = d.rq, .row_len = 1, .stride = 8});
    b.store({.mem = Mem::kVector, .dram = dram.xn, .spad = v.x, .row_len = dim, .stride = dim,
             .requant = true});
  } else {
    const bool batch = kind == NormKind::kBatch;
    b.load({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.rows, .spad = v.gain,
            .rows = kind == NormKind::kRms ? 1u : 2u, .row_len = dim, .stride = dim * 2});
    b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = batch ? d.rq : dram.eps, .row_len = 1,
            .stride = 8});
    const Opcode op = batch ? Opcode::kBatchnorm
                      : kind == NormKind::kRms ? Opcode::kRmsnorm
                                               : Opcode::kLayernorm;
    b.vector({.op = op, .src = v.x, .src2 = v.gain, .dst = v.xn, .len = dim,
              .gain_frac_bits = unsigned(n.frac_bits)});
    b.store({.mem = Mem::kVector, .dram = dram.xn, .spad = v.xn, .row_len = dim, .stride = dim});
  }
  b.load({.mem = Mem::kInput, .dram = dram.xn, .row_len = dim, .stride = dim});
}

void ModelCompiler::tile(ProgramBuilder& b, const Projection& p, const Columns& c) const {
  // Weight tile W^T[:, col0 : col0 + cols] and its requantisation steps, then the product.
  b.load({.mem = Mem::kWeight, .dram = p.w_t + c.col0, .rows = p.k, .row_len = c.cols,
          .stride = p.n});
  b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = p.rq + c.col0 * 8, .row_len = c.cols,
          .stride = c.cols * 8});
  b.matmul({.m = 1, .k = p.k, .n = c.cols, .dst = c.dst, .out_bits = p.out_bits});
}

void ModelCompiler::projection(ProgramBuilder& b, const Projection& p) const {
  for (std::size_t col0 = 0; col0 < p.n; col0 += layout_.chunk_cols) {
    const std::size_t cols = std::min(layout_.chunk_cols, p.n - col0);
    tile(b, p, {.col0 = col0, .cols = cols, .dst = p.dst + col0 / cfg_.lanes});
  }
}

void ModelCompiler::attention_block(ProgramBuilder& b, std::size_t l, std::size_t pos) const {
  const AttentionDesc& a = desc_.layers[l].attention;
  const LayerDram& d = layout_.layers[l];
  const VectorLayout& v = layout_.vec;
  const std::size_t dim = desc_.dim, q_dim = a.q_dim();
  b.set_layer(std::uint32_t(l));
  norm(b, a.norm.kind, model_.layers[l].attn_norm, d.attn_norm);  // xn (dim) int8
  qkv(b, l);                                                      // q, k_new, v_new
  if (a.rope) {
    rope(b, l, pos);
  }
  attend(b, l, pos);  // att (q_dim) int8 in DRAM
  b.load({.mem = Mem::kInput, .dram = layout_.dram.att, .row_len = q_dim, .stride = q_dim});
  projection(b, {.w_t = d.wo, .rq = d.rq_o, .k = q_dim, .n = dim, .dst = v.branch,
                 .out_bits = 16});
  b.vector({.op = Opcode::kAdd, .src = v.x, .src2 = v.branch, .dst = v.x, .len = dim});
}

void ModelCompiler::qkv(ProgramBuilder& b, std::size_t l) const {
  // One word-aligned row per head: every query head, then each KV head's key and value.
  const AttentionDesc& a = desc_.layers[l].attention;
  const LayerDram& d = layout_.layers[l];
  const VectorLayout& v = layout_.vec;
  const std::size_t dim = desc_.dim, hs = a.head_size, wh = words(hs);
  const Projection q{.w_t = d.wq, .rq = d.rq_q, .k = dim, .n = a.q_dim(), .out_bits = kQkBits};
  const Projection k{.w_t = d.wk, .rq = d.rq_k, .k = dim, .n = a.kv_dim(), .out_bits = kQkBits};
  const Projection val{.w_t = d.wv, .rq = d.rq_v, .k = dim, .n = a.kv_dim(), .out_bits = 8};
  for (std::size_t h = 0; h < a.n_heads; ++h) {
    tile(b, q, {.col0 = h * hs, .cols = hs, .dst = v.q + h * wh});
  }
  for (std::size_t g = 0; g < a.n_kv_heads; ++g) {
    tile(b, k, {.col0 = g * hs, .cols = hs, .dst = v.k_new + g * wh});
    tile(b, val, {.col0 = g * hs, .cols = hs, .dst = v.v_new + g * wh});
  }
}

void ModelCompiler::rope(ProgramBuilder& b, std::size_t l, std::size_t pos) const {
  // This position's cos and sin rows, then every query head and every KV head's key.
  const AttentionDesc& a = desc_.layers[l].attention;
  const ModelDram& d = layout_.dram;
  const VectorLayout& v = layout_.vec;
  const std::size_t half = a.head_size / 2;
  b.load({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.rope_cos + pos * half * 2,
          .spad = v.rope, .row_len = half, .stride = half * 2});
  b.load({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.rope_sin + pos * half * 2,
          .spad = v.rope + words(half), .row_len = half, .stride = half * 2});
  b.vector({.op = Opcode::kRope, .src = v.q, .src2 = v.rope, .dst = v.q, .len = a.head_size,
            .rows = a.n_heads});
  b.vector({.op = Opcode::kRope, .src = v.k_new, .src2 = v.rope, .dst = v.k_new,
            .len = a.head_size, .rows = a.n_kv_heads});
}

void ModelCompiler::attend(ProgramBuilder& b, std::size_t l, std::size_t pos) const {
  // Per KV head: this position's key and value to the DRAM cache, the window of positions
  // 0..pos (causal) back into the vector scratchpad, then each of its query heads.
  const AttentionDesc& a = desc_.layers[l].attention;
  const ModelDram& d = layout_.dram;
  const VectorLayout& v = layout_.vec;
  const std::size_t hs = a.head_size, wh = words(hs), t_len = pos + 1;
  const bool online = opts_.softmax == kernels::SoftmaxMode::kOnline;
  for (std::size_t g = 0; g < a.n_kv_heads; ++g) {
    const std::uint64_t row0 = (l * a.n_kv_heads + g) * desc_.embedding.max_positions;
    b.store({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.k_cache + (row0 + pos) * hs * 2,
             .spad = v.k_new + g * wh, .row_len = hs, .stride = hs * 2});
    b.store({.mem = Mem::kVector, .dram = d.v_cache + (row0 + pos) * hs,
             .spad = v.v_new + g * wh, .row_len = hs, .stride = hs});
    b.load({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.k_cache + row0 * hs * 2,
            .spad = v.k_win, .rows = t_len, .row_len = hs, .stride = hs * 2});
    b.load({.mem = Mem::kVector, .dram = d.v_cache + row0 * hs, .spad = v.v_win, .rows = t_len,
            .row_len = hs, .stride = hs});
    for (std::size_t h = g * a.group(); h < (g + 1) * a.group(); ++h) {
      b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = layout_.layers[l].rq_attn + h * 16,
              .row_len = 2, .stride = 16});
      b.vector({.op = Opcode::kAttnScore, .src = v.q + h * wh, .src2 = v.k_win,
                .dst = v.scores, .len = hs, .rows = t_len});
      b.vector({.op = Opcode::kSoftmax, .src = v.scores, .dst = v.probs, .len = t_len,
                .online = online});
      b.vector({.op = Opcode::kAttnValue, .src = v.probs, .src2 = v.v_win, .dst = v.att + h * wh,
                .param = 1, .len = hs, .rows = t_len});
      b.store({.mem = Mem::kVector, .dram = d.att + h * hs, .spad = v.att + h * wh,
               .row_len = hs, .stride = hs});
    }
  }
}

void ModelCompiler::ffn_block(ProgramBuilder& b, std::size_t l) const {
  const FfnDesc& f = desc_.layers[l].ffn;
  const LayerDram& d = layout_.layers[l];
  const VectorLayout& v = layout_.vec;
  const std::size_t dim = desc_.dim, hidden = f.hidden;
  norm(b, f.norm.kind, model_.layers[l].ffn_norm, d.ffn_norm);  // xn (dim) int8
  if (f.kind == FfnKind::kSwiGlu) {
    swiglu(b, l);  // hid (hidden) int8
  } else {
    gelu(b, l);
  }
  b.store({.mem = Mem::kVector, .dram = layout_.dram.hid, .spad = v.hid, .row_len = hidden,
           .stride = hidden});
  b.load({.mem = Mem::kInput, .dram = layout_.dram.hid, .row_len = hidden, .stride = hidden});
  projection(b, {.w_t = d.w2, .rq = d.rq_2, .k = hidden, .n = dim, .dst = v.branch,
                 .out_bits = 16});
  b.vector({.op = Opcode::kAdd, .src = v.x, .src2 = v.branch, .dst = v.x, .len = dim});
}

void ModelCompiler::swiglu(ProgramBuilder& b, std::size_t l) const {
  // gate, up (hidden) int16; SILU in place on gate; MUL gate * up -> hid, per-channel steps
  // in tiles of the parameter memory.
  const LayerDram& d = layout_.layers[l];
  const VectorLayout& v = layout_.vec;
  const std::size_t dim = desc_.dim, hidden = desc_.layers[l].ffn.hidden;
  projection(b, {.w_t = d.w1, .rq = d.rq_1, .k = dim, .n = hidden, .dst = v.gate, .out_bits = 16});
  projection(b, {.w_t = d.w3, .rq = d.rq_3, .k = dim, .n = hidden, .dst = v.up, .out_bits = 16});
  b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = d.rq_act, .row_len = 2, .stride = 16});
  b.vector({.op = Opcode::kSilu, .src = v.gate, .dst = v.gate, .len = hidden});
  for (std::size_t c0 = 0; c0 < hidden; c0 += layout_.chunk_cols) {
    const std::size_t cols = std::min(layout_.chunk_cols, hidden - c0), w = c0 / cfg_.lanes;
    b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = d.rq_mul + c0 * 8, .row_len = cols,
            .stride = cols * 8});
    b.vector({.op = Opcode::kMul, .src = v.gate + w, .src2 = v.up + w, .dst = v.hid + w,
              .len = cols});
  }
}

void ModelCompiler::gelu(ProgramBuilder& b, std::size_t l) const {
  // up (hidden) int8 with its bias, then GELU in place.
  const LayerDram& d = layout_.layers[l];
  const VectorLayout& v = layout_.vec;
  const std::size_t dim = desc_.dim, hidden = desc_.layers[l].ffn.hidden;
  projection(b, {.w_t = d.w1, .rq = d.rq_1, .k = dim, .n = hidden, .dst = v.hid, .out_bits = 8});
  b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = d.rq_act, .row_len = 2, .stride = 16});
  b.vector({.op = Opcode::kGelu, .src = v.hid, .dst = v.hid, .len = hidden});
}

void ModelCompiler::head(ProgramBuilder& b) const {
  // The final norm, then the classifier tile by tile; its int32 logits go to DRAM. Counters
  // attribute the head to layer n_layers.
  const ModelDram& d = layout_.dram;
  const VectorLayout& v = layout_.vec;
  const std::size_t dim = desc_.dim, classes = desc_.head.classes;
  b.set_layer(std::uint32_t(desc_.layers.size()));
  norm(b, desc_.head.norm, model_.final_norm, d.final_norm);
  const Projection cls{.w_t = d.cls, .rq = d.rq_cls, .k = dim, .n = classes, .out_bits = 32};
  for (std::size_t c0 = 0; c0 < classes; c0 += layout_.chunk_cols) {
    const std::size_t cols = std::min(layout_.chunk_cols, classes - c0);
    tile(b, cls, {.col0 = c0, .cols = cols, .dst = v.logits});
    b.store({.mem = Mem::kVector, .elem_log2 = 2, .dram = d.logits + c0 * 4, .spad = v.logits,
             .row_len = cols, .stride = cols * 4});
  }
}

}  // namespace passim
