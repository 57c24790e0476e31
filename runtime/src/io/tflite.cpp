// SPDX-License-Identifier: Apache-2.0
#include "passim/io/tflite.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <flatbuffers/flatbuffers.h>

#include "passim/io/file.hpp"
#include "tflite_schema_generated.h"  // generated from tflite_schema.fbs by flatc

namespace passim::tflite {
namespace {

constexpr std::uint64_t kMaxFileBytes = 256ULL << 20;
constexpr int kMaxRank = 8;

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw std::runtime_error(origin + ": " + what);
}

int element_bytes(TensorType t) {
  switch (t) {
    case TensorType::kFloat32: case TensorType::kInt32: return 4;
    case TensorType::kFloat16: case TensorType::kInt16: return 2;
    case TensorType::kUint8: case TensorType::kInt8: case TensorType::kBool: return 1;
    case TensorType::kInt64: case TensorType::kFloat64: case TensorType::kComplex64: return 8;
    default: return 0;  // strings and unknown types: no fixed size
  }
}

std::vector<int> index_list(const flatbuffers::Vector<std::int32_t>* v) {
  std::vector<int> out;
  if (v != nullptr) {
    out.assign(v->begin(), v->end());
  }
  return out;
}

/// The fields of the options tables Passim reads, whatever their type.
OpOptions read_options(const fb::Operator& op) {
  OpOptions o;
  o.type = static_cast<int>(op.builtin_options_type());
  if (const auto* fc = op.builtin_options_as_FullyConnectedOptions()) {
    o.fused_activation = fc->fused_activation_function();
    o.weights_format = fc->weights_format();
    o.keep_num_dims = fc->keep_num_dims();
  } else if (const auto* sm = op.builtin_options_as_SoftmaxOptions()) {
    o.beta = sm->beta();
  } else if (const auto* cat = op.builtin_options_as_ConcatenationOptions()) {
    o.axis = cat->axis();
    o.fused_activation = cat->fused_activation_function();
  } else if (const auto* add = op.builtin_options_as_AddOptions()) {
    o.fused_activation = add->fused_activation_function();
  } else if (const auto* mul = op.builtin_options_as_MulOptions()) {
    o.fused_activation = mul->fused_activation_function();
  } else if (const auto* sub = op.builtin_options_as_SubOptions()) {
    o.fused_activation = sub->fused_activation_function();
  } else if (const auto* g = op.builtin_options_as_GatherOptions()) {
    o.axis = g->axis();
    o.batch_dims = g->batch_dims();
  } else if (const auto* r = op.builtin_options_as_ReducerOptions()) {
    o.keep_dims = r->keep_dims();
  } else if (const auto* s = op.builtin_options_as_StridedSliceOptions()) {
    o.begin_mask = s->begin_mask();
    o.end_mask = s->end_mask();
    o.ellipsis_mask = s->ellipsis_mask();
    o.new_axis_mask = s->new_axis_mask();
    o.shrink_axis_mask = s->shrink_axis_mask();
    o.slice_offset = s->offset();
  }
  return o;
}

/// Tensor `i` of the subgraph, with its constant's place in the file checked.
Tensor read_tensor(const std::string& origin, const fb::Model& model, const fb::Tensor& t,
                   std::size_t i, const std::uint8_t* base) {
  Tensor out;
  out.name = t.name() != nullptr ? t.name()->str() : std::string();
  const std::string who = fmt::format("tensor {} ({})", i, out.name);
  out.type = static_cast<TensorType>(t.type());
  if (t.shape() != nullptr) {
    if (t.shape()->size() > kMaxRank) {
      fail(origin, fmt::format("{}: shape: expected at most {} dimensions, found {}", who,
                               kMaxRank, t.shape()->size()));
    }
    for (const std::int32_t d : *t.shape()) {
      if (d < 0) {
        fail(origin, fmt::format("{}: shape: expected dimensions >= 0, found {}", who, d));
      }
      out.shape.push_back(d);
    }
  }
  out.quantized = t.quantization() != nullptr && t.quantization()->scale() != nullptr &&
                  t.quantization()->scale()->size() > 0;
  out.sparse = t.sparsity() != nullptr;
  out.variable = t.is_variable();
  const auto* buffers = model.buffers();
  const std::size_t n_buffers = buffers != nullptr ? buffers->size() : 0;
  if (t.buffer() >= n_buffers) {
    fail(origin, fmt::format("{}: buffer: expected an index below {}, found {}", who,
                             n_buffers, t.buffer()));
  }
  const fb::Buffer* buf = buffers->Get(t.buffer());
  if (buf->offset() > 1) {
    fail(origin, fmt::format("{}: its data lies outside the flatbuffer (buffer offset {}): "
                             "files over 2 GB are not supported", who, buf->offset()));
  }
  if (buf->data() == nullptr || buf->data()->size() == 0) {
    return out;
  }
  const int esize = element_bytes(out.type);
  const auto expected = static_cast<std::uint64_t>(out.elements()) * std::uint64_t(esize);
  if (esize == 0 || expected != buf->data()->size()) {
    fail(origin, fmt::format("{}: constant data: expected {} bytes ({} {} elements), found {}",
                             who, expected, out.elements(), tensor_type_name(out.type),
                             buf->data()->size()));
  }
  out.offset = static_cast<std::uint64_t>(buf->data()->data() - base);
  out.bytes = buf->data()->size();
  return out;
}

void check_indices(const std::string& origin, const std::string& who, const char* field,
                   const std::vector<int>& list, std::size_t n_tensors, bool optional) {
  for (const int t : list) {
    if ((t < 0 && !(optional && t == -1)) || t >= static_cast<int>(n_tensors)) {
      fail(origin, fmt::format("{}: {}: expected tensor indices below {}, found {}", who, field,
                               n_tensors, t));
    }
  }
}

/// Operator `i`, with its operator code and tensor indices checked.
Operator read_operator(const std::string& origin, const fb::Model& model, const fb::Operator& op,
                       std::size_t i, std::size_t n_tensors) {
  const std::string who = fmt::format("operator {}", i);
  const std::size_t n_codes =
      model.operator_codes() != nullptr ? model.operator_codes()->size() : 0;
  if (op.opcode_index() >= n_codes) {
    fail(origin, fmt::format("{}: opcode_index: expected below {}, found {}", who, n_codes,
                             op.opcode_index()));
  }
  const fb::OperatorCode& code = *model.operator_codes()->Get(op.opcode_index());
  Operator o;
  o.index = static_cast<int>(i);
  o.code = std::max<std::int32_t>(code.builtin_code(), code.deprecated_builtin_code());
  o.custom_code = code.custom_code() != nullptr ? code.custom_code()->str() : "";
  o.inputs = index_list(op.inputs());
  o.outputs = index_list(op.outputs());
  check_indices(origin, who + " (" + o.name() + ")", "inputs", o.inputs, n_tensors, true);
  check_indices(origin, who + " (" + o.name() + ")", "outputs", o.outputs, n_tensors, false);
  o.options = read_options(op);
  o.has_custom_options = op.custom_options() != nullptr && op.custom_options()->size() > 0;
  return o;
}

}  // namespace

