// SPDX-License-Identifier: Apache-2.0
// Lowering of a quantised model to accelerator programs (docs/isa.md), walking its
// description. One pass over n positions (n = 1: a decoding step; every arrow through DRAM is
// a DMA):
//   EMBED the n token rows (+ ADD the learned position rows) into x
//   per layer: norm x -> xn -> DRAM -> input scratchpad -> MATMUL q, k, v (a tile per head
//              unless the weights are resident: then wide tiles, one MATMUL_HEADS each where
//              a head does not fill whole vector words), each weight tile streamed against
//              all n rows
//              ROPE q, k per row (RoPE models); k, v rows to the DRAM KV cache (one store
//              per row for all KV heads); per KV head its window -> vector scratchpad, then
//              per head and row ATTN_SCORE over positions 0 .. pos0 + row (causal) or
//              0 .. n - 1 (no mask), SOFTMAX, ATTN_VALUE; every head's output -> DRAM at once
//              MATMUL wo -> ADD; norm -> FFN (SwiGLU: MATMUL w1, w3, SILU, MUL; GELU: MATMUL
//              w1, GELU) -> DRAM -> MATMUL w2 -> ADD
//              post-norm blocks: the DMA requantises x itself into xn, and after each ADD
//              LAYERNORM x -> xn, EMBED xn -> x
//   the final norm (or the DMA's step) of the last row and the classifier, whose int32 logits
//   go to DRAM.
#include "passim/compiler/compiler.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace passim {

using hw::Mem;
using hw::Opcode;

namespace {

/// The inner dimensions of the model's weight matmuls fit a MATMUL's k field; the accelerator
/// has no k split across MATMULs (each command requantises its own sums). Throws
/// std::runtime_error naming the matmul, its k and the field's limit.
void check_matmul_depths(const ModelConfig& c) {
  const std::size_t kmax = (std::size_t{1} << hw::fields::matmul::kK.width) - 1;
  for (const auto& [what, k] : {std::pair{"dim (the projections' k)", c.dim},
                                std::pair{"hidden_dim (FFN down's k)", c.hidden_dim}}) {
    if (std::size_t(k) > kmax) {
      throw std::runtime_error(fmt::format("compiler: {} = {}: expected at most {}, a MATMUL's k "
                                           "field (docs/isa.md); the accelerator does not split "
                                           "k across MATMULs: run this shape on --backend cpu",
                                           what, k, kmax));
    }
  }
}

}  // namespace

ModelCompiler::ModelCompiler(const QuantModel& model, const hw::HwConfig& cfg, CompileOptions opts)
    : model_(model), desc_(describe(model.config)), cfg_(cfg), opts_(opts) {
  check_matmul_depths(model.config);
  // The plan reads a step's weight tiles and parameter loads with attention on the vector
  // unit: attention on the array fits itself around the resident tiles (attention.cpp).
  opts_.attention = AttentionUnit::kVector;
  layout_ = plan_layout(model, desc_, cfg);
  wide_heads_ = opts.weights != WeightsMode::kStreamed;
  residency_ = plan_residency(plan_step(), cfg, layout_.max_rows, opts.weights);
  if (!residency_.weights && wide_heads_) {
    wide_heads_ = false;  // streamed after all: one tile per head
    residency_ = plan_residency(plan_step(), cfg, layout_.max_rows, opts.weights);
  }
  if (opts.weights == WeightsMode::kResident && !residency_.weights) {
    throw std::runtime_error(fmt::format("--weights resident: the model does not fit: {}",
                                         residency_.reason));
  }
  // Streamed: tiles that fit half the memories, so that the next one loads while a MATMUL
  // reads this one (ProgramBuilder::stream_slot); the vector layout of the wider tiles holds.
  const std::size_t half = double_buffered_columns(desc_, cfg);
  if (!residency_.weights && half > 0 && half < layout_.chunk_cols) {
    layout_.chunk_cols = half;
    residency_ = plan_residency(plan_step(), cfg, layout_.max_rows, opts.weights);
  }
  place_steps(residency_, step_blocks_, cfg);
  opts_.attention = opts.attention;
}

