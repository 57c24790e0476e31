// SPDX-License-Identifier: Apache-2.0
// Attention's two activation-by-activation products on the systolic array (MATMUL_ACT,
// docs/isa.md), exact against attention_i8 (docs/numerics.md 4.13). One pass of n rows over a
// window of t positions:
//   the rows' query digits -> DRAM, three groups per row and head: [q_hi 0 | q_lo q_hi | 0 q_lo]
//   per KV head:
//     keys (t, hs) 12-bit from the cache -> vector -> digits [k_hi | k_lo] (t, 2 hs) -> DRAM
//     -> input scratchpad; times the identity, transposed: K^T digits (2 hs, t) -> DRAM ->
//     weight scratchpad three times, the scores' W^T (3 groups of [k_hi; k_lo])
//     V (t, hs) int8 from the cache -> weight scratchpad as [V; V | V; 0] (2 groups of 2 t rows)
//     per query head h, nb query rows at a time:
//       MATMUL_ACT (3 groups): scores (nb, t) int32 requantised by score_rq[h]; SOFTMAX of
//       row j over its first t_j positions (causal) into probability rows whose tails are zero
//       probability digits [p_hi1 p_hi2 | p_lo .] -> DRAM -> input scratchpad; MATMUL_ACT
//       (2 groups): out (nb, hs) int8 requantised by attn_out_rq[h] -> att rows of head h
//   att (n, q_dim) -> DRAM
// A pass whose operands do not fit the memories runs attention on the vector unit.
#include <algorithm>
#include <array>
#include <ranges>
#include <span>
#include <vector>

#include "passim/compiler/compiler.hpp"

namespace passim {

using hw::Mem;
using hw::Opcode;

namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

/// Packs regions of the given sizes first-fit into spans [lo, hi) of one memory; the start of
/// each, or false when one does not fit.
bool pack(std::span<const std::size_t> sizes, std::span<const std::array<std::size_t, 2>> spans,
          std::span<std::size_t> at) {
  std::vector<std::size_t> used(spans.size(), 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::size_t s = 0;
    while (s < spans.size() && spans[s][0] + used[s] + sizes[i] > spans[s][1]) {
      ++s;
    }
    if (s == spans.size()) {
      return false;
    }
    at[i] = spans[s][0] + used[s];
    used[s] += sizes[i];
  }
  return true;
}

}  // namespace

const char* attention_unit_name(AttentionUnit u) noexcept {
  switch (u) {
    case AttentionUnit::kArray:
      return "array";
    case AttentionUnit::kScores:
      return "scores";
    case AttentionUnit::kVector:
      return "vector";
    default:
      return "auto";
  }
}

AttentionUnit attention_unit(std::string_view name) noexcept {
  return name == "array"    ? AttentionUnit::kArray
         : name == "scores" ? AttentionUnit::kScores
         : name == "vector" ? AttentionUnit::kVector
                            : AttentionUnit::kAuto;
}

bool ModelCompiler::loads_weight_tile(const hw::Instr& in) const {
  namespace dl = hw::fields::dma_load;
  return static_cast<Opcode>(hw::get_field(in, hw::fields::kOpcode)) == Opcode::kDmaLoad &&
         static_cast<Mem>(hw::get_field(in, dl::kMem)) == Mem::kWeight &&
         dma_moves(in) == DmaMoves::kWeights &&
         hw::get_field(in, dl::kDramAddr) != layout_.dram.attn_eye;
}