std::string tensor_type_name(TensorType t) {
  static constexpr const char* kNames[] = {"FLOAT32", "FLOAT16", "INT32",     "UINT8",
                                           "INT64",   "STRING",  "BOOL",      "INT16",
                                           "COMPLEX64", "INT8",  "FLOAT64"};
  const auto i = static_cast<int>(t);
  if (i >= 0 && i < static_cast<int>(std::size(kNames))) {
    return kNames[i];
  }
  return fmt::format("type {}", i);
}

std::string op_name(std::int32_t code, const std::string& custom_code) {
  switch (static_cast<OpCode>(code)) {
    case OpCode::kAdd: return "ADD";
    case OpCode::kConcatenation: return "CONCATENATION";
    case OpCode::kFullyConnected: return "FULLY_CONNECTED";
    case OpCode::kMul: return "MUL";
    case OpCode::kReshape: return "RESHAPE";
    case OpCode::kSoftmax: return "SOFTMAX";
    case OpCode::kTanh: return "TANH";
    case OpCode::kGather: return "GATHER";
    case OpCode::kTranspose: return "TRANSPOSE";
    case OpCode::kMean: return "MEAN";
    case OpCode::kSub: return "SUB";
    case OpCode::kStridedSlice: return "STRIDED_SLICE";
    case OpCode::kMaximum: return "MAXIMUM";
    case OpCode::kLog: return "LOG";
    case OpCode::kSqrt: return "SQRT";
    case OpCode::kRsqrt: return "RSQRT";
    case OpCode::kPow: return "POW";
    case OpCode::kSquaredDifference: return "SQUARED_DIFFERENCE";
  }
  if (code == 32) {  // CUSTOM
    return "CUSTOM(" + custom_code + ")";
  }
  return fmt::format("builtin {}", code);
}