std::vector<std::vector<hw::Instr>> ModelCompiler::preload() const {
  ProgramBuilder b(cfg_.prog_depth);
  if (!residency_.weights) {
    return {};
  }
  for (const auto& [dram, t] : residency_.tiles) {
    b.set_layer(t.layer);
    b.load({.mem = Mem::kWeight, .dram = t.dram, .spad = t.w_addr, .rows = t.k,
            .row_len = t.cols, .stride = t.stride});
    if (residency_.params) {
      b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = t.rq, .spad = t.rq_addr,
              .row_len = t.cols, .stride = t.cols * 8});
    }
  }
  for (const auto& [dram, s] : residency_.steps) {
    b.set_layer(s.layer);
    b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = dram, .spad = s.addr,
            .row_len = s.count, .stride = s.count * 8});
  }
  return b.programs();
}

std::vector<std::vector<hw::Instr>> ModelCompiler::step(int token, int pos) const {
  require_whole_sequence(desc_, pos, "compiler");
  if (pos < 0 || pos >= layout_.max_positions) {
    throw std::runtime_error(fmt::format(
        "config {}: position {} is outside the KV window of {} positions that its vector "
        "scratchpad ({} words) holds; use a larger config", cfg_.name, pos,
        layout_.max_positions, cfg_.vector_depth));
  }
  const ModelDram& d = layout_.dram;
  const int tokens[1] = {token};
  return emit(tokens, {.n = 1, .pos0 = std::size_t(pos), .v = layout_.vec, .xn = d.xn,
                       .att = d.att, .hid = d.hid});
}

std::size_t ModelCompiler::rows_at(int pos, std::size_t wanted) const {
  if (pos < 0 || std::size_t(pos) >= desc_.embedding.max_positions) {
    return 0;
  }
  std::size_t n = std::min({wanted, layout_.max_rows,
                            desc_.embedding.max_positions - std::size_t(pos)});
  VectorLayout v;
  while (n > 0 && !plan_rows(desc_, cfg_, layout_, n, std::size_t(pos) + n, v)) {
    --n;
  }
  return n;
}

std::vector<std::vector<hw::Instr>> ModelCompiler::pass(std::span<const int> tokens,
                                                        int pos) const {
  require_whole_sequence(desc_, pos, "compiler");
  const std::size_t n = tokens.size();
  VectorLayout v;
  const bool fits = n > 0 && pos >= 0 && std::size_t(pos) + n <= desc_.embedding.max_positions &&
                    plan_rows(desc_, cfg_, layout_, n, std::size_t(pos) + n, v);
  if (!fits && unmasked(desc_) && n > 0 && n <= desc_.embedding.max_positions &&
      desc_.embedding.features == 0) {
    for (const int token : tokens) {
      if (token < 0 || std::size_t(token) >= desc_.embedding.vocab) {
        throw std::runtime_error(
            fmt::format("token: expected 0..{}, found {}", desc_.embedding.vocab - 1, token));
      }
    }
    return encoder_chunks(tokens, n);  // layer by layer, in chunks of rows
  }
  if (!fits) {
    throw std::runtime_error(fmt::format(
        "config {}: a pass of {} positions from position {} does not fit (at most {}: the "
        "vector scratchpad of {} words holds the rows and the KV window, MATMUL at most {} "
        "rows)", cfg_.name, n, pos, rows_at(pos, n), cfg_.vector_depth, layout_.max_rows));
  }
  const ModelDram& d = layout_.dram;
  const Rows r{.n = n, .pos0 = std::size_t(pos), .v = v, .xn = d.seq_xn, .att = d.seq_att,
               .hid = d.seq_hid};
  return emit(tokens, r);
}

std::vector<std::vector<hw::Instr>> ModelCompiler::plan_step() const {
  // The programs the residency plan reads: a decoding step at position 0, or for a model
  // over features a pass of the class token and one frame.
  return desc_.embedding.features > 0 ? features_pass(1) : step(0, 0);
}

std::vector<std::vector<hw::Instr>> ModelCompiler::features_pass(std::size_t frames) const {
  const std::size_t n = frames + (desc_.embedding.class_token ? 1 : 0);
  if (desc_.embedding.features == 0 || frames == 0) {
    throw std::runtime_error(fmt::format(
        "compiler: features_pass: expected a model over input features and frames > 0, found "
        "{} features and {} frames", desc_.embedding.features, frames));
  }
  if (n > desc_.embedding.max_positions) {
    throw std::runtime_error(fmt::format(
        "compiler: {} positions (the class token and {} frames): expected at most {}", n, frames,
        desc_.embedding.max_positions));
  }
  VectorLayout v;
  if (!plan_rows(desc_, cfg_, layout_, n, n, v)) {
    return encoder_chunks({}, n);  // layer by layer, in chunks of rows
  }
  const ModelDram& d = layout_.dram;
  return emit({}, {.n = n, .pos0 = 0, .v = v, .xn = d.seq_xn, .att = d.seq_att,
                   .hid = d.seq_hid}, true);
}

