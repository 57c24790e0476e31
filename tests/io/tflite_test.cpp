// SPDX-License-Identifier: Apache-2.0
// TFLite reader: small files built here with flatbuffers, the real KWT-1 file, and broken
// files that must be rejected with a message naming the file and what is wrong.
#include "passim/io/tflite.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "scratch_dir.hpp"
#include "test_data.hpp"
#include "tflite_schema_generated.h"

namespace {

namespace fb = passim::tflite::fb;
using passim::tflite::Graph;
using passim::tflite::OpCode;
using passim::tflite::TensorType;
using passim::test::contains_all;
using passim::test::runtime_error_message;

constexpr char kOrigin[] = "tiny.tflite";

/// What a tiny one-operator model is made of; each test breaks one field.
struct TinySpec {
  std::uint32_t version = 3;
  int subgraphs = 1;
  std::int32_t op_code = 9;  // FULLY_CONNECTED
  std::vector<std::int32_t> op_inputs = {0, 1, -1};
  std::vector<std::int32_t> weight_shape = {2, 4};
  std::uint32_t weight_buffer = 1;
  std::size_t weight_floats = 8;
};

/// A model computing y (1, 2) = x (1, 4) W^T with a FULLY_CONNECTED operator.
std::vector<std::uint8_t> tiny_model(const TinySpec& s) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<float> w(s.weight_floats);
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = 0.5F * float(i) - 1.0F;
  }
  const auto* wbytes = reinterpret_cast<const std::uint8_t*>(w.data());
  const std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {
      fb::CreateBuffer(b), fb::CreateBuffer(b, b.CreateVector(wbytes, w.size() * 4))};
  const std::vector<flatbuffers::Offset<fb::Tensor>> tensors = {
      fb::CreateTensor(b, b.CreateVector<std::int32_t>({1, 4}), 0, 0, b.CreateString("x")),
      fb::CreateTensor(b, b.CreateVector<std::int32_t>(s.weight_shape), 0, s.weight_buffer,
                       b.CreateString("w")),
      fb::CreateTensor(b, b.CreateVector<std::int32_t>({1, 2}), 0, 0, b.CreateString("y"))};
  const auto options = fb::CreateFullyConnectedOptions(b, 0, 0, true).Union();
  const std::vector<flatbuffers::Offset<fb::Operator>> ops = {fb::CreateOperator(
      b, 0, b.CreateVector(s.op_inputs), b.CreateVector<std::int32_t>({2}),
      fb::BuiltinOptions_FullyConnectedOptions, options)};
  const auto tensor_vec = b.CreateVector(tensors);
  const auto op_vec = b.CreateVector(ops);
  std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs;
  for (int i = 0; i < s.subgraphs; ++i) {
    subgraphs.push_back(fb::CreateSubGraph(b, tensor_vec, b.CreateVector<std::int32_t>({0}),
                                           b.CreateVector<std::int32_t>({2}), op_vec));
  }
  const std::vector<flatbuffers::Offset<fb::OperatorCode>> codes = {
      fb::CreateOperatorCode(b, static_cast<std::int8_t>(std::min(s.op_code, 127)), 0, 1,
                             s.op_code)};
  const auto model = fb::CreateModel(b, s.version, b.CreateVector(codes),
                                     b.CreateVector(subgraphs), b.CreateString("tiny"),
                                     b.CreateVector(buffers));
  fb::FinishModelBuffer(b, model);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

std::string parse_error(std::vector<std::uint8_t> bytes) {
  const std::string msg =
      runtime_error_message([&] { (void)Graph::parse(std::move(bytes), kOrigin); });
  EXPECT_TRUE(contains_all(msg, {std::string(kOrigin) + ": "})) << msg;
  return msg;
}

TEST(Tflite, ReadsATinyModel) {
  const Graph g = Graph::parse(tiny_model({}), kOrigin);
  EXPECT_EQ(g.version(), 3U);
  EXPECT_EQ(g.description(), "tiny");
  ASSERT_EQ(g.tensors().size(), 3U);
  ASSERT_EQ(g.operators().size(), 1U);
  const auto& op = g.operators()[0];
  EXPECT_EQ(op.op(), OpCode::kFullyConnected);
  EXPECT_EQ(op.name(), "FULLY_CONNECTED");
  EXPECT_EQ(op.inputs, (std::vector<int>{0, 1, -1}));
  EXPECT_TRUE(op.options.keep_num_dims);
  EXPECT_EQ(op.options.type, 8);
  EXPECT_FALSE(g.tensors()[0].constant());
  EXPECT_EQ(g.tensors()[1].shape, (std::vector<std::int64_t>{2, 4}));
  const std::vector<float> w = g.floats(1);
  ASSERT_EQ(w.size(), 8U);
  EXPECT_EQ(w[0], -1.0F);
  EXPECT_EQ(w[7], 2.5F);
  EXPECT_TRUE(contains_all(runtime_error_message([&] { (void)g.floats(0); }),
                           {kOrigin, "tensor 0 (x)", "FLOAT32 constant"}));
  EXPECT_TRUE(contains_all(runtime_error_message([&] { (void)g.ints(1); }),
                           {kOrigin, "tensor 1 (w)", "INT32 constant", "FLOAT32"}));
}

