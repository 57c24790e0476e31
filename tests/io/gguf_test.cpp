// SPDX-License-Identifier: Apache-2.0
// GGUF reader: well-formed files built in the test, the real stories260K.gguf, and malformed
// files that must be rejected with a message naming the file and the field.
#include "passim/io/gguf.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gguf_writer.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace {

using passim::GgmlType;
using passim::GgufFile;
using passim::GgufType;
using passim::test::contains_all;
using passim::test::GgufImage;
using passim::test::GgufWriter;
using passim::test::patch;
using passim::test::read_bytes;
using passim::test::runtime_error_message;
using passim::test::ScratchDir;
using passim::test::write_bytes;

constexpr char kSource[] = "test.gguf";
constexpr auto kF32 = static_cast<std::uint32_t>(GgmlType::kF32);

/// Parses `bytes`, which must fail, and returns the message (checked to name the file).
std::string parse_error(std::vector<std::uint8_t> bytes) {
  const std::string msg =
      runtime_error_message([&] { (void)GgufFile::parse(std::move(bytes), kSource); });
  EXPECT_TRUE(contains_all(msg, {std::string(kSource) + ": "}));
  return msg;
}

std::vector<float> iota_floats(std::size_t n, float start) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = start + 0.25f * float(i);
  }
  return v;
}

/// A small valid file: a few keys of every kind and two F32 tensors.
GgufWriter small_writer() {
  GgufWriter w;
  w.str("general.name", std::string(300, 'n'))  // room for the header's count bounds
      .str("general.architecture", "llama")
      .u32("test.u32", 7)
      .strings("test.strings", {"a", "",
                                "\xE2\x96\x81"
                                "b"})
      .array<float>("test.f32s", GgufType::kFloat32, {1.5f, -2.0f})
      .tensor_f32("a.weight", {4, 3}, iota_floats(12, 1.0f))
      .tensor_f32("b.weight", {5}, iota_floats(5, -1.0f));
  return w;
}

TEST(GgufReader, ParsesEveryMetadataType) {
  GgufWriter w;
  w.raw_kv("t.u8", 0, {200})
      .raw_kv("t.i8", 1, {0xFE})
      .raw_kv("t.u16", 2, {0x34, 0x12})
      .raw_kv("t.i16", 3, {0xFF, 0xFF})
      .u32("t.u32", 4000000000u)
      .i32("t.i32", -5)
      .f32("t.f32", 0.125f)
      .boolean("t.bool", 1)
      .str("t.string", "hello")
      .u64("t.u64", std::uint64_t{1} << 40)
      .raw_kv("t.i64", 11, {1, 0, 0, 0, 0, 0, 0, 0})
      .f64("t.f64", 1e-300)
      .array<std::int32_t>("t.i32s", GgufType::kInt32, {3, -4, 5})
      .array<std::uint8_t>("t.bools", GgufType::kBool, {0, 1})
      .strings("t.strings", {"x", "yz"});
  const GgufFile f = GgufFile::parse(w.build().bytes, kSource);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.metadata().size(), 15u);
  EXPECT_EQ(f.get_uint("t.u8"), 200u);
  EXPECT_EQ(f.get_uint("t.u16"), 0x1234u);
  EXPECT_EQ(f.get_uint("t.u32"), 4000000000u);
  EXPECT_EQ(f.get_uint("t.u64"), std::uint64_t{1} << 40);
  EXPECT_EQ(f.get_uint("t.i64"), 1u);
  EXPECT_EQ(f.get_float("t.f32"), 0.125);
  EXPECT_EQ(f.get_float("t.f64"), 1e-300);
  EXPECT_TRUE(f.get_bool("t.bool"));
  EXPECT_EQ(f.get_string("t.string"), "hello");
  EXPECT_EQ(f.get_int_array("t.i32s"), (std::vector<std::int64_t>{3, -4, 5}));
  EXPECT_EQ(f.get_string_array("t.strings"), (std::vector<std::string>{"x", "yz"}));
  EXPECT_EQ(f.at("t.bools").count, 2u);
  EXPECT_EQ(f.at("t.bools").elem_type, GgufType::kBool);
  EXPECT_EQ(f.at("t.i8").raw, (std::vector<std::uint8_t>{0xFE}));
  EXPECT_EQ(f.find("t.missing"), nullptr);
  EXPECT_TRUE(f.tensors().empty());
}