std::vector<std::vector<hw::Instr>> ModelCompiler::emit(std::span<const int> tokens,
                                                        const Rows& r, bool features) const {
  if (!features && desc_.embedding.features > 0) {
    throw std::runtime_error(fmt::format(
        "compiler: this model takes {} features per position (features_pass), not token ids",
        desc_.embedding.features));
  }
  for (const int token : tokens) {
    if (token < 0 || std::size_t(token) >= desc_.embedding.vocab) {
      throw std::runtime_error(
          fmt::format("token: expected 0..{}, found {}", desc_.embedding.vocab - 1, token));
    }
  }
  ProgramBuilder b(cfg_.prog_depth, cfg_);  // streamed tiles double-buffered
  if (features) {
    embed_features(b, r);  // x (n, dim) int16
  } else {
    embed(b, r, tokens);  // x (n, dim) int16
  }
  for (std::size_t l = 0; l < desc_.layers.size(); ++l) {
    attention_block(b, r, l);  // x (n, dim) += attention(norm(x))
    ffn_block(b, r, l);        // x (n, dim) += ffn(norm(x))
  }
  head(b, r);  // logits (classes) int32 Q.16 of the last row (or the class token's), in DRAM
  return b.programs();
}

void ModelCompiler::embed(ProgramBuilder& b, const Rows& r, std::span<const int> tokens) const {
  // x (n, dim) int16 = the requantised token rows (+ the learned position rows, requantised
  // the same way); EMBED takes row i's step from parameter entry i. Counters attribute the
  // embedding to layer 0.
  const ModelDram& d = layout_.dram;
  const VectorLayout& v = r.v;
  const std::size_t dim = desc_.dim, wd = words(dim);
  b.set_layer(0);
  for (std::size_t i = 0; i < r.n; ++i) {
    const std::size_t row = std::size_t(tokens[i]);
    b.load({.mem = Mem::kVector, .dram = d.embedding + row * dim, .spad = v.x + i * wd,
            .row_len = dim, .stride = dim});
    b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = d.rq_embed + row * 8, .spad = i,
            .row_len = 1, .stride = 8});
  }
  b.vector({.op = Opcode::kEmbed, .src = v.x, .dst = v.x, .len = dim, .rows = r.n});
  add_positions(b, r);
}

void ModelCompiler::embed_features(ProgramBuilder& b, const Rows& r) const {
  // x (n, dim) int16: row 0 the class token (EMBED, like a token row), then input_proj f +
  // input_bias of each frame (a MATMUL of the int8 features the host wrote to DRAM, into the
  // residual scale), then + the position rows. Counters attribute it to layer 0.
  const ModelDram& d = layout_.dram;
  const VectorLayout& v = r.v;
  const std::size_t dim = desc_.dim, nf = desc_.embedding.features;
  const bool cls = desc_.embedding.class_token;
  const std::size_t first = cls && r.pos0 == 0 ? 1 : 0, frames = r.n - first;
  const std::size_t frame0 = r.pos0 + first - (cls ? 1 : 0);  // the chunk's first frame
  b.set_layer(0);
  if (first == 1) {
    b.load({.mem = Mem::kVector, .dram = d.embedding, .spad = v.x, .row_len = dim,
            .stride = dim});
    b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = d.rq_embed, .row_len = 1, .stride = 8});
    b.vector({.op = Opcode::kEmbed, .src = v.x, .dst = v.x, .len = dim, .rows = 1});
  }
  b.load({.mem = Mem::kInput, .dram = d.features + frame0 * nf, .rows = frames, .row_len = nf,
          .stride = nf});
  const Rows fr{.n = frames, .pos0 = r.pos0 + first, .v = v, .xn = r.xn, .att = r.att,
                .hid = r.hid};
  projection(b, fr, {.w_t = d.input_proj, .rq = d.rq_input, .k = nf, .n = dim,
                     .dst = v.x + first * words(dim), .out_bits = 16});  // x rows 1.. (frames, dim)
  add_positions(b, r);
}