bool ModelCompiler::place_array_attention(const Rows& r, std::size_t nb, bool values,
                                          ArrayAttention& p) const {
  const std::size_t hs = desc_.layers.front().attention.head_size, t = r.pos0 + r.n;
  const std::size_t R = cfg_.array_rows, C = cfg_.array_cols;
  p = {.t = t, .nb = nb, .key_group = key_group_bytes(hs, cfg_),
       .prob_group = prob_group_bytes(t, cfg_), .values_on_array = values};
  // Input scratchpad from word 0, in turn: the key digits (t rows), a chunk's query digits
  // (3 groups) and its probability digits (2 groups).
  const std::size_t in_end = std::max(
      t * ceil_div(2 * hs, R), nb * std::max(3 * p.key_group, values ? 2 * p.prob_group : 0) / R);
  // Weight scratchpad, after the resident tiles: identity, K^T three times, [V; V | V; 0].
  p.w_eye = residency_.weights ? residency_.weight_words : 0;
  p.w_keys = p.w_eye + 2 * hs * ceil_div(2 * hs, C);
  p.w_values = p.w_keys + 6 * hs * ceil_div(t, C);
  const std::size_t w_end = p.w_values + (values ? 4 * t * ceil_div(hs, C) : 0);
  // Parameter memory: entry 0 the DMA's digit step; t score steps and hs value steps where
  // the resident steps leave room.
  const std::size_t resident_end = residency_.param_base + residency_.param_entries +
                                   residency_.step_entries;
  const std::array<std::array<std::size_t, 2>, 2> param_spans = {
      {{1, residency_.params ? residency_.param_base : cfg_.param_depth},
       {residency_.params ? resident_end : cfg_.param_depth, cfg_.param_depth}}};
  std::array<std::size_t, 2> entries{};
  const bool params = pack(std::array<std::size_t, 2>{t, hs}, param_spans, entries);
  p.rq_scores = entries[0];
  p.rq_values = entries[1];
  // Vector scratchpad: the probability rows, a work region for in turn the key window, the
  // transposed key digits and the scores, and V for ATTN_VALUE; in the FFN's regions (free
  // while attention runs) or in place of the vector unit's KV window.
  const std::array<std::size_t, 3> sizes = {
      nb * words(t), std::max({t * words(hs), 2 * hs * words(t), nb * words(t)}),
      values ? 0 : t * words(hs)};
  const std::array<std::array<std::size_t, 2>, 2> spans = {
      {{r.v.branch, r.v.logits}, {r.v.k_win, cfg_.vector_depth}}};
  std::array<std::size_t, 3> at{};
  const bool placed = pack(sizes, spans, at);
  p.v_probs = at[0];
  p.v_work = at[1];
  p.v_values = at[2];
  // MATMUL_ACT's fields: m <= acc_depth (10 bits), k (11 bits), n <= param_depth (11 bits);
  // the keys' transpose has m = t and n = 2 hs.
  const bool fields = t <= std::min<std::size_t>(cfg_.acc_depth, 1023) && 2 * t <= 2047 &&
                      2 * hs <= std::min<std::size_t>(cfg_.param_depth, 2047);
  return fields && placed && params && in_end <= cfg_.input_depth &&
         w_end <= cfg_.weight_depth;
}

ModelCompiler::AttentionCost ModelCompiler::attention_cost(const Rows& r) const {
  // Per layer, from the closed forms: ATTN_SCORE 6 + t_j cycles per row when a head fits one
  // vector word (else 5 + 2 W t_j + P - 1), ATTN_VALUE W (t_j + P + 4) (rtl/attn/psm_attn.sv);
  // MATMUL_ACT (G KT NT - 1) T + m + R + C + 4, T = max(m, R, C), and a transposed result
  // NT m + MW n + NT MW cycles later, MW = ceil(m / L) (docs/cycle-model.md); a DMA moves one
  // 8-byte beat per cycle (rtl/dma/psm_dma.sv). Only what differs between the two units
  // counts.
  const AttentionDesc& a = desc_.layers.front().attention;
  const std::size_t hs = a.head_size, n = r.n, t = r.pos0 + r.n, H = a.n_heads;
  const std::size_t R = cfg_.array_rows, C = cfg_.array_cols, L = cfg_.lanes;
  const std::size_t W = ceil_div(hs, L);
  const auto matmul = [&](std::size_t g, std::size_t m, std::size_t k, std::size_t cols) {
    const std::size_t tiles = g * ceil_div(k, R) * ceil_div(cols, C);
    return (tiles - 1) * std::max({m, R, C}) + m + R + C + 4;
  };
  AttentionCost c;
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t t_j = row_window(r, 0, j), P = ceil_div(t_j, L);
    c.vector_scores += H * (W == 1 ? 6 + t_j : 5 + 2 * W * t_j + P - 1);
    c.vector_values += H * W * (t_j + P + 4);
  }
  // Scores: per KV head the keys' digits, their transpose and K^T three times (12 hs t
  // bytes); per head the query digits, t + hs steps and the product written row by row; once
  // the query digits out and the identity in.
  const std::size_t kv = a.n_kv_heads;
  const std::size_t nt = ceil_div(2 * hs, C), mw = ceil_div(t, L);  // the keys' transpose
  c.array_scores = kv * (matmul(1, t, 2 * hs, 2 * hs) + nt * t + mw * 2 * hs + nt * mw +
                         12 * hs * t / 8) +
                   H * (matmul(3, n, 2 * hs, t) + n * ceil_div(t, L) + n * 3 * ceil_div(hs, 4) +
                        t + hs) +
                   4 * n * H * hs / 8 + 4 * hs * hs / 8;  // and the identity (2 hs, 2 hs)
  // p v: per KV head V three times and t zero rows; per head the probability digits, 3 t
  // bytes out, 4 t in and t to clear each row.
  c.array_values = kv * (4 * t * hs / 8) +
                   H * (matmul(2, n, 2 * t, hs) + n * (3 * t + 2 * prob_group_bytes(t, cfg_) +
                                                        t) / 8);
  return c;
}

