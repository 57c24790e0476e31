// SPDX-License-Identifier: Apache-2.0
/// \file A cursor over a TFLite graph's operators for the pattern mappers (tflite_model.cpp):
/// each step takes the next operator, checks its code, options and dataflow, and reads its
/// constants with their expected shapes. Every failure names the file, the operator's index
/// and name, and what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "passim/io/tflite.hpp"

namespace passim::tflite {

/// A tensor's values after RESHAPE and TRANSPOSE operators: its shape, and for each element of
/// the result the index of the element of the chain's input it came from.
struct Layout {
  int tensor = -1;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> source;
};

class OpWalk {
 public:
  explicit OpWalk(const Graph& g) : g_(g) {}

  [[nodiscard]] const Graph& graph() const noexcept { return g_; }
  [[nodiscard]] bool done() const noexcept { return i_ >= g_.operators().size(); }
  /// The next operator, which must be `code` with no fused activation; `what` is its role.
  const Operator& next(OpCode code, const std::string& what);
  /// Whether the next operator exists and is `code` with `tensor` as its first input.
  [[nodiscard]] bool next_is(OpCode code, int tensor) const;
  [[noreturn]] void fail(const Operator& op, const std::string& what) const;
  /// A RESHAPE's shape input, if any, must equal its output's declared shape.
  void check_reshape(const Operator& op) const;

  /// Input k of `op` must be tensor `t` (the value the previous step computed).
  void input_is(const Operator& op, std::size_t k, int t, const std::string& what) const;
  /// Input k of `op`: a FLOAT32 constant of `shape` (a scalar: shape {} or {1}).
  [[nodiscard]] std::vector<float> constant(const Operator& op, std::size_t k,
                                            const std::vector<std::int64_t>& shape,
                                            const std::string& what) const;
  /// The shape of input k of `op` (a constant's or a computed tensor's).
  [[nodiscard]] const std::vector<std::int64_t>& input_shape(const Operator& op,
                                                             std::size_t k) const;
  [[nodiscard]] float scalar(const Operator& op, std::size_t k, const std::string& what) const;
  /// A scalar constant that must equal `expected` to within a relative 1e-6.
  void scalar_is(const Operator& op, std::size_t k, double expected,
                 const std::string& what) const;
  /// Index of the constant input of a binary operator whose other input is `t` (else fails).
  [[nodiscard]] std::size_t constant_side(const Operator& op, int t,
                                          const std::string& what) const;
  [[nodiscard]] const std::vector<std::int64_t>& shape(int t) const;
  /// The shape of `t` must be `shape` (the step's name: `what`).
  void shape_is(const Operator& op, int t, const std::vector<std::int64_t>& shape,
                const std::string& what) const;

  /// A STRIDED_SLICE's range [begin, end) per dimension of its input (masks and negative
  /// indices resolved). Fails unless every stride is 1 and the ellipsis and new-axis masks and
  /// `offset` are unset.
  [[nodiscard]] std::vector<std::pair<std::int64_t, std::int64_t>> slice_ranges(
      const Operator& op) const;

  /// Takes the RESHAPE and TRANSPOSE operators that follow `t` (each reading the previous
  /// one's output) and returns where their result's elements come from.
  [[nodiscard]] Layout layout_chain(int t);
  /// Takes the RESHAPE operators that follow `t` and returns the last output (or `t`).
  [[nodiscard]] int skip_reshapes(int t);

 private:
  const Graph& g_;
  std::size_t i_ = 0;
};

// Steps: each takes the next operator and checks it; they return its output tensor.

/// Appends `v` to `to`.
void append(std::vector<float>& to, const std::vector<float>& v);

/// A FULLY_CONNECTED step's output tensor and output features.
struct Fc {
  int y = -1;
  std::int64_t out = 0;
};

/// y = FULLY_CONNECTED(x, W (out, in) [, b (out)]). `out` < 0: the weights' rows. W is
/// appended to `w`; the bias (zeros when the operator has none) to `b`, which may be null
/// only when the operator has no bias.
Fc fully_connected(OpWalk& walk, int x, std::int64_t out, std::int64_t in,
                   std::vector<float>* w, std::vector<float>* b, const std::string& what);

inline constexpr std::size_t kEitherSide = 2;
/// y = op(x, c) or op(c, x) for a constant c of `shape` (`side`: where c must be, or either).
int with_constant(OpWalk& walk, OpCode code, int x, const std::vector<std::int64_t>& shape,
                  std::vector<float>& c, const std::string& what,
                  std::size_t side = kEitherSide);
/// y = op(x, c) for a scalar constant c that must equal `expected`.
int scalar_step(OpWalk& walk, OpCode code, int x, double expected, const std::string& what);
/// y = op(a, b) of two computed tensors, in either order.
int binary(OpWalk& walk, OpCode code, int a, int b, const std::string& what);
/// y = op(x).
int unary(OpWalk& walk, OpCode code, int x, const std::string& what);

}  // namespace passim::tflite