void ModelCompiler::add_positions(ProgramBuilder& b, const Rows& r) const {
  // x (n, dim) += the learned position rows pos0 .. pos0 + n - 1, requantised by EMBED.
  const ModelDram& d = layout_.dram;
  const VectorLayout& v = r.v;
  const std::size_t dim = desc_.dim;
  if (desc_.embedding.positions == PositionKind::kLearned) {
    b.load({.mem = Mem::kVector, .dram = d.pos_embedding + r.pos0 * dim, .spad = v.branch,
            .rows = r.n, .row_len = dim, .stride = dim});
    b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = d.rq_pos + r.pos0 * 8,
            .row_len = r.n, .stride = r.n * 8});
    b.vector({.op = Opcode::kEmbed, .src = v.branch, .dst = v.branch, .len = dim, .rows = r.n});
    b.vector({.op = Opcode::kAdd, .src = v.x, .src2 = v.branch, .dst = v.x, .len = dim,
              .rows = r.n});
  }
}

void ModelCompiler::norm(ProgramBuilder& b, const Rows& r, NormRows in, NormKind kind,
                         const QuantNorm& n, const NormDram& d) const {
  // The int8 matmul input of `in.rows` rows: RMSNORM (2 passes), LAYERNORM (3), BATCHNORM (1)
  // into xn, or the int16 -> int8 step applied by the DMA on its way to DRAM (0 passes) of a
  // folded BatchNorm, a post-norm block's input or a head without a norm. It reaches the
  // input scratchpad through DRAM.
  const ModelDram& dram = layout_.dram;
  const VectorLayout& v = r.v;
  const std::size_t dim = desc_.dim;
  if (in.residual || (kind == NormKind::kBatch && model_.batchnorm == BatchNormMode::kFolded)) {
    b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = d.rq, .row_len = 1, .stride = 8});
    b.store({.mem = Mem::kVector, .dram = r.xn, .spad = in.src, .rows = in.rows, .row_len = dim,
             .stride = dim, .requant = true});
  } else {
    const bool batch = kind == NormKind::kBatch;
    b.load({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.rows, .spad = v.gain,
            .rows = kind == NormKind::kRms ? 1u : 2u, .row_len = dim, .stride = dim * 2});
    const std::size_t param = steps(b, batch ? d.rq : dram.eps, 1);
    const Opcode op = batch ? Opcode::kBatchnorm
                      : kind == NormKind::kRms ? Opcode::kRmsnorm
                                               : Opcode::kLayernorm;
    b.vector({.op = op, .src = in.src, .src2 = v.gain, .dst = v.xn, .param = param,
              .len = dim, .rows = in.rows, .gain_frac_bits = unsigned(n.frac_bits)});
    b.store({.mem = Mem::kVector, .dram = r.xn, .spad = v.xn, .rows = in.rows, .row_len = dim,
             .stride = dim});
  }
  b.load({.mem = Mem::kInput, .dram = r.xn, .rows = in.rows, .row_len = dim, .stride = dim});
}

void ModelCompiler::post_norm(ProgramBuilder& b, const Rows& r, const NormDesc& nd,
                              const QuantNorm& n, const NormDram& d) const {
  // x (n, dim) int16 = EMBED(LAYERNORM(x)) after a post-norm block's ADD: the norm into int8
  // xn (3 passes), then row i's step out_rq from parameter entry i back into the residual.
  if (nd.placement != NormPlacement::kPost) {
    return;
  }
  const VectorLayout& v = r.v;
  const std::size_t dim = desc_.dim;
  b.load({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.rows, .spad = v.gain, .rows = 2,
          .row_len = dim, .stride = dim * 2});
  const std::size_t eps = steps(b, layout_.dram.eps, 1);
  b.vector({.op = Opcode::kLayernorm, .src = v.x, .src2 = v.gain, .dst = v.xn, .param = eps,
            .len = dim, .rows = r.n, .gain_frac_bits = unsigned(n.frac_bits)});
  for (std::size_t i = 0; i < r.n; ++i) {
    b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = d.out_rq, .spad = i, .row_len = 1,
            .stride = 8});
  }
  b.vector({.op = Opcode::kEmbed, .src = v.xn, .dst = v.x, .len = dim, .rows = r.n});
}

std::size_t ModelCompiler::steps(ProgramBuilder& b, std::uint64_t dram, std::size_t count,
                                 std::size_t spad) const {
  if (const ResidentSteps* home = residency_.find_steps(dram, count)) {
    return home->addr;
  }
  step_blocks_.emplace(dram, StepBlock{.count = count, .layer = b.layer()});  // the first use
  b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = dram, .spad = spad, .row_len = count,
          .stride = count * 8});
  return spad;
}

