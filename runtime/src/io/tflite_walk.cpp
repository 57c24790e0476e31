// SPDX-License-Identifier: Apache-2.0
#include "tflite_walk.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace passim::tflite {
namespace {

bool has_fused_activation(const Operator& op) {
  switch (op.op()) {
    case OpCode::kFullyConnected: case OpCode::kAdd: case OpCode::kMul: case OpCode::kSub:
    case OpCode::kConcatenation:
      return op.options.fused_activation != 0;
    default:
      return false;
  }
}

/// `src` (the element sources of a row-major tensor of `shape`) transposed by `perm`.
std::vector<std::int64_t> transpose(const std::vector<std::int64_t>& src,
                                    const std::vector<std::int64_t>& shape,
                                    const std::vector<std::int32_t>& perm,
                                    std::vector<std::int64_t>& out_shape) {
  const std::size_t rank = shape.size();
  out_shape.assign(rank, 0);
  std::vector<std::int64_t> stride(rank, 1);
  for (std::size_t d = rank - 1; d > 0; --d) {
    stride[d - 1] = stride[d] * shape[d];
  }
  for (std::size_t d = 0; d < rank; ++d) {
    out_shape[d] = shape[std::size_t(perm[d])];
  }
  std::vector<std::int64_t> out(src.size());
  std::vector<std::int64_t> idx(rank, 0);  // index into the output, last dimension fastest
  for (std::size_t e = 0; e < out.size(); ++e) {
    std::int64_t from = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      from += idx[d] * stride[std::size_t(perm[d])];
    }
    out[e] = src[std::size_t(from)];
    for (std::size_t d = rank; d-- > 0;) {
      if (++idx[d] < out_shape[d]) {
        break;
      }
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

void OpWalk::fail(const Operator& op, const std::string& what) const {
  throw std::runtime_error(
      fmt::format("{}: operator {} ({}): {}", g_.origin(), op.index, op.name(), what));
}

const Operator& OpWalk::next(OpCode code, const std::string& what) {
  if (done()) {
    throw std::runtime_error(fmt::format("{}: the graph ends after operator {}: expected {} ({})",
                                         g_.origin(), i_ == 0 ? 0 : i_ - 1,
                                         op_name(std::int32_t(code)), what));
  }
  const Operator& op = g_.operators()[i_++];
  if (op.op() != code) {
    fail(op, fmt::format("not supported here: expected {} ({})", op_name(std::int32_t(code)),
                         what));
  }
  if (has_fused_activation(op)) {
    fail(op, fmt::format("{}: fused activation: expected none, found {}", what,
                         op.options.fused_activation));
  }
  if (op.outputs.size() != 1 || op.has_custom_options) {
    fail(op, fmt::format("{}: expected one output and no custom options, found {} outputs",
                         what, op.outputs.size()));
  }
  if (code == OpCode::kReshape) {
    check_reshape(op);
  }
  return op;
}

void OpWalk::check_reshape(const Operator& op) const {
  // The shape input, when there is one, must say what the output tensor's shape says (a
  // runtime reshapes by the input; this reader reads the output's declared shape).
  if (op.inputs.size() < 2 || op.inputs[1] < 0) {
    return;
  }
  std::vector<std::int32_t> want = g_.ints(op.inputs[1]);
  const auto& out = shape(op.outputs[0]);
  const std::int64_t n = g_.tensors()[std::size_t(op.inputs[0])].elements();
  std::int64_t known = 1;
  for (const std::int32_t d : want) {
    known *= d == -1 ? 1 : d;
  }
  bool ok = want.size() == out.size();
  for (std::size_t i = 0; ok && i < want.size(); ++i) {
    const std::int64_t d = want[i] == -1 && known != 0 ? n / known : want[i];
    ok = d == out[i];
  }
  if (!ok) {
    fail(op, fmt::format("the new shape: expected [{}] (the output's), found [{}]",
                         fmt::join(out, ", "), fmt::join(want, ", ")));
  }
}

std::vector<std::pair<std::int64_t, std::int64_t>> OpWalk::slice_ranges(
    const Operator& op) const {
  const OpOptions& o = op.options;
  const auto& in = shape(op.inputs.at(0));
  const auto begin = g_.ints(op.inputs.at(1)), end = g_.ints(op.inputs.at(2));
  const auto strides = g_.ints(op.inputs.at(3));
  if (begin.size() != in.size() || end.size() != in.size() || strides.size() != in.size() ||
      o.ellipsis_mask != 0 || o.new_axis_mask != 0 || o.slice_offset ||
      std::any_of(strides.begin(), strides.end(), [](std::int32_t s) { return s != 1; })) {
    fail(op, fmt::format("expected begin, end and strides of rank {}, strides 1, no ellipsis or "
                         "new axis, found strides [{}]", in.size(), fmt::join(strides, ", ")));
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> r;
  for (std::size_t d = 0; d < in.size(); ++d) {
    auto at = [&](std::int64_t v) {
      return std::clamp<std::int64_t>(v < 0 ? v + in[d] : v, 0, in[d]);
    };
    const std::int64_t b = (o.begin_mask >> d) & 1 ? 0 : at(begin[d]);
    std::int64_t e = (o.end_mask >> d) & 1 ? in[d] : at(end[d]);
    if ((o.shrink_axis_mask >> d) & 1) {
      e = b + 1;
    }
    r.emplace_back(b, e);
  }
  return r;
}

bool OpWalk::next_is(OpCode code, int tensor) const {
  if (done()) {
    return false;
  }
  const Operator& op = g_.operators()[i_];
  return op.op() == code && !op.inputs.empty() && op.inputs[0] == tensor;
}

void OpWalk::input_is(const Operator& op, std::size_t k, int t, const std::string& what) const {
  if (k >= op.inputs.size() || op.inputs[k] != t) {
    fail(op, fmt::format("{}: input {}: expected tensor {} (the previous step's), found {}", what,
                         k, t, k < op.inputs.size() ? op.inputs[k] : -1));
  }
}

const std::vector<std::int64_t>& OpWalk::shape(int t) const {
  return g_.tensors()[std::size_t(t)].shape;
}

void OpWalk::shape_is(const Operator& op, int t, const std::vector<std::int64_t>& want,
                      const std::string& what) const {
  if (shape(t) != want) {
    fail(op, fmt::format("{}: shape: expected [{}], found [{}]", what, fmt::join(want, ", "),
                         fmt::join(shape(t), ", ")));
  }
}

std::vector<float> OpWalk::constant(const Operator& op, std::size_t k,
                                    const std::vector<std::int64_t>& want,
                                    const std::string& what) const {
  const int t = k < op.inputs.size() ? op.inputs[k] : -1;
  if (t < 0 || !g_.tensors()[std::size_t(t)].constant()) {
    fail(op, fmt::format("{}: input {}: expected a constant, found {}", what, k,
                         t < 0 ? "none" : "a computed tensor"));
  }
  const auto& s = shape(t);
  const bool scalar_ok = want.empty() && s.size() == 1 && s[0] == 1;
  if (s != want && !scalar_ok) {
    fail(op, fmt::format("{}: input {}: expected a constant of shape [{}], found [{}]", what, k,
                         fmt::join(want, ", "), fmt::join(s, ", ")));
  }
  std::vector<float> v;
  try {
    v = g_.floats(t);
  } catch (const std::runtime_error& e) {
    fail(op, fmt::format("{}: {}", what, e.what()));
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      fail(op, fmt::format("{}: tensor {}: expected finite values, found {} at element {}", what,
                           t, v[i], i));
    }
  }
  return v;
}

const std::vector<std::int64_t>& OpWalk::input_shape(const Operator& op, std::size_t k) const {
  if (k >= op.inputs.size() || op.inputs[k] < 0) {
    fail(op, fmt::format("input {}: expected a tensor, found none", k));
  }
  return shape(op.inputs[k]);
}

float OpWalk::scalar(const Operator& op, std::size_t k, const std::string& what) const {
  return constant(op, k, {}, what)[0];
}

void OpWalk::scalar_is(const Operator& op, std::size_t k, double expected,
                       const std::string& what) const {
  const double v = scalar(op, k, what);
  if (!(std::abs(v - expected) <= 1e-6 * std::abs(expected))) {
    fail(op, fmt::format("{}: expected {:.9g}, found {:.9g}", what, expected, v));
  }
}

std::size_t OpWalk::constant_side(const Operator& op, int t, const std::string& what) const {
  if (op.inputs.size() == 2 && op.inputs[0] == t) {
    return 1;
  }
  if (op.inputs.size() == 2 && op.inputs[1] == t) {
    return 0;
  }
  fail(op, fmt::format("{}: expected tensor {} (the previous step's) as one of two inputs", what,
                       t));
}

Layout OpWalk::layout_chain(int t) {
  Layout l{t, shape(t), {}};
  l.source.resize(std::size_t(g_.tensors()[std::size_t(t)].elements()));
  std::iota(l.source.begin(), l.source.end(), 0);
  while (next_is(OpCode::kReshape, l.tensor) || next_is(OpCode::kTranspose, l.tensor)) {
    const Operator& op = g_.operators()[i_];
    const bool is_transpose = op.op() == OpCode::kTranspose;
    (void)next(op.op(), is_transpose ? "a transpose" : "a reshape");
    const int out = op.outputs[0];
    if (g_.tensors()[std::size_t(out)].elements() != std::int64_t(l.source.size())) {
      fail(op, "expected as many elements out as in");
    }
    if (is_transpose) {
      const int pt = op.inputs.size() == 2 ? op.inputs[1] : -1;
      const auto perm = pt >= 0 ? g_.ints(pt) : std::vector<std::int32_t>{};
      std::vector<std::int32_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::int32_t> iota(l.shape.size());
      std::iota(iota.begin(), iota.end(), 0);
      if (l.shape.empty() || sorted != iota) {
        fail(op, fmt::format("perm: expected a permutation of the {} dimensions, found [{}]",
                             l.shape.size(), fmt::join(perm, ", ")));
      }
      std::vector<std::int64_t> out_shape;
      l.source = transpose(l.source, l.shape, perm, out_shape);
    }
    l.tensor = out;
    l.shape = shape(out);
  }
  return l;
}

int OpWalk::skip_reshapes(int t) {
  while (next_is(OpCode::kReshape, t)) {
    const Operator& op = next(OpCode::kReshape, "a reshape");
    if (g_.tensors()[std::size_t(op.outputs[0])].elements() !=
        g_.tensors()[std::size_t(t)].elements()) {
      fail(op, "expected as many elements out as in");
    }
    t = op.outputs[0];
  }
  return t;
}

void append(std::vector<float>& to, const std::vector<float>& v) {
  to.insert(to.end(), v.begin(), v.end());
}

/// y = FULLY_CONNECTED(x, W (out, in) [, b (out)]). `out` < 0: the weights' rows. W is
/// appended to `w`; the bias (zeros when the operator has none) to `b`, which may be null
/// only when the operator has no bias.
Fc fully_connected(OpWalk& walk, int x, std::int64_t out, std::int64_t in,
                   std::vector<float>* w, std::vector<float>* b, const std::string& what) {
  const Operator& op = walk.next(OpCode::kFullyConnected, what);
  walk.input_is(op, 0, x, what);
  if (op.options.weights_format != 0) {
    walk.fail(op, fmt::format("{}: weights_format: expected default (0), found {}", what,
                              op.options.weights_format));
  }
  if (out < 0) {
    const std::vector<std::int64_t>& ws = walk.input_shape(op, 1);
    out = ws.size() == 2 ? ws[0] : 0;
  }
  append(*w, walk.constant(op, 1, {out, in}, what + " weights"));
  const bool has_bias = op.inputs.size() > 2 && op.inputs[2] >= 0;
  if (b == nullptr && has_bias) {
    walk.fail(op, what + ": expected no bias, found one");
  }
  if (b != nullptr) {
    append(*b, has_bias ? walk.constant(op, 2, {out}, what + " bias")
                        : std::vector<float>(std::size_t(out), 0.0F));
  }
  return {op.outputs[0], out};
}

/// y = op(x, c) or op(c, x) for a constant c of `shape` (`side`: where c must be, or either).
int with_constant(OpWalk& walk, OpCode code, int x, const std::vector<std::int64_t>& shape,
                  std::vector<float>& c,
                  const std::string& what, std::size_t side) {
  const Operator& op = walk.next(code, what);
  const std::size_t k = walk.constant_side(op, x, what);
  if (side != kEitherSide && k != side) {
    walk.fail(op, fmt::format("{}: expected the constant as input {}, found it as input {}", what,
                              side, k));
  }
  c = walk.constant(op, k, shape, what);
  return op.outputs[0];
}

/// y = op(x, c) for a scalar constant c that must equal `expected`.
int scalar_step(OpWalk& walk, OpCode code, int x, double expected, const std::string& what) {
  const Operator& op = walk.next(code, what);
  walk.scalar_is(op, walk.constant_side(op, x, what), expected, what);
  return op.outputs[0];
}

/// y = op(a, b) of two computed tensors, in either order.
int binary(OpWalk& walk, OpCode code, int a, int b, const std::string& what) {
  const Operator& op = walk.next(code, what);
  if (!(op.inputs.size() == 2 && ((op.inputs[0] == a && op.inputs[1] == b) ||
                                  (op.inputs[0] == b && op.inputs[1] == a)))) {
    walk.fail(op, fmt::format("{}: expected tensors {} and {} as inputs", what, a, b));
  }
  return op.outputs[0];
}

int unary(OpWalk& walk, OpCode code, int x, const std::string& what) {
  const Operator& op = walk.next(code, what);
  walk.input_is(op, 0, x, what);
  return op.outputs[0];
}

}  // namespace passim::tflite