TEST(GgufReader, IntegersOfEveryWidthWidenWithTheirSign) {
  GgufWriter w;
  w.array<std::int8_t>("t.i8s", GgufType::kInt8, {-128, -1, 127})
      .array<std::uint8_t>("t.u8s", GgufType::kUint8, {0, 255})
      .array<std::int16_t>("t.i16s", GgufType::kInt16, {-32768, -2, 32767})
      .array<std::uint16_t>("t.u16s", GgufType::kUint16, {65535})
      .array<std::int32_t>("t.i32s", GgufType::kInt32, {INT32_MIN, INT32_MAX})
      .array<std::uint32_t>("t.u32s", GgufType::kUint32, {UINT32_MAX})
      .array<std::int64_t>("t.i64s", GgufType::kInt64, {INT64_MIN, -1, INT64_MAX})
      .array<std::uint64_t>("t.u64s", GgufType::kUint64, {std::uint64_t{1} << 63})
      .raw_kv("t.i8", 1, {0xFE})
      .raw_kv("t.i16", 3, {0x00, 0x80});
  const GgufFile f = GgufFile::parse(w.build().bytes, kSource);
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(f.get_int_array("t.i8s"), (V{-128, -1, 127}));
  EXPECT_EQ(f.get_int_array("t.u8s"), (V{0, 255}));
  EXPECT_EQ(f.get_int_array("t.i16s"), (V{-32768, -2, 32767}));
  EXPECT_EQ(f.get_int_array("t.u16s"), (V{65535}));
  EXPECT_EQ(f.get_int_array("t.i32s"), (V{INT32_MIN, INT32_MAX}));
  EXPECT_EQ(f.get_int_array("t.u32s"), (V{UINT32_MAX}));
  EXPECT_EQ(f.get_int_array("t.i64s"), (V{INT64_MIN, -1, INT64_MAX}));
  EXPECT_TRUE(contains_all(runtime_error_message([&] { (void)f.get_int_array("t.u64s"); }),
                           {"metadata 't.u64s' element 0", "expected a value below 2^63",
                            "found 9223372036854775808"}));
  EXPECT_TRUE(contains_all(runtime_error_message([&] { (void)f.get_uint("t.i8"); }),
                           {"metadata 't.i8'", "expected a value >= 0, found -2"}));
  EXPECT_TRUE(contains_all(runtime_error_message([&] { (void)f.get_uint("t.i16"); }),
                           {"metadata 't.i16'", "expected a value >= 0, found -32768"}));
}

TEST(GgufReader, ParsesTensorInfosAndData) {
  const GgufImage img = small_writer().build();
  const GgufFile f = GgufFile::parse(img.bytes, kSource);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset(), img.at("data"));
  EXPECT_EQ(f.data_offset() % 32, 0u);
  ASSERT_EQ(f.tensors().size(), 2u);
  const passim::GgufTensorInfo* a = f.find_tensor("a.weight");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dims, (std::vector<std::uint64_t>{4, 3}));
  EXPECT_EQ(a->type, GgmlType::kF32);
  EXPECT_EQ(a->offset, 0u);
  EXPECT_EQ(a->elements, 12u);
  EXPECT_EQ(a->bytes, 48u);
  EXPECT_EQ(f.tensor_f32(*a), iota_floats(12, 1.0f));
  const passim::GgufTensorInfo* b = f.find_tensor("b.weight");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->offset, 64u);  // 48 bytes rounded up to the alignment
  EXPECT_EQ(f.tensor_f32(*b), iota_floats(5, -1.0f));
  EXPECT_EQ(f.find_tensor("c.weight"), nullptr);
  EXPECT_EQ(f.get_string_array("test.strings")[2],
            "\xE2\x96\x81"
            "b");
  EXPECT_EQ(f.get_f32_array("test.f32s"), (std::vector<float>{1.5f, -2.0f}));
}