std::optional<ModelCompiler::ArrayAttention> ModelCompiler::array_attention(
    const Rows& r) const {
  // The scores on the array, p v where the options or the closed forms put it (kArray: on the
  // vector unit only when its operands do not fit the array's memories); the most query rows
  // per chunk that fit, a multiple of R when that is at least R (whole row blocks of the
  // array). The vector unit when not even one row fits.
  if (opts_.attention == AttentionUnit::kVector || r.t != 0 ||  // chunks: the vector unit
      (opts_.attention == AttentionUnit::kAuto && r.n < 2)) {
    return std::nullopt;
  }
  const AttentionCost cost = attention_cost(r);
  const bool forced = opts_.attention != AttentionUnit::kAuto;
  const std::size_t values_cost = std::min(cost.array_values, cost.vector_values);
  if (!forced && cost.array_scores + values_cost >= cost.vector_scores + cost.vector_values) {
    return std::nullopt;
  }
  const bool prefer = opts_.attention == AttentionUnit::kArray ||
                      (!forced && cost.array_values < cost.vector_values);
  const std::size_t tries = opts_.attention == AttentionUnit::kScores ? 1 : 2;
  for (const bool values : std::array<bool, 2>{prefer, !prefer} | std::views::take(tries)) {
    ArrayAttention p;
    std::size_t nb = r.n;
    while (nb > 0 && !place_array_attention(r, nb, values, p)) {
      --nb;
    }
    if (nb == 0) {
      continue;
    }
    if (nb < r.n && nb >= cfg_.array_rows) {
      nb = nb / cfg_.array_rows * cfg_.array_rows;
    }
    place_array_attention(r, nb, values, p);
    return p;
  }
  return std::nullopt;
}

void ModelCompiler::attend_on_array(ProgramBuilder& b, const Rows& r, std::size_t l,
                                    const ArrayAttention& p) const {
  const AttentionDesc& a = desc_.layers[l].attention;
  const ModelDram& d = layout_.dram;
  const std::size_t hs = a.head_size, n = r.n, wh = words(hs);
  cache_rows(b, r, l);
  query_digits(b, r, l, p);
  b.load({.mem = Mem::kWeight, .dram = d.attn_eye, .spad = p.w_eye, .rows = 2 * hs,
          .row_len = 2 * hs, .stride = 2 * hs});
  const bool masked = a.mask != MaskKind::kNone;
  for (std::size_t g = 0; g < a.n_kv_heads; ++g) {
    kv_operands(b, l, g, p);
    for (std::size_t h = g * a.group(); h < (g + 1) * a.group(); ++h) {
      const std::uint64_t rq = layout_.layers[l].rq_attn + h * 16;  // score, value step
      b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = rq, .spad = p.rq_scores, .rows = p.t,
              .row_len = 1});
      b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = rq + 8, .spad = p.rq_values,
              .rows = hs, .row_len = 1});
      for (std::size_t j0 = 0; j0 < n; j0 += p.nb) {
        const Chunk c{.h = h, .j0 = j0, .rows = std::min(p.nb, n - j0)};
        // SOFTMAX writes the first t_j of a probability row, whose tail must be zero: clear
        // the rows when shorter prefixes follow longer ones (a new head after several chunks).
        if (p.values_on_array && masked && j0 == 0 && (h == 0 || n > p.nb)) {
          b.load({.mem = Mem::kVector, .dram = d.zeros, .spad = p.v_probs, .rows = p.nb,
                  .row_len = p.t});
        }
        chunk_scores(b, r, l, c, p);
        chunk_values(b, r, l, c, p);
      }
    }
  }
  for (std::size_t h = 0; h < a.n_heads; ++h) {  // att (n, q_dim) int8
    b.store({.dram = r.att + h * hs, .spad = r.v.att + h * n * wh, .rows = n, .row_len = hs,
             .stride = a.q_dim()});
  }
}

