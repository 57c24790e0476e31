// SPDX-License-Identifier: Apache-2.0
// An unmasked sequence longer than one pass holds: chunks of rows, layer by layer.
//
//   embed each chunk (token rows, or the class token and projected features), park its
//   residual rows in DRAM (seq_x)
//   per layer:  every chunk: fetch x, the block input, q k v, keys and values to the cache
//               every chunk: fetch x, the attention block over all n positions, the FFN block,
//                            park x
//   the head on the class token's row (or the last)
//
// Every row computes what it would in one pass (a row's matmuls, norms and attention do not
// depend on which rows share its pass, and every key and value is in the cache before any
// row attends), so the results are the same bit for bit; the queries, keys and values are
// projected twice, the second time for the chunk's queries.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/compiler/compiler.hpp"
#include "passim/compiler/program.hpp"

namespace passim {

using hw::Mem;

void ModelCompiler::park_rows(ProgramBuilder& b, const Rows& r, bool store) const {
  // x (r.n, dim) int16 to or from the sequence's residual rows in DRAM.
  const std::size_t dim = desc_.dim;
  const DmaOp args{.mem = Mem::kVector, .elem_log2 = 1,
                   .dram = layout_.dram.seq_x + r.pos0 * dim * 2, .spad = r.v.x,
                   .rows = r.n, .row_len = dim, .stride = dim * 2};
  if (store) {
    b.store(args);
  } else {
    b.load(args);
  }
}

void ModelCompiler::keys_and_values(ProgramBuilder& b, const Rows& r, std::size_t l) const {
  // The block input of the chunk's rows, their projections, and keys and values to the cache.
  const AttentionDesc& a = desc_.layers[l].attention;
  b.set_layer(std::uint32_t(l));
  norm(b, r, {.src = r.v.x, .rows = r.n, .residual = a.norm.placement == NormPlacement::kPost},
       a.norm.kind, model_.layers[l].attn_norm, layout_.layers[l].attn_norm);  // xn (n, dim)
  qkv(b, r, l);  // q (n, q_dim), k_new, v_new (n, kv_dim)
  if (a.rope) {
    rope(b, r, l);
  }
  cache_rows(b, r, l);
}

std::vector<std::vector<hw::Instr>> ModelCompiler::encoder_chunks(std::span<const int> tokens,
                                                                  std::size_t n) const {
  // The most rows per chunk whose regions fit beside the window of all n positions.
  VectorLayout v;
  std::size_t m = std::min(n, layout_.max_rows);
  while (m > 0 && !plan_rows(desc_, cfg_, layout_, m, n, v)) {
    --m;
  }
  if (m == 0) {
    throw std::runtime_error(fmt::format(
        "config {}: a sequence of {} positions does not fit even in chunks: one row and the "
        "window of {} keys and values need more than the vector scratchpad's {} words",
        cfg_.name, n, n, cfg_.vector_depth));
  }
  const ModelDram& d = layout_.dram;
  auto chunk = [&](std::size_t c0, std::size_t rows) {
    return Rows{.n = rows, .pos0 = c0, .v = v, .xn = d.seq_xn, .att = d.seq_att,
                .hid = d.seq_hid, .t = n};
  };
  ProgramBuilder b(cfg_.prog_depth, cfg_);
  for (std::size_t c0 = 0; c0 < n; c0 += m) {
    const Rows r = chunk(c0, std::min(m, n - c0));
    if (tokens.empty()) {
      embed_features(b, r);  // x (rows, dim) int16
    } else {
      embed(b, r, tokens.subspan(c0, r.n));
    }
    park_rows(b, r, true);
  }
  for (std::size_t l = 0; l < desc_.layers.size(); ++l) {
    for (std::size_t c0 = 0; c0 < n; c0 += m) {
      const Rows r = chunk(c0, std::min(m, n - c0));
      park_rows(b, r, false);
      keys_and_values(b, r, l);  // the chunk's keys and values in the cache
    }
    for (std::size_t c0 = 0; c0 < n; c0 += m) {
      const Rows r = chunk(c0, std::min(m, n - c0));
      park_rows(b, r, false);
      attention_block(b, r, l);  // x (rows, dim): attention over all n positions
      ffn_block(b, r, l);
      park_rows(b, r, true);
    }
  }
  const Rows one = chunk(desc_.head.reads_first ? 0 : n - 1, 1);
  park_rows(b, one, false);
  head(b, one);  // logits (classes) int32 Q.16, in DRAM
  return b.programs();
}

}  // namespace passim