void ModelCompiler::tile(ProgramBuilder& b, const Rows& r, const Projection& p,
                         const Columns& c) const {
  // Weight tile W^T[:, col0 : col0 + cols] and its requantisation steps (streamed: loaded
  // now, into the half of the memories the previous tile left free, so that the load runs
  // under the previous tile's MATMUL; resident: in place since preload()), then the product
  // of all n rows with it.
  const ResidentTile* home = residency_.weights ? residency_.find(p.w_t + c.col0) : nullptr;
  if (residency_.weights && home == nullptr) {
    throw std::logic_error(fmt::format("compiler: weight tile at DRAM {} has no resident home",
                                       p.w_t + c.col0));
  }
  std::size_t w_addr = home ? home->w_addr : 0;
  if (home == nullptr) {
    const std::size_t w_words = p.k * ((c.cols + cfg_.array_cols - 1) / cfg_.array_cols);
    w_addr = b.stream_slot(Mem::kWeight, w_words, cfg_.weight_depth);
    b.load({.mem = Mem::kWeight, .dram = p.w_t + c.col0, .spad = w_addr, .rows = p.k,
            .row_len = c.cols, .stride = p.n});
  }
  std::size_t rq_addr = residency_.params ? home->rq_addr : 0;
  if (!residency_.params) {
    rq_addr = b.stream_slot(Mem::kParam, c.cols, cfg_.param_depth);
    b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = p.rq + c.col0 * 8, .spad = rq_addr,
            .row_len = c.cols, .stride = c.cols * 8});
  }
  b.matmul({.m = r.n, .k = p.k, .n = c.cols, .w_addr = w_addr, .dst = c.dst,
            .dst_stride = c.stride, .rq_addr = rq_addr, .out_bits = p.out_bits,
            .head_size = c.head_size});
}

void ModelCompiler::projection(ProgramBuilder& b, const Rows& r, const Projection& p) const {
  // Rows of p.n columns, row-major from p.dst on.
  for (std::size_t col0 = 0; col0 < p.n; col0 += layout_.chunk_cols) {
    const std::size_t cols = std::min(layout_.chunk_cols, p.n - col0);
    tile(b, r, p, {.col0 = col0, .cols = cols, .dst = p.dst + col0 / cfg_.lanes,
                   .stride = words(p.n)});
  }
}

void ModelCompiler::attention_block(ProgramBuilder& b, const Rows& r, std::size_t l) const {
  const AttentionDesc& a = desc_.layers[l].attention;
  const LayerDram& d = layout_.layers[l];
  const VectorLayout& v = r.v;
  const std::size_t dim = desc_.dim, q_dim = a.q_dim();
  b.set_layer(std::uint32_t(l));
  const bool post = a.norm.placement == NormPlacement::kPost;
  norm(b, r, {.src = v.x, .rows = r.n, .residual = post}, a.norm.kind,
       model_.layers[l].attn_norm, d.attn_norm);  // xn (n, dim) int8
  qkv(b, r, l);       // q (n, q_dim), k_new, v_new (n, kv_dim)
  if (a.rope) {
    rope(b, r, l);
  }
  if (const auto on_array = array_attention(r)) {
    attend_on_array(b, r, l, *on_array);  // att (n, q_dim) int8 in DRAM
  } else {
    attend(b, r, l);
  }
  b.load({.mem = Mem::kInput, .dram = r.att, .rows = r.n, .row_len = q_dim, .stride = q_dim});
  projection(b, r, {.w_t = d.wo, .rq = d.rq_o, .k = q_dim, .n = dim, .dst = v.branch,
                    .out_bits = 16});  // branch (n, dim) int16
  b.vector({.op = Opcode::kAdd, .src = v.x, .src2 = v.branch, .dst = v.x, .len = dim,
            .rows = r.n});
  post_norm(b, r, a.norm, model_.layers[l].attn_norm, d.attn_norm);  // x (n, dim) int16
}