void ModelCompiler::digit_step(ProgramBuilder& b, std::size_t which) const {
  // Parameter entry 0, the step of the DMA_STOREs with requant that write digits.
  b.load({.mem = Mem::kParam, .elem_log2 = 3, .dram = layout_.dram.digit_rq + which * 8,
          .row_len = 1, .stride = 8});
}

void ModelCompiler::query_digits(ProgramBuilder& b, const Rows& r, std::size_t l,
                                 const ArrayAttention& p) const {
  // Every row's and head's query digits as the scores' a: three groups of key_group bytes,
  // [q_hi 0 | q_lo q_hi | 0 q_lo]; the zero halves are never written.
  const AttentionDesc& a = desc_.layers[l].attention;
  const std::size_t hs = a.head_size, kg = p.key_group;
  const std::uint64_t at = layout_.dram.query_digits;
  digit_step(b, 0);
  for (const std::uint64_t off : {std::uint64_t{0}, kg + hs}) {  // q_hi
    b.store({.dram = at + off, .spad = r.v.q, .rows = r.n * a.n_heads, .row_len = hs,
             .stride = 3 * kg, .requant = true});
  }
  for (const std::uint64_t off : {std::uint64_t{kg}, 2 * kg + hs}) {  // q_lo
    b.store({.dram = at + off, .spad = r.v.q, .rows = r.n * a.n_heads, .row_len = hs,
             .stride = 3 * kg});
  }
}

void ModelCompiler::kv_operands(ProgramBuilder& b, std::size_t l, std::size_t g,
                                const ArrayAttention& p) const {
  // Keys: the window (t, hs) into vector rows, its digits [k_hi | k_lo] through DRAM into the
  // input scratchpad, times the identity transposed, through DRAM into the weight
  // scratchpad as three groups of [k_hi; k_lo]. Values: [V; V | V; 0].
  const ModelDram& d = layout_.dram;
  const std::size_t hs = desc_.layers[l].attention.head_size, t = p.t;
  const std::uint64_t row0 = cache_row0(l, g);
  b.load({.mem = Mem::kVector, .elem_log2 = 1, .dram = d.k_cache + row0 * hs * 2,
          .spad = p.v_work, .rows = t, .row_len = hs, .stride = hs * 2});
  digit_step(b, 0);
  b.store({.dram = d.key_digits, .spad = p.v_work, .rows = t, .row_len = hs, .stride = 2 * hs,
           .requant = true});
  b.store({.dram = d.key_digits + hs, .spad = p.v_work, .rows = t, .row_len = hs,
           .stride = 2 * hs});
  b.load({.mem = Mem::kInput, .dram = d.key_digits, .rows = t, .row_len = 2 * hs,
          .stride = 2 * hs});
  b.matmul({.m = t, .k = 2 * hs, .n = 2 * hs, .w_addr = p.w_eye, .dst = p.v_work,
            .requant = false, .digits = 1, .transpose = true});
  b.store({.dram = d.key_t, .spad = p.v_work, .rows = 2 * hs, .row_len = t, .stride = t});
  const std::size_t keys = 2 * hs * ceil_div(t, cfg_.array_cols);
  for (std::size_t i = 0; i < 3; ++i) {
    b.load({.mem = Mem::kWeight, .dram = d.key_t, .spad = p.w_keys + i * keys, .rows = 2 * hs,
            .row_len = t, .stride = t});
  }
  if (!p.values_on_array) {  // V (t, hs) int8 for ATTN_VALUE
    b.load({.mem = Mem::kVector, .dram = d.v_cache + row0 * hs, .spad = p.v_values, .rows = t,
            .row_len = hs, .stride = hs});
    return;
  }
  const std::size_t block = t * ceil_div(hs, cfg_.array_cols);
  for (std::size_t i = 0; i < 3; ++i) {
    b.load({.mem = Mem::kWeight, .dram = d.v_cache + row0 * hs, .spad = p.w_values + i * block,
            .rows = t, .row_len = hs, .stride = hs});
  }
  b.load({.mem = Mem::kWeight, .dram = d.zeros, .spad = p.w_values + 3 * block, .rows = t,
          .row_len = hs});
}