TEST(GgufReader, AcceptsVersion2) {
  const GgufFile f = GgufFile::parse(small_writer().build(2).bytes, kSource);
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.tensors().size(), 2u);
}

TEST(GgufReader, HonoursGeneralAlignment) {
  GgufWriter w = small_writer();
  w.u32("general.alignment", 64);
  const GgufImage img = w.build(3, 64);
  const GgufFile f = GgufFile::parse(img.bytes, kSource);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  EXPECT_EQ(f.find_tensor("b.weight")->offset, 64u);
  EXPECT_EQ(f.tensor_f32(*f.find_tensor("b.weight")), iota_floats(5, -1.0f));
}

TEST(GgufReader, HeaderWithoutTensorsOrKeys) {
  const GgufFile f = GgufFile::parse(GgufWriter().build().bytes, kSource);
  EXPECT_TRUE(f.metadata().empty());
  EXPECT_TRUE(f.tensors().empty());
}

TEST(GgufReader, F16TensorIsWidenedExactly) {
  const std::vector<std::uint16_t> halves = {0x3C00, 0xC000, 0x3800, 0x7BFF,
                                             0x0001, 0x8000, 0x0400, 0x3555};
  std::vector<std::uint8_t> data(halves.size() * 2);
  std::memcpy(data.data(), halves.data(), data.size());
  GgufWriter w;
  w.tensor("h", {8}, static_cast<std::uint32_t>(GgmlType::kF16), data);
  const GgufFile f = GgufFile::parse(w.build().bytes, kSource);
  const auto v = f.tensor_f32(*f.find_tensor("h"));
  const std::vector<float> want = {
      1.0f,           -2.0f, 0.5f, 65504.0f, std::ldexp(1.0f, -24), -0.0f, std::ldexp(1.0f, -14),
      0.333251953125f};
  EXPECT_EQ(v, want);
  EXPECT_TRUE(std::signbit(v[5]));
  EXPECT_TRUE(std::isinf(passim::f16_to_f32(0x7C00)));
  EXPECT_TRUE(std::isnan(passim::f16_to_f32(0x7E00)));
}

TEST(GgufReader, RecognisesGgufByMagic) {
  const ScratchDir dir;
  write_bytes(dir / "model.bin", small_writer().build().bytes);  // the name does not matter
  write_bytes(dir / "other.gguf", {'G', 'G', 'U', 'G', 3, 0, 0, 0});
  write_bytes(dir / "short", {'G', 'G', 'U'});
  EXPECT_TRUE(passim::is_gguf_file(dir / "model.bin"));
  EXPECT_FALSE(passim::is_gguf_file(dir / "other.gguf"));
  EXPECT_FALSE(passim::is_gguf_file(dir / "short"));
  EXPECT_FALSE(passim::is_gguf_file(dir / "missing"));
  EXPECT_FALSE(passim::is_gguf_file(dir.path()));
}

TEST(GgufReader, NamesADamagedMagic) {
  const ScratchDir dir;
  auto bytes = small_writer().build().bytes;
  write_bytes(dir / "ok.gguf", bytes);
  bytes[2] = 'V';  // "GGVF"
  write_bytes(dir / "damaged.gguf", bytes);
  write_bytes(dir / "other.bin", {'G', 'X', 'Y', 'F', 3, 0, 0, 0});  // two bytes differ
  EXPECT_EQ(passim::gguf_magic_near_miss(dir / "ok.gguf"), "");
  EXPECT_EQ(passim::gguf_magic_near_miss(dir / "other.bin"), "");
  EXPECT_EQ(passim::gguf_magic_near_miss(dir / "missing"), "");
  const std::string msg = passim::gguf_magic_near_miss(dir / "damaged.gguf");
  EXPECT_TRUE(contains_all(msg, {(dir / "damaged.gguf").string(), "header magic",
                                 "expected \"GGUF\"", "found 47 47 56 46", "damaged GGUF"}))
      << msg;
}