void ModelCompiler::qkv(ProgramBuilder& b, const Rows& r, std::size_t l) const {
  // A row holds every query head (one word-aligned slot each), likewise each KV head's key and
  // value. With resident weights (wide_heads_) each projection runs as wide tiles: MATMULs
  // when a head fills whole words (head_size a multiple of L: the slots are the packed row),
  // else one MATMUL_HEADS, which starts each head at a new word. Otherwise one weight tile
  // per head.
  const AttentionDesc& a = desc_.layers[l].attention;
  const LayerDram& d = layout_.layers[l];
  const VectorLayout& v = r.v;
  const std::size_t dim = desc_.dim, hs = a.head_size, wh = words(hs);
  const Projection q{.w_t = d.wq, .rq = d.rq_q, .k = dim, .n = a.q_dim(), .dst = v.q,
                     .out_bits = kQkBits};
  const Projection k{.w_t = d.wk, .rq = d.rq_k, .k = dim, .n = a.kv_dim(), .dst = v.k_new,
                     .out_bits = kQkBits};
  const Projection val{.w_t = d.wv, .rq = d.rq_v, .k = dim, .n = a.kv_dim(), .dst = v.v_new,
                       .out_bits = 8};
  if (wide_heads_ && hs % cfg_.lanes == 0) {
    projection(b, r, q);  // q (n, q_dim) 12-bit
    projection(b, r, k);  // k (n, kv_dim) 12-bit
    projection(b, r, val);  // v (n, kv_dim) int8
    return;
  }
  if (wide_heads_ && layout_.chunk_cols >= std::max(a.q_dim(), a.kv_dim())) {
    tile(b, r, q, {.col0 = 0, .cols = q.n, .dst = v.q, .head_size = hs});  // q (n, heads) 12-bit
    tile(b, r, k, {.col0 = 0, .cols = k.n, .dst = v.k_new, .head_size = hs});  // k 12-bit
    tile(b, r, val, {.col0 = 0, .cols = val.n, .dst = v.v_new, .head_size = hs});  // v int8
    return;
  }
  const std::size_t q_row = a.n_heads * wh, kv_row = a.n_kv_heads * wh;
  for (std::size_t h = 0; h < a.n_heads; ++h) {
    tile(b, r, q, {.col0 = h * hs, .cols = hs, .dst = v.q + h * wh, .stride = q_row});
  }
  for (std::size_t g = 0; g < a.n_kv_heads; ++g) {
    tile(b, r, k, {.col0 = g * hs, .cols = hs, .dst = v.k_new + g * wh, .stride = kv_row});
    tile(b, r, val, {.col0 = g * hs, .cols = hs, .dst = v.v_new + g * wh, .stride = kv_row});
  }
}

void ModelCompiler::rope(ProgramBuilder& b, const Rows& r, std::size_t l) const {
  // Per row: its position's cos and sin rows, then every query head and every KV head's key.
  const AttentionDesc& a = desc_.layers[l].attention;
  const ModelDram& d = layout_.dram;
  const VectorLayout& v = r.v;
  const std::size_t half = a.head_size / 2, wh = words(a.head_size);
  for (std::size_t i = 0; i < r.n; ++i) {
    const std::size_t pos = r.pos0 + i;
    const std::size_t q = v.q + i * a.n_heads * wh, k = v.k_new + i * a.n_kv_heads * wh;
    b.load({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.rope_cos + pos * half * 2,
            .spad = v.rope, .row_len = half, .stride = half * 2});
    b.load({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.rope_sin + pos * half * 2,
            .spad = v.rope + words(half), .row_len = half, .stride = half * 2});
    b.vector({.op = Opcode::kRope, .src = q, .src2 = v.rope, .dst = q, .len = a.head_size,
              .rows = a.n_heads});
    b.vector({.op = Opcode::kRope, .src = k, .src2 = v.rope, .dst = k, .len = a.head_size,
              .rows = a.n_kv_heads});
  }
}

void ModelCompiler::cache_rows(ProgramBuilder& b, const Rows& r, std::size_t l) const {
  // Every KV head's key and value of each row to the DRAM cache (positions pos0 .. pos0 + n -
  // 1): per row one store of all the keys and one of all the values, the KV heads being
  // consecutive words of the row and max_positions cache rows apart in DRAM; one store per
  // head when that distance does not fit the DMA's 16-bit stride.
  const AttentionDesc& a = desc_.layers[l].attention;
  const ModelDram& d = layout_.dram;
  const VectorLayout& v = r.v;
  const std::size_t hs = a.head_size, wh = words(hs), kv_row = a.n_kv_heads * wh;
  const std::uint64_t max_pos = desc_.embedding.max_positions;
  const std::uint64_t head_bytes = max_pos * hs * 2;  // one KV head's K cache
  const std::size_t per_store = head_bytes < (std::uint64_t{1} << 16) ? a.n_kv_heads : 1;
  for (std::size_t i = 0; i < r.n; ++i) {
    for (std::size_t g = 0; g < a.n_kv_heads; g += per_store) {
      const std::uint64_t at = cache_row0(l, g) + r.pos0 + i;
      const std::size_t spad = i * kv_row + g * wh;
      b.store({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.k_cache + at * hs * 2,
               .spad = v.k_new + spad, .rows = per_store, .row_len = hs,
               .stride = per_store > 1 ? head_bytes : hs * 2});
      b.store({.mem = Mem::kVector, .dram = d.v_cache + at * hs, .spad = v.v_new + spad,
               .rows = per_store, .row_len = hs, .stride = per_store > 1 ? head_bytes / 2 : hs});
    }
  }
}