void ModelCompiler::chunk_scores(ProgramBuilder& b, const Rows& r, std::size_t l,
                                 const Chunk& c, const ArrayAttention& p) const {
  // The chunk's query digit rows into the input scratchpad; scores (rows, t) int32, every
  // column requantised by score_rq[h]; SOFTMAX of row j over positions 0 .. t_j - 1.
  const AttentionDesc& a = desc_.layers[l].attention;
  const std::size_t hs = a.head_size, t = p.t, wt = words(t), kg = p.key_group;
  const std::uint64_t q0 = layout_.dram.query_digits + (c.j0 * a.n_heads + c.h) * 3 * kg;
  b.load({.mem = Mem::kInput, .dram = q0, .rows = c.rows, .row_len = 3 * kg,
          .stride = a.n_heads * 3 * kg});
  b.matmul({.m = c.rows, .k = 2 * hs, .n = t, .w_addr = p.w_keys, .dst = p.v_work,
            .rq_addr = p.rq_scores, .out_bits = 32, .digits = 3});
  const bool online = opts_.softmax == kernels::SoftmaxMode::kOnline;
  for (std::size_t jj = 0; jj < c.rows; ++jj) {
    const std::size_t t_j = row_window(r, l, c.j0 + jj);
    b.vector({.op = Opcode::kSoftmax, .src = p.v_work + jj * wt, .dst = p.v_probs + jj * wt,
              .len = t_j, .online = online});
  }
}

void ModelCompiler::chunk_values(ProgramBuilder& b, const Rows& r, std::size_t l,
                                 const Chunk& c, const ArrayAttention& p) const {
  // out (rows, hs) int8 = P V into head h's att rows: on the vector unit, ATTN_VALUE row by
  // row; on the array, the probability digits (rows, [hi1 (t) hi2 (t) | lo (t) .]) through
  // DRAM into the input scratchpad, then MATMUL_ACT.
  const ModelDram& d = layout_.dram;
  const AttentionDesc& a = desc_.layers[l].attention;
  const std::size_t hs = a.head_size, t = p.t, wh = words(hs);
  const std::size_t att = r.v.att + (c.h * r.n + c.j0) * wh;  // head h's rows
  if (!p.values_on_array) {
    for (std::size_t jj = 0; jj < c.rows; ++jj) {
      const std::size_t t_j = row_window(r, l, c.j0 + jj);
      b.vector({.op = Opcode::kAttnValue, .src = p.v_probs + jj * words(t), .src2 = p.v_values,
                .dst = att + jj * wh, .param = p.rq_values, .len = hs, .rows = t_j});
    }
    return;
  }
  const std::uint64_t row = 2 * p.prob_group;
  digit_step(b, 0);
  b.store({.dram = d.prob_digits, .spad = p.v_probs, .rows = c.rows, .row_len = t,
           .stride = row, .requant = true});
  digit_step(b, 1);
  b.store({.dram = d.prob_digits + t, .spad = p.v_probs, .rows = c.rows, .row_len = t,
           .stride = row, .requant = true});
  b.store({.dram = d.prob_digits + p.prob_group, .spad = p.v_probs, .rows = c.rows,
           .row_len = t, .stride = row});
  b.load({.mem = Mem::kInput, .dram = d.prob_digits, .rows = c.rows, .row_len = row,
          .stride = row});
  b.matmul({.m = c.rows, .k = 2 * t, .n = hs, .w_addr = p.w_values, .dst = att,
            .rq_addr = p.rq_values, .out_bits = 8, .digits = 2});
}

}  // namespace passim