TEST(GgufReader, ReadsStories260K) {
  PASSIM_REQUIRE_GGUF();
  const GgufFile f = GgufFile::read(passim::test::gguf_model_path());
  EXPECT_EQ(f.source(), passim::test::gguf_model_path().string());
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.metadata().size(), 19u);
  EXPECT_EQ(f.tensors().size(), 48u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset(), 14176u);  // tensor infos end at 14152
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_uint("llama.embedding_length"), 64u);
  EXPECT_EQ(f.get_uint("llama.context_length"), 2048u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 512u);
  EXPECT_EQ(f.get_f32_array("tokenizer.ggml.scores").size(), 512u);
  EXPECT_EQ(f.get_int_array("tokenizer.ggml.token_type").size(), 512u);
  std::uint64_t bytes = 0;
  for (const auto& t : f.tensors()) {
    EXPECT_EQ(t.type, GgmlType::kF32) << t.name;
    bytes += t.bytes;
  }
  EXPECT_EQ(f.data_offset() + bytes, f.bytes().size());  // no padding was needed
  const auto* embd = f.find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->dims, (std::vector<std::uint64_t>{64, 512}));
}

// ---- malformed files ------------------------------------------------------------------------

TEST(GgufReaderBad, EmptyAndShortFiles) {
  EXPECT_TRUE(contains_all(parse_error({}), {"header magic", "found a 0-byte file"}));
  EXPECT_TRUE(contains_all(parse_error({'G', 'G'}), {"header magic", "found a 2-byte file"}));
}

TEST(GgufReaderBad, WrongMagic) {
  auto bytes = small_writer().build().bytes;
  bytes[3] = 'G';
  EXPECT_TRUE(
      contains_all(parse_error(bytes), {"header magic", "expected \"GGUF\"", "found 47 47 55 47"}));
}

TEST(GgufReaderBad, UnsupportedVersions) {
  for (const std::uint32_t v : {0u, 1u, 4u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(v);
    const auto msg = parse_error(small_writer().build(v).bytes);
    EXPECT_TRUE(
        contains_all(msg, {"header version", "expected 2 or 3", "found " + std::to_string(v)}));
  }
  const auto msg = parse_error(small_writer().build(0x03000000u).bytes);
  EXPECT_TRUE(contains_all(msg, {"header version", "big-endian"}));
}

TEST(GgufReaderBad, EveryTruncationThrows) {
  // Cut the file at every length: each must give an error, never a crash or an overread
  // (this test runs under ASan in the asan preset).
  const auto bytes = small_writer().build().bytes;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE(n);
    const auto msg = parse_error({bytes.begin(), bytes.begin() + std::ptrdiff_t(n)});
    EXPECT_TRUE(msg.find("truncated") != std::string::npos ||
                msg.find("-byte file") != std::string::npos)
        << msg;
  }
}

TEST(GgufReaderBad, TruncationNamesTheField) {
  const GgufImage img = small_writer().build();
  auto cut = [&](std::size_t n) {
    return parse_error({img.bytes.begin(), img.bytes.begin() + std::ptrdiff_t(n)});
  };
  EXPECT_TRUE(contains_all(
      cut(12), {"header tensor_count", "expected 8 bytes at offset 8", "found 4", "truncated"}));
  EXPECT_TRUE(contains_all(cut(img.at("key:test.u32") + 10),
                           {"metadata[2] key length", "expected at most 2", "found 8"}));
  EXPECT_TRUE(contains_all(cut(img.at("value:test.u32") + 2),
                           {"metadata 'test.u32'", "expected 4 bytes", "found 2", "truncated"}));
  EXPECT_TRUE(contains_all(cut(img.at("elem:test.strings:2") + 9),
                           {"metadata 'test.strings' element 2 length", "truncated"}));
  EXPECT_TRUE(contains_all(cut(img.at("dims:b.weight") + 3),
                           {"tensor 'b.weight' dims[0]", "expected 8 bytes", "truncated"}));
  EXPECT_TRUE(contains_all(cut(img.at("offset:b.weight")),
                           {"tensor 'b.weight' offset", "expected 8 bytes", "truncated"}));
  EXPECT_TRUE(contains_all(cut(img.at("infos_end")), {"data section", "truncated"}));
  EXPECT_TRUE(contains_all(cut(img.at("data:b.weight") + 4),
                           {"tensor 'b.weight' data", "expected 20 bytes at data offset 64",
                            "found a 68-byte data section"}));
}