void ModelCompiler::attend(ProgramBuilder& b, const Rows& r, std::size_t l) const {
  // Every head's two steps (score_rq, attn_out_rq) in one load, at parameter entries 2h and
  // 2h + 1, and the rows' keys and values to the cache. Per KV head: its window of positions
  // 0 .. pos0 + n - 1 from the cache, then each of its query heads row by row (row i sees
  // positions 0 .. pos0 + i: the causal mask; without a mask all n positions). Row i of head h
  // goes to att word (i * n_heads + h) * wh, so that one store writes att (n, q_dim) to DRAM.
  const AttentionDesc& a = desc_.layers[l].attention;
  const ModelDram& d = layout_.dram;
  const VectorLayout& v = r.v;
  const std::size_t hs = a.head_size, wh = words(hs), q_row = a.n_heads * wh;
  const bool online = opts_.softmax == kernels::SoftmaxMode::kOnline;
  const std::size_t rq = steps(b, layout_.layers[l].rq_attn, 2 * a.n_heads);
  cache_rows(b, r, l);
  const std::size_t t_len = window(r);
  for (std::size_t g = 0; g < a.n_kv_heads; ++g) {
    const std::uint64_t row0 = cache_row0(l, g);
    b.load({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.k_cache + row0 * hs * 2,
            .spad = v.k_win, .rows = t_len, .row_len = hs, .stride = hs * 2});
    b.load({.mem = Mem::kVector, .dram = d.v_cache + row0 * hs, .spad = v.v_win, .rows = t_len,
            .row_len = hs, .stride = hs});
    for (std::size_t h = g * a.group(); h < (g + 1) * a.group(); ++h) {
      for (std::size_t i = 0; i < r.n; ++i) {
        const std::size_t t_i = row_window(r, l, i);
        b.vector({.op = Opcode::kAttnScore, .src = v.q + i * q_row + h * wh, .src2 = v.k_win,
                  .dst = v.scores, .param = rq + 2 * h, .len = hs, .rows = t_i});
        b.vector({.op = Opcode::kSoftmax, .src = v.scores, .dst = v.probs, .len = t_i,
                  .online = online});
        b.vector({.op = Opcode::kAttnValue, .src = v.probs, .src2 = v.v_win,
                  .dst = v.att + (i * a.n_heads + h) * wh, .param = rq + 2 * h + 1, .len = hs,
                  .rows = t_i});
      }
    }
  }
  b.store({.mem = Mem::kVector, .dram = r.att, .spad = v.att, .rows = r.n * a.n_heads,
           .row_len = hs, .stride = hs});
}

void ModelCompiler::ffn_block(ProgramBuilder& b, const Rows& r, std::size_t l) const {
  const FfnDesc& f = desc_.layers[l].ffn;
  const LayerDram& d = layout_.layers[l];
  const VectorLayout& v = r.v;
  const std::size_t dim = desc_.dim, hidden = f.hidden;
  const bool post = f.norm.placement == NormPlacement::kPost;
  norm(b, r, {.src = v.x, .rows = r.n, .residual = post}, f.norm.kind,
       model_.layers[l].ffn_norm, d.ffn_norm);  // xn (n, dim) int8
  if (f.kind == FfnKind::kSwiGlu) {
    swiglu(b, r, l);  // hid (n, hidden) int8
  } else {
    gelu(b, r, l);
  }
  b.store({.mem = Mem::kVector, .dram = r.hid, .spad = v.hid, .rows = r.n, .row_len = hidden,
           .stride = hidden});
  b.load({.mem = Mem::kInput, .dram = r.hid, .rows = r.n, .row_len = hidden, .stride = hidden});
  projection(b, r, {.w_t = d.w2, .rq = d.rq_2, .k = hidden, .n = dim, .dst = v.branch,
                    .out_bits = 16});  // branch (n, dim) int16
  b.vector({.op = Opcode::kAdd, .src = v.x, .src2 = v.branch, .dst = v.x, .len = dim,
            .rows = r.n});
  post_norm(b, r, f.norm, model_.layers[l].ffn_norm, d.ffn_norm);  // x (n, dim) int16
}