std::int64_t Tensor::elements() const noexcept {
  constexpr std::int64_t kLimit = std::int64_t{1} << 40;  // more than any file this reader takes
  std::int64_t n = 1;
  for (const std::int64_t d : shape) {
    if (d != 0 && n > kLimit / d) {
      return kLimit;
    }
    n *= d;
  }
  return n;
}

Graph Graph::read(const std::filesystem::path& path) {
  return parse(read_file(path, kMaxFileBytes), path.string());
}

Graph Graph::parse(std::vector<std::uint8_t> bytes, std::string origin) {
  Graph g;
  g.origin_ = std::move(origin);
  g.bytes_ = std::move(bytes);
  const std::uint8_t* base = g.bytes_.data();
  const std::size_t size = g.bytes_.size();
  if (size < 8 || !fb::ModelBufferHasIdentifier(base)) {
    const std::string found =
        size < 8 ? fmt::format("a file of {} bytes", size)
                 : fmt::format("\"{}\"", std::string(reinterpret_cast<const char*>(base) + 4, 4));
    fail(g.origin_, "not a TFLite file: expected the identifier \"TFL3\" at byte 4, found " +
                        found);
  }
  flatbuffers::Verifier verifier(base, size, 64, 10'000'000);
  if (!fb::VerifyModelBuffer(verifier)) {
    fail(g.origin_, "the flatbuffers verifier rejects the file: an offset, length or table "
                    "lies outside it (truncated or corrupt)");
  }
  const fb::Model& model = *fb::GetModel(base);
  g.version_ = model.version();
  if (g.version_ != 3) {
    fail(g.origin_, fmt::format("schema version: expected 3, found {}", g.version_));
  }
  g.description_ = model.description() != nullptr ? model.description()->str() : "";
  const std::size_t n_sub = model.subgraphs() != nullptr ? model.subgraphs()->size() : 0;
  if (n_sub != 1) {
    fail(g.origin_, fmt::format("subgraphs: expected 1, found {}", n_sub));
  }
  const fb::SubGraph& sg = *model.subgraphs()->Get(0);
  if (sg.tensors() != nullptr) {
    for (std::size_t i = 0; i < sg.tensors()->size(); ++i) {
      const fb::Tensor& t = *sg.tensors()->Get(static_cast<flatbuffers::uoffset_t>(i));
      g.tensors_.push_back(read_tensor(g.origin_, model, t, i, base));
    }
  }
  const std::size_t n_tensors = g.tensors_.size();
  g.inputs_ = index_list(sg.inputs());
  g.outputs_ = index_list(sg.outputs());
  check_indices(g.origin_, "subgraph", "inputs", g.inputs_, n_tensors, false);
  check_indices(g.origin_, "subgraph", "outputs", g.outputs_, n_tensors, false);
  if (sg.operators() == nullptr) {
    return g;
  }
  for (std::size_t i = 0; i < sg.operators()->size(); ++i) {
    g.ops_.push_back(read_operator(g.origin_, model,
                                   *sg.operators()->Get(static_cast<flatbuffers::uoffset_t>(i)),
                                   i, n_tensors));
  }
  return g;
}

std::span<const std::uint8_t> Graph::data(const Tensor& t) const {
  return {bytes_.data() + t.offset, static_cast<std::size_t>(t.bytes)};
}

std::vector<float> Graph::floats(int tensor) const {
  const Tensor& t = tensors_.at(static_cast<std::size_t>(tensor));
  if (t.type != TensorType::kFloat32 || !t.constant()) {
    fail(origin_, fmt::format("tensor {} ({}): expected a FLOAT32 constant, found {} {}", tensor,
                              t.name, t.constant() ? "a constant of" : "a non-constant",
                              tensor_type_name(t.type)));
  }
  std::vector<float> out(static_cast<std::size_t>(t.elements()));
  std::memcpy(out.data(), bytes_.data() + t.offset, out.size() * sizeof(float));
  return out;
}

std::vector<std::int32_t> Graph::ints(int tensor) const {
  const Tensor& t = tensors_.at(static_cast<std::size_t>(tensor));
  if (t.type != TensorType::kInt32 || !t.constant()) {
    fail(origin_, fmt::format("tensor {} ({}): expected an INT32 constant, found {} {}", tensor,
                              t.name, t.constant() ? "a constant of" : "a non-constant",
                              tensor_type_name(t.type)));
  }
  std::vector<std::int32_t> out(static_cast<std::size_t>(t.elements()));
  std::memcpy(out.data(), bytes_.data() + t.offset, out.size() * sizeof(std::int32_t));
  return out;
}

}  // namespace passim::tflite