TEST(GgufReaderBad, Stories260KTruncatedInEachSection) {
  PASSIM_REQUIRE_GGUF();
  const auto bytes = read_bytes(passim::test::gguf_model_path());
  struct Cut {
    std::size_t at;
    const char* field;
  };
  const Cut cuts[] = {
      {20, "header metadata_kv_count"},                   // inside the header
      {5000, "metadata 'tokenizer.ggml.tokens'"},         // inside the token strings
      {7000, "metadata 'tokenizer.ggml.scores'"},         // inside the scores array
      {11100, "metadata[13] key"},                        // inside a key
      {14022, "tensor 'blk.4.ffn_down.weight' dims[1]"},  // inside the tensor infos
      {14160, "data section"},                            // between the infos and the data
      {600000, "data"},                                   // inside the tensor data
      {bytes.size() - 1, "tensor 'blk.4.ffn_norm.weight' data"},
  };
  for (const Cut& c : cuts) {
    SCOPED_TRACE(c.at);
    const auto msg = parse_error({bytes.begin(), bytes.begin() + std::ptrdiff_t(c.at)});
    EXPECT_TRUE(contains_all(msg, {c.field, "truncated"}));
  }
}

TEST(GgufReaderBad, HugeCountsInTheHeader) {
  GgufImage img = small_writer().build();
  patch(img.bytes, img.at("tensor_count"), std::uint64_t{1} << 60);
  EXPECT_TRUE(contains_all(parse_error(img.bytes), {"header tensor_count", "expected at most",
                                                    "found 1152921504606846976"}));
  img = small_writer().build();
  patch(img.bytes, img.at("kv_count"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_TRUE(contains_all(parse_error(img.bytes), {"header metadata_kv_count", "expected at most",
                                                    "found 18446744073709551615"}));
}

TEST(GgufReaderBad, HugeStringLengths) {
  for (const std::uint64_t len :
       {std::uint64_t{1} << 63, std::uint64_t{1} << 32, std::uint64_t{100000}}) {
    SCOPED_TRACE(len);
    GgufImage img = small_writer().build();
    patch(img.bytes, img.at("key:test.u32"), len);
    EXPECT_TRUE(contains_all(parse_error(img.bytes), {"metadata[2] key length", "expected at most",
                                                      "found " + std::to_string(len)}));
    img = small_writer().build();
    patch(img.bytes, img.at("elem:test.strings:1"), len);
    EXPECT_TRUE(contains_all(parse_error(img.bytes),
                             {"metadata 'test.strings' element 1 length", "expected at most"}));
    img = small_writer().build();
    patch(img.bytes, img.at("value:general.architecture"), len);
    EXPECT_TRUE(contains_all(parse_error(img.bytes),
                             {"metadata 'general.architecture' length", "expected at most"}));
    img = small_writer().build();
    patch(img.bytes, img.at("name:b.weight"), len);
    EXPECT_TRUE(
        contains_all(parse_error(img.bytes), {"tensor_info[1] name length", "expected at most"}));
  }
}

TEST(GgufReaderBad, KeyLongerThan65535Bytes) {
  GgufWriter w;
  w.u32(std::string(65536, 'k'), 1);
  EXPECT_TRUE(contains_all(parse_error(w.build().bytes),
                           {"metadata[0] key length", "expected at most 65535", "found 65536"}));
}

TEST(GgufReaderBad, HugeArrayCounts) {
  for (const char* key : {"test.strings", "test.f32s"}) {
    SCOPED_TRACE(key);
    GgufImage img = small_writer().build();
    patch(img.bytes, img.at(std::string("count:") + key), std::uint64_t{1} << 61);
    EXPECT_TRUE(
        contains_all(parse_error(img.bytes), {std::string("metadata '") + key + "' array count",
                                              "expected at most", "found 2305843009213693952"}));
  }
}

TEST(GgufReaderBad, BadMetadataTypes) {
  GgufImage img = small_writer().build();
  patch(img.bytes, img.at("type:test.u32"), std::uint32_t{13});
  EXPECT_TRUE(contains_all(parse_error(img.bytes), {"metadata 'test.u32' value type",
                                                    "expected a metadata type 0..12", "found 13"}));
  img = small_writer().build();
  patch(img.bytes, img.at("value:test.f32s"), std::uint32_t{0xFFFFFFFF});
  EXPECT_TRUE(contains_all(parse_error(img.bytes),
                           {"metadata 'test.f32s' array element type", "found 4294967295"}));
  GgufWriter nested;
  nested.raw_kv("t.nested", 9, {9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_TRUE(contains_all(parse_error(nested.build().bytes),
                           {"metadata 't.nested' array element type", "nested arrays"}));
  GgufWriter bad_bool;
  bad_bool.boolean("t.flag", 2);
  EXPECT_TRUE(contains_all(parse_error(bad_bool.build().bytes),
                           {"metadata 't.flag'", "expected a bool (0 or 1), found 2"}));
  GgufWriter bad_bools;
  bad_bools.array<std::uint8_t>("t.flags", GgufType::kBool, {1, 0, 7});
  EXPECT_TRUE(contains_all(parse_error(bad_bools.build().bytes),
                           {"metadata 't.flags' element 2", "found 7"}));
}

TEST(GgufReaderBad, DuplicateOrEmptyNames) {
  GgufWriter dup_key = small_writer();
  dup_key.u32("test.u32", 8);
  EXPECT_TRUE(contains_all(parse_error(dup_key.build().bytes),
                           {"metadata[5] key", "expected a unique key", "\"test.u32\" twice"}));
  GgufWriter empty_key;
  empty_key.u32("", 8);
  EXPECT_TRUE(contains_all(parse_error(empty_key.build().bytes),
                           {"metadata[0] key", "expected a non-empty key"}));
  GgufWriter dup_tensor = small_writer();
  dup_tensor.tensor_f32("a.weight", {1}, {0.0f});
  EXPECT_TRUE(
      contains_all(parse_error(dup_tensor.build().bytes),
                   {"tensor_info[2] name", "expected a unique name", "\"a.weight\" twice"}));
  GgufWriter empty_tensor;
  empty_tensor.tensor_f32("", {1}, {0.0f});
  EXPECT_TRUE(contains_all(parse_error(empty_tensor.build().bytes),
                           {"tensor_info[0] name", "expected a non-empty name"}));
}

TEST(GgufReaderBad, BadAlignment) {
  for (const std::uint32_t a : {0u, 48u, 1u << 31}) {
    SCOPED_TRACE(a);
    GgufWriter w = small_writer();
    w.u32("general.alignment", a);
    EXPECT_TRUE(contains_all(
        parse_error(w.build(3, 64).bytes),
        {"metadata 'general.alignment'", "expected a power of two", "found " + std::to_string(a)}));
  }
  GgufWriter w = small_writer();
  w.str("general.alignment", "32");
  EXPECT_TRUE(contains_all(parse_error(w.build().bytes),
                           {"metadata 'general.alignment'", "expected an integer, found string"}));
}

TEST(GgufReaderBad, BadTensorDims) {
  GgufImage img = small_writer().build();
  patch(img.bytes, img.at("n_dims:a.weight"), std::uint32_t{5});
  EXPECT_TRUE(
      contains_all(parse_error(img.bytes), {"tensor 'a.weight' n_dims", "expected 1..4, found 5"}));
  img = small_writer().build();
  patch(img.bytes, img.at("n_dims:a.weight"), std::uint32_t{0});
  EXPECT_TRUE(
      contains_all(parse_error(img.bytes), {"tensor 'a.weight' n_dims", "expected 1..4, found 0"}));
  img = small_writer().build();
  patch(img.bytes, img.at("n_dims:a.weight"), std::uint32_t{0xFFFFFFFF});
  EXPECT_TRUE(
      contains_all(parse_error(img.bytes), {"tensor 'a.weight' n_dims", "found 4294967295"}));
  img = small_writer().build();
  patch(img.bytes, img.at("dims:a.weight"), std::uint64_t{0});
  EXPECT_TRUE(contains_all(parse_error(img.bytes), {"tensor 'a.weight' dims[0]", "found 0"}));
  // 2^40 * 2^40 elements overflow 63 bits.
  GgufWriter overflow;
  overflow.tensor("big", {std::uint64_t{1} << 40, std::uint64_t{1} << 40}, kF32, {});
  EXPECT_TRUE(
      contains_all(parse_error(overflow.build().bytes),
                   {"tensor 'big' dims[1]", "element count below 2^63", "found 1099511627776"}));
  // 2^62 I64 elements would need 2^65 bytes: rejected before the size arithmetic overflows.
  GgufWriter huge;
  huge.tensor("huge", {std::uint64_t{1} << 62}, static_cast<std::uint32_t>(GgmlType::kI64), {});
  EXPECT_TRUE(contains_all(parse_error(huge.build().bytes),
                           {"tensor 'huge' dims", "expected a byte size below 2^64",
                            "found 4611686018427387904 elements of I64"}));
  // 2^61 F32 elements (2^63 bytes) have a size, which the data section cannot hold.
  GgufWriter big_f32;
  big_f32.tensor("big", {std::uint64_t{1} << 61}, kF32, {});
  EXPECT_TRUE(contains_all(parse_error(big_f32.build().bytes),
                           {"tensor 'big' data", "expected 9223372036854775808 bytes"}));
}

TEST(GgufReaderBad, BadTensorTypes) {
  GgufImage img = small_writer().build();
  patch(img.bytes, img.at("ttype:b.weight"), std::uint32_t{99});
  EXPECT_TRUE(
      contains_all(parse_error(img.bytes),
                   {"tensor 'b.weight' type", "expected a known ggml tensor type", "found 99"}));
  // A known quantised type whose innermost dim is not a whole number of blocks.
  GgufWriter partial;
  partial.tensor("q", {16}, static_cast<std::uint32_t>(GgmlType::kQ4_0),
                 std::vector<std::uint8_t>(18));
  EXPECT_TRUE(
      contains_all(parse_error(partial.build().bytes),
                   {"tensor 'q' dims[0]", "multiple of the Q4_0 block size 32", "found 16"}));
  // A well-formed Q4_0 tensor parses, but cannot be converted to float.
  GgufWriter q4;
  q4.tensor("q", {32, 2}, static_cast<std::uint32_t>(GgmlType::kQ4_0),
            std::vector<std::uint8_t>(36));
  const GgufFile f = GgufFile::parse(q4.build().bytes, kSource);
  EXPECT_EQ(f.find_tensor("q")->bytes, 36u);
  const auto msg = runtime_error_message([&] { (void)f.tensor_f32(*f.find_tensor("q")); });
  EXPECT_TRUE(
      contains_all(msg, {kSource, "tensor 'q' type", "expected F32 or F16", "found Q4_0 (2)"}));
}

TEST(GgufReaderBad, TensorOffsetOutsideTheData) {
  for (const std::uint64_t off : {std::uint64_t{1} << 40, std::uint64_t{96},
                                  std::numeric_limits<std::uint64_t>::max() / 32 * 32}) {
    SCOPED_TRACE(off);
    GgufImage img = small_writer().build();
    patch(img.bytes, img.at("offset:b.weight"), off);
    EXPECT_TRUE(contains_all(parse_error(img.bytes),
                             {"tensor 'b.weight' data", "at data offset " + std::to_string(off),
                              "offset past the end"}));
  }
  GgufImage img = small_writer().build();
  patch(img.bytes, img.at("offset:b.weight"), std::uint64_t{4});
  EXPECT_TRUE(contains_all(
      parse_error(img.bytes),
      {"tensor 'b.weight' offset", "expected a multiple of the alignment 32", "found 4"}));
}

TEST(GgufReaderBad, OverlappingTensorDataIsRejected) {
  // a.weight is 48 bytes at data offset 0; b.weight moved to 32 overlaps it.
  GgufImage img = small_writer().build();
  patch(img.bytes, img.at("offset:b.weight"), std::uint64_t{32});
  EXPECT_TRUE(contains_all(parse_error(img.bytes),
                           {"tensor 'b.weight' offset", "expected at least 48",
                            "end of tensor 'a.weight'", "found 32", "overlapping"}));
}

// Padding up to the alignment after the last tensor is fine; anything beyond it is trailing
// data (a concatenated or corrupt file), as for .bin and .psm.
TEST(GgufReaderBad, TrailingBytesAfterTheLastTensor) {
  GgufImage img = small_writer().build();
  const std::size_t end = img.at("data") + 64 + 20;  // b.weight: 5 floats at data offset 64
  img.bytes.resize(end);
  EXPECT_NO_THROW((void)GgufFile::parse(img.bytes, kSource));
  img.bytes.resize(end + 12, 0);  // padded to the alignment of 32
  EXPECT_NO_THROW((void)GgufFile::parse(img.bytes, kSource));
  img.bytes.push_back(0);
  EXPECT_TRUE(contains_all(parse_error(img.bytes),
                           {"file size", "expected at most " + std::to_string(end + 12),
                            "tensor 'b.weight'", "found " + std::to_string(end + 13),
                            "trailing data"}));
}

TEST(GgufReaderBad, TypedGettersNameTheKey) {
  GgufWriter w = small_writer();
  w.i32("test.negative", -3);
  const GgufFile f = GgufFile::parse(w.build().bytes, kSource);
  auto error = [&](auto&& fn) {
    const std::string msg = runtime_error_message(fn);
    EXPECT_TRUE(contains_all(msg, {kSource}));
    return msg;
  };
  EXPECT_TRUE(contains_all(error([&] { (void)f.get_uint("llama.block_count"); }),
                           {"metadata 'llama.block_count'", "found it missing"}));
  EXPECT_TRUE(
      contains_all(error([&] { (void)f.get_uint("general.architecture"); }),
                   {"metadata 'general.architecture'", "expected an integer, found string"}));
  EXPECT_TRUE(contains_all(error([&] { (void)f.get_uint("test.negative"); }),
                           {"metadata 'test.negative'", "expected a value >= 0, found -3"}));
  EXPECT_TRUE(contains_all(error([&] { (void)f.get_float("test.u32"); }),
                           {"metadata 'test.u32'", "expected a float, found u32"}));
  EXPECT_TRUE(
      contains_all(error([&] { (void)f.get_string("test.strings"); }),
                   {"metadata 'test.strings'", "expected a string, found an array of string"}));
  EXPECT_TRUE(contains_all(
      error([&] { (void)f.get_string_array("test.f32s"); }),
      {"metadata 'test.f32s'", "expected an array of string", "found an array of f32"}));
  EXPECT_TRUE(contains_all(error([&] { (void)f.get_f32_array("test.u32"); }),
                           {"metadata 'test.u32'", "expected an array of f32, found u32"}));
  EXPECT_TRUE(contains_all(error([&] { (void)f.get_int_array("test.f32s"); }),
                           {"metadata 'test.f32s'", "expected an array of integers"}));
  EXPECT_TRUE(contains_all(error([&] { (void)f.get_bool("test.u32"); }),
                           {"metadata 'test.u32'", "expected a bool, found u32"}));
}

TEST(GgufReaderBad, MissingAndNonRegularFiles) {
  const ScratchDir dir;
  auto msg = runtime_error_message([&] { (void)GgufFile::read(dir / "missing.gguf"); });
  EXPECT_TRUE(contains_all(msg, {(dir / "missing.gguf").string(), "not found"}));
  msg = runtime_error_message([&] { (void)GgufFile::read(dir.path()); });
  EXPECT_TRUE(contains_all(msg, {dir.path().string(), "not a regular file"}));
}

}  // namespace