void ModelCompiler::swiglu(ProgramBuilder& b, const Rows& r, std::size_t l) const {
  // gate, up (n, hidden) int16; SILU in place on gate; MUL gate * up -> hid with per-channel
  // steps, a tile of the parameter memory at a time (then row by row, unless one tile is the
  // whole row).
  const LayerDram& d = layout_.layers[l];
  const VectorLayout& v = r.v;
  const std::size_t dim = desc_.dim, hidden = desc_.layers[l].ffn.hidden, wr = words(hidden);
  projection(b, r, {.w_t = d.w1, .rq = d.rq_1, .k = dim, .n = hidden, .dst = v.gate,
                    .out_bits = 16});
  projection(b, r, {.w_t = d.w3, .rq = d.rq_3, .k = dim, .n = hidden, .dst = v.up,
                    .out_bits = 16});
  const std::size_t act = steps(b, d.rq_act, 2);
  b.vector({.op = Opcode::kSilu, .src = v.gate, .dst = v.gate, .param = act, .len = hidden,
            .rows = r.n});
  for (std::size_t c0 = 0; c0 < hidden; c0 += layout_.chunk_cols) {
    const std::size_t cols = std::min(layout_.chunk_cols, hidden - c0), w = c0 / cfg_.lanes;
    const std::size_t mul = steps(b, d.rq_mul + c0 * 8, cols);
    const bool whole = cols == hidden;  // rows are packed: one MUL takes them all
    for (std::size_t i = 0; i < (whole ? 1 : r.n); ++i) {
      b.vector({.op = Opcode::kMul, .src = v.gate + i * wr + w, .src2 = v.up + i * wr + w,
                .dst = v.hid + i * wr + w, .param = mul, .len = cols, .rows = whole ? r.n : 1});
    }
  }
}

void ModelCompiler::gelu(ProgramBuilder& b, const Rows& r, std::size_t l) const {
  // up (n, hidden) int8 with its bias, then GELU in place.
  const LayerDram& d = layout_.layers[l];
  const VectorLayout& v = r.v;
  const std::size_t dim = desc_.dim, hidden = desc_.layers[l].ffn.hidden;
  projection(b, r, {.w_t = d.w1, .rq = d.rq_1, .k = dim, .n = hidden, .dst = v.hid,
                    .out_bits = 8});
  const std::size_t act = steps(b, d.rq_act, 2);
  b.vector({.op = Opcode::kGelu, .src = v.hid, .dst = v.hid, .param = act, .len = hidden,
            .rows = r.n});
}

void ModelCompiler::head(ProgramBuilder& b, const Rows& r) const {
  // The final norm of the last row, then the classifier tile by tile; its int32 logits go to
  // DRAM. Counters attribute the head to layer n_layers.
  const ModelDram& d = layout_.dram;
  const VectorLayout& v = r.v;
  const std::size_t dim = desc_.dim, classes = desc_.head.classes;
  const std::size_t row = desc_.head.reads_first ? 0 : r.n - 1;  // the class token's, or the last
  const Rows last{.n = 1, .pos0 = r.pos0 + row, .v = r.v, .xn = r.xn, .att = r.att,
                  .hid = r.hid};
  b.set_layer(std::uint32_t(desc_.layers.size()));
  norm(b, last, {.src = v.x + row * words(dim), .rows = 1,
                 .residual = !desc_.head.has_norm},
       desc_.head.norm, model_.final_norm, d.final_norm);
  const Projection cls{.w_t = d.cls, .rq = d.rq_cls, .k = dim, .n = classes, .out_bits = 32};
  for (std::size_t c0 = 0; c0 < classes; c0 += layout_.chunk_cols) {
    const std::size_t cols = std::min(layout_.chunk_cols, classes - c0);
    tile(b, last, cls, {.col0 = c0, .cols = cols, .dst = v.logits});
    b.store({.mem = Mem::kVector, .elem_log2 = 2, .dram = d.logits + c0 * 4, .spad = v.logits,
             .row_len = cols, .stride = cols * 4});
  }
}

}  // namespace passim
