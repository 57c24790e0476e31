// SPDX-License-Identifier: Apache-2.0
// KWT's post-norm blocks and its head, as its TFLite file computes them.
#include "tflite_blocks.hpp"

#include <cmath>

#include <fmt/format.h>

namespace passim::tflite {
namespace {

using Shape = std::vector<std::int64_t>;

/// Checks that a LayerNorm's MEAN reduces the last axis, keeping it.
void mean_over_last_axis(OpWalk& walk, const Operator& op, int x, const std::string& what) {
  walk.input_is(op, 0, x, what);
  const auto rank = std::int32_t(walk.shape(x).size());
  const auto axes = walk.graph().ints(op.inputs.at(1));
  if (!op.options.keep_dims || axes.size() != 1 || (axes[0] != -1 && axes[0] != rank - 1)) {
    walk.fail(op, what + ": expected the mean over the last axis, keeping it");
  }
}

/// y = LayerNorm(x) as TFLite decomposes it: (x - mean) rsqrt(var + eps) gamma + beta.
int layer_norm(OpWalk& walk, int x, std::int64_t d, std::vector<float>& gamma,
               std::vector<float>& beta, float& eps) {
  const Operator& mean = walk.next(OpCode::kMean, "the LayerNorm mean");
  mean_over_last_axis(walk, mean, x, "the LayerNorm mean");
  const int sd = binary(walk, OpCode::kSquaredDifference, x, mean.outputs[0],
                        "the LayerNorm deviations");
  const Operator& var = walk.next(OpCode::kMean, "the LayerNorm variance");
  mean_over_last_axis(walk, var, sd, "the LayerNorm variance");
  std::vector<float> e, g, b;
  const int ve = with_constant(walk, OpCode::kAdd, var.outputs[0], {}, e, "the LayerNorm eps");
  if (eps != 0.0F && e[0] != eps) {
    walk.fail(walk.graph().operators()[std::size_t(mean.index) + 3],
              fmt::format("the LayerNorm eps: expected {} as in the first norm, found {}", eps,
                          e[0]));
  }
  eps = e[0];
  const int r = unary(walk, OpCode::kRsqrt, ve, "the LayerNorm scale");
  const int rg = with_constant(walk, OpCode::kMul, r, {d}, g, "the LayerNorm gain");
  const int xg = binary(walk, OpCode::kMul, x, rg, "the scaled input");
  const int mg = binary(walk, OpCode::kMul, mean.outputs[0], rg, "the scaled mean");
  const int bm = with_constant(walk, OpCode::kSub, mg, {d}, b, "the LayerNorm bias", 0);
  append(gamma, g);
  append(beta, b);
  return binary(walk, OpCode::kAdd, xg, bm, "the LayerNorm output");
}

/// y = 0.5 h (1 + tanh(sqrt(2 / pi) (h + 0.044715 h^3))), step by step.
int gelu_tanh(OpWalk& walk, int h) {
  const double kPi = 3.14159265358979323846;
  int t = scalar_step(walk, OpCode::kPow, h, 3.0, "GELU's cube");
  t = scalar_step(walk, OpCode::kMul, t, 0.044715, "GELU's cubic coefficient");
  t = binary(walk, OpCode::kAdd, h, t, "GELU's tanh argument");
  t = scalar_step(walk, OpCode::kMul, t, std::sqrt(2.0 / kPi), "GELU's sqrt(2 / pi)");
  t = unary(walk, OpCode::kTanh, t, "GELU's tanh");
  t = scalar_step(walk, OpCode::kAdd, t, 1.0, "GELU's 1 + tanh");
  const int half = scalar_step(walk, OpCode::kMul, h, 0.5, "GELU's h / 2");
  return binary(walk, OpCode::kMul, half, t, "GELU");
}

/// The layout a chain left must be `want` (element i of the result from element want(i)).
template <typename Want>
void layout_is(OpWalk& walk, const Operator& user, const tflite::Layout& l, const Shape& shape,
               Want want, const std::string& what) {
  bool ok = l.shape == shape;
  for (std::size_t i = 0; ok && i < l.source.size(); ++i) {
    ok = l.source[i] == want(std::int64_t(i));
  }
  if (!ok) {
    walk.fail(user, what);
  }
}

/// One head of self-attention over n rows of d and its residual; returns x + attention.
int attention(OpWalk& walk, int x, std::int64_t n, std::int64_t d, FloatWeights& w) {
  const int q = fully_connected(walk, x, d, d, &w.wq, &w.bq, "the queries").y;
  const int k = fully_connected(walk, x, d, d, &w.wk, &w.bk, "the keys").y;
  const tflite::Layout kl = walk.layout_chain(k);
  const Operator& s = walk.next(OpCode::kFullyConnected, "the scores q k^T");
  walk.input_is(s, 0, q, "the scores q k^T");
  walk.input_is(s, 1, kl.tensor, "the scores q k^T");
  layout_is(walk, s, kl, {n, d}, [](std::int64_t i) { return i; },
            "the scores q k^T: expected the keys (n, d) as the weights (one head)");
  int t = scalar_step(walk, OpCode::kMul, s.outputs[0], 1.0 / std::sqrt(double(d)),
                      "the score scale 1 / sqrt(head size)");
  t = walk.skip_reshapes(t);
  const Operator& p = walk.next(OpCode::kSoftmax, "the attention probabilities");
  walk.input_is(p, 0, t, "the attention probabilities");
  if (p.options.beta != 1.0F) {
    walk.fail(p, fmt::format("beta: expected 1, found {}", p.options.beta));
  }
  const int v = fully_connected(walk, x, d, d, &w.wv, &w.bv, "the values").y;
  const tflite::Layout vl = walk.layout_chain(v);
  const Operator& pv = walk.next(OpCode::kFullyConnected, "the probabilities times the values");
  walk.input_is(pv, 0, p.outputs[0], "the probabilities times the values");
  walk.input_is(pv, 1, vl.tensor, "the probabilities times the values");
  layout_is(walk, pv, vl, {d, n}, [&](std::int64_t i) { return (i % n) * d + i / n; },
            "the probabilities times the values: expected the values transposed (d, n)");
  t = fully_connected(walk, pv.outputs[0], d, d, &w.wo, &w.bo, "the output projection").y;
  return binary(walk, OpCode::kAdd, x, walk.skip_reshapes(t), "the attention residual");
}

/// The FFN (up, tanh-GELU, down) and its residual; returns x + ffn and the hidden width.
int ffn(OpWalk& walk, int x, std::int64_t d, FloatWeights& w, int& hidden) {
  const Fc up = fully_connected(walk, x, -1, d, &w.w1, &w.b1, "the FFN's up projection");
  if (hidden != 0 && up.out != hidden) {
    walk.fail(walk.graph().operators()[0], "FFN widths differ between blocks");
  }
  hidden = int(up.out);
  const int h = gelu_tanh(walk, walk.skip_reshapes(up.y));
  const int down = fully_connected(walk, h, d, up.out, &w.w2, &w.b2,
                                   "the FFN's down projection").y;
  return binary(walk, OpCode::kAdd, x, walk.skip_reshapes(down), "the FFN residual");
}

}  // namespace

int encoder_block(OpWalk& walk, int x, ModelConfig& c, FloatWeights& w, float& eps) {
  const std::int64_t n = c.seq_len, d = c.dim;
  x = attention(walk, x, n, d, w);
  x = layer_norm(walk, x, d, w.rms_att, w.att_norm_bias, eps);
  x = ffn(walk, x, d, w, c.hidden_dim);
  return layer_norm(walk, x, d, w.rms_ffn, w.ffn_norm_bias, eps);
}

int classifier_head(OpWalk& walk, int x, std::int64_t d, ModelConfig& c, FloatWeights& w) {
  const Operator& row = walk.next(OpCode::kStridedSlice, "the class token's row");
  walk.input_is(row, 0, x, "the class token's row");
  using Range = std::pair<std::int64_t, std::int64_t>;
  const std::vector<Range> row0 = {{0, 1}, {0, 1}, {0, d}};  // batch 0, position 0, all of d
  const bool first = walk.slice_ranges(row) == row0 && row.options.shrink_axis_mask == 2;
  if (!first || walk.shape(row.outputs[0]) != Shape{1, d}) {
    walk.fail(row, "the class token's row: expected position 0's row (1, dim)");
  }
  const Fc cls = fully_connected(walk, row.outputs[0], -1, d, &w.wcls, &w.bcls,
                                 "the classifier");
  c.vocab_size = int(cls.out);
  return cls.y;
}

}  // namespace passim::tflite