TEST(Tflite, RejectsBrokenStructure) {
  EXPECT_TRUE(contains_all(parse_error(tiny_model({.version = 2})),
                           {"schema version", "expected 3", "found 2"}));
  EXPECT_TRUE(contains_all(parse_error(tiny_model({.subgraphs = 2})),
                           {"subgraphs", "expected 1", "found 2"}));
  EXPECT_TRUE(contains_all(parse_error(tiny_model({.op_inputs = {0, 7, -1}})),
                           {"operator 0 (FULLY_CONNECTED)", "inputs", "below 3", "found 7"}));
  EXPECT_TRUE(contains_all(parse_error(tiny_model({.op_inputs = {0, 1, -2}})),
                           {"operator 0", "found -2"}));
  EXPECT_TRUE(contains_all(parse_error(tiny_model({.weight_shape = {2, -4}})),
                           {"tensor 1 (w)", "shape", "found -4"}));
  EXPECT_TRUE(contains_all(parse_error(tiny_model({.weight_buffer = 5})),
                           {"tensor 1 (w)", "buffer", "below 2", "found 5"}));
  EXPECT_TRUE(contains_all(parse_error(tiny_model({.weight_floats = 7})),
                           {"tensor 1 (w)", "expected 32 bytes", "found 28"}));
}

TEST(Tflite, NamesUnknownOperators) {
  const Graph g = Graph::parse(tiny_model({.op_code = 111}), kOrigin);
  EXPECT_EQ(g.operators()[0].name(), "builtin 111");
}

TEST(Tflite, RejectsNonTfliteAndTruncatedFiles) {
  auto bytes = tiny_model({});
  auto wrong_id = bytes;
  wrong_id[4] = 'X';
  EXPECT_TRUE(contains_all(parse_error(wrong_id),
                           {"not a TFLite file", "\"TFL3\" at byte 4", "\"XFL3\""}));
  EXPECT_TRUE(contains_all(parse_error({1, 2, 3}), {"not a TFLite file", "3 bytes"}));
  for (std::size_t keep = 8; keep < bytes.size(); keep += 7) {
    const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + long(keep));
    EXPECT_TRUE(contains_all(parse_error(cut), {"verifier", "truncated or corrupt"}))
        << keep << " bytes";
  }
  auto bad_root = bytes;
  bad_root[3] = 0x7F;  // the root table's offset far outside the file
  EXPECT_TRUE(contains_all(parse_error(bad_root), {"verifier"}));
}

// Every single flipped byte of a small file either reads or gets an error naming the file:
// never a crash (the sanitizer builds run this too).
TEST(Tflite, EveryFlippedByteIsReadOrRejected) {
  const auto bytes = tiny_model({});
  int rejected = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    auto flipped = bytes;
    flipped[i] ^= 0xFF;
    try {
      (void)Graph::parse(std::move(flipped), kOrigin);
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(contains_all(e.what(), {std::string(kOrigin) + ": "})) << e.what();
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
}

TEST(Tflite, ReadsKwt1) {
  const auto path = passim::test::data_dir() / "models" / "kwt1" / "non_stream.tflite";
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path << " not found (set PASSIM_DATA)";
  }
  const Graph g = Graph::read(path);
  EXPECT_EQ(g.tensors().size(), 809U);
  ASSERT_EQ(g.inputs().size(), 1U);
  ASSERT_EQ(g.outputs().size(), 1U);
  const auto& in = g.tensors()[std::size_t(g.inputs()[0])];
  EXPECT_EQ(in.shape, (std::vector<std::int64_t>{1, 16000}));
  EXPECT_EQ(in.type, TensorType::kFloat32);
  EXPECT_EQ(g.tensors()[std::size_t(g.outputs()[0])].shape,
            (std::vector<std::int64_t>{1, 12}));
  // The operator counts that ../shared/data/models/README.md gives for this file.
  std::map<std::string, int> count;
  for (const auto& op : g.operators()) {
    ++count[op.name()];
  }
  const std::map<std::string, int> expected = {
      {"FULLY_CONNECTED", 102}, {"MUL", 136}, {"ADD", 98}, {"MEAN", 48},
      {"SQUARED_DIFFERENCE", 24}, {"RSQRT", 24}, {"SOFTMAX", 12}, {"POW", 12}, {"TANH", 12},
      {"TRANSPOSE", 36}, {"RESHAPE", 76}, {"SUB", 25}, {"GATHER", 1}, {"SQRT", 1},
      {"MAXIMUM", 1}, {"LOG", 1}, {"CONCATENATION", 1}, {"STRIDED_SLICE", 2}};
  EXPECT_EQ(count, expected);
  EXPECT_EQ(g.operators().size(), 612U);
}

}  // namespace
