// SPDX-License-Identifier: Apache-2.0
/// \file Reader for TensorFlow Lite model files (schema version 3, one subgraph). The whole
/// file passes flatbuffers::Verifier (every offset and length inside the file) before anything
/// is read; then every tensor, buffer and operator-code index, every constant's byte size and
/// every shape is checked. The result is plain data: the tensors with their constants, and the
/// operators in the file's order with the options Passim reads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace passim::tflite {

/// Tensor element types, numbered as in the format.
enum class TensorType : std::int8_t {
  kFloat32 = 0, kFloat16 = 1, kInt32 = 2, kUint8 = 3, kInt64 = 4, kString = 5, kBool = 6,
  kInt16 = 7, kComplex64 = 8, kInt8 = 9, kFloat64 = 10,
};
/// "FLOAT32", "INT8", ... ("type 42" when unknown).
[[nodiscard]] std::string tensor_type_name(TensorType t);

/// The builtin operators Passim maps, numbered as in the format (BuiltinOperator).
enum class OpCode : std::int32_t {
  kAdd = 0, kConcatenation = 2, kFullyConnected = 9, kMul = 18, kReshape = 22, kSoftmax = 25,
  kTanh = 28, kGather = 36, kTranspose = 39, kMean = 40, kSub = 41, kStridedSlice = 45,
  kMaximum = 55, kLog = 73, kSqrt = 75, kRsqrt = 76, kPow = 78, kSquaredDifference = 99,
};
/// "FULLY_CONNECTED", ... for the operators above, "CUSTOM(name)" for a custom operator,
/// "builtin 123" for any other.
[[nodiscard]] std::string op_name(std::int32_t code, const std::string& custom_code = {});

/// One tensor. `shape` is outermost first. A constant has `bytes` > 0: its data lies at
/// `offset` in Graph::bytes(), product(shape) elements of its type, little-endian.
struct Tensor {
  std::string name;
  std::vector<std::int64_t> shape;
  TensorType type = TensorType::kFloat32;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  bool quantized = false;  ///< has quantisation scales (Passim reads float models only)
  bool sparse = false;
  bool variable = false;

  [[nodiscard]] bool constant() const noexcept { return bytes > 0; }
  [[nodiscard]] std::int64_t elements() const noexcept;
};

/// The options of the operators Passim maps (the fields of the format's *Options tables;
/// a field the operator does not have keeps its default). `type` is the format's
/// BuiltinOptions number (0: none).
struct OpOptions {
  int type = 0;
  int fused_activation = 0;    ///< 0: none
  bool keep_num_dims = false;  ///< FULLY_CONNECTED
  int weights_format = 0;      ///< FULLY_CONNECTED: 0 = default (rows = output channels)
  bool keep_dims = false;      ///< MEAN
  float beta = 1.0F;           ///< SOFTMAX
  int axis = 0;                ///< CONCATENATION, GATHER
  int batch_dims = 0;          ///< GATHER
  int begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0,
      shrink_axis_mask = 0;    ///< STRIDED_SLICE
  bool slice_offset = false;   ///< STRIDED_SLICE `offset`
};

/// One operator: its builtin code, its input and output tensor indices (-1: an optional input
/// left out), and its options.
struct Operator {
  int index = 0;
  std::int32_t code = 0;
  std::string custom_code;
  std::vector<int> inputs;
  std::vector<int> outputs;
  OpOptions options;
  bool has_custom_options = false;

  [[nodiscard]] OpCode op() const noexcept { return static_cast<OpCode>(code); }
  [[nodiscard]] std::string name() const { return op_name(code, custom_code); }
};

/// A verified TFLite file's one subgraph.
class Graph {
 public:
  /// Reads and checks `path` (at most 256 MiB). Throws std::runtime_error naming the file and
  /// what is wrong: unreadable, not a TFLite file (identifier), rejected by the flatbuffers
  /// verifier (truncated or corrupt), not schema version 3, not exactly one subgraph, an index
  /// out of range, a constant whose size is not its shape's, data outside the flatbuffer.
  [[nodiscard]] static Graph read(const std::filesystem::path& path);
  /// The same checks on bytes already in memory; `origin` names them in errors.
  [[nodiscard]] static Graph parse(std::vector<std::uint8_t> bytes, std::string origin);

  [[nodiscard]] const std::string& origin() const noexcept { return origin_; }
  [[nodiscard]] std::uint32_t version() const noexcept { return version_; }
  [[nodiscard]] const std::string& description() const noexcept { return description_; }
  [[nodiscard]] const std::vector<Tensor>& tensors() const noexcept { return tensors_; }
  [[nodiscard]] const std::vector<Operator>& operators() const noexcept { return ops_; }
  [[nodiscard]] const std::vector<int>& inputs() const noexcept { return inputs_; }
  [[nodiscard]] const std::vector<int>& outputs() const noexcept { return outputs_; }

  /// A constant's raw bytes (empty for a non-constant tensor).
  [[nodiscard]] std::span<const std::uint8_t> data(const Tensor& t) const;
  /// A FLOAT32 constant's values. Throws (naming the file and tensor) otherwise.
  [[nodiscard]] std::vector<float> floats(int tensor) const;
  /// An INT32 constant's values. Throws (naming the file and tensor) otherwise.
  [[nodiscard]] std::vector<std::int32_t> ints(int tensor) const;

 private:
  std::string origin_;
  std::vector<std::uint8_t> bytes_;
  std::uint32_t version_ = 0;
  std::string description_;
  std::vector<Tensor> tensors_;
  std::vector<Operator> ops_;
  std::vector<int> inputs_;
  std::vector<int> outputs_;
};

}  // namespace passim::tflite
