// SPDX-License-Identifier: Apache-2.0
// llama2.c checkpoint loader: the real stories260K, and corrupted copies of it that must be
// rejected with a message naming the file and the field.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "passim/io/llama2c.hpp"
#include "passim/model/config.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/model/weights.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace {

using passim::test::contains_all;
using passim::test::patch;
using passim::test::read_bytes;
using passim::test::runtime_error_message;
using passim::test::ScratchDir;
using passim::test::write_bytes;

constexpr std::uint64_t kStoriesBytes = 1056540;  // 28-byte header + 264128 float32
constexpr char kStoriesSha256[] =
    "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696";

/// Byte offsets of the seven int32 header fields.
enum HeaderField : std::size_t {
  kDimAt = 0,
  kHiddenAt = 4,
  kLayersAt = 8,
  kHeadsAt = 12,
  kKvHeadsAt = 16,
  kVocabAt = 20,
  kSeqLenAt = 24,
};

/// Writes `bytes` as a checkpoint in a scratch folder, loads it and returns the error message
/// (failing the test when the load succeeds). Also checks the message names the file.
std::string load_error(const std::vector<std::uint8_t>& bytes) {
  const ScratchDir dir;
  const auto path = dir / "corrupt_stories260K.bin";
  write_bytes(path, bytes);
  const std::string msg = runtime_error_message([&] { (void)passim::load_llama2c(path); });
  EXPECT_TRUE(contains_all(msg, {path.string()}));
  return msg;
}

/// The stories260K header with one int32 field replaced (weights left as they are).
std::vector<std::uint8_t> stories_with_field(std::size_t offset, std::int32_t value) {
  auto bytes = read_bytes(passim::test::model_path());
  patch(bytes, offset, value);
  return bytes;
}

/// A bare 28-byte header (no weights): enough for the header checks, which run first.
std::vector<std::uint8_t> header_only(std::int32_t dim, std::int32_t hidden, std::int32_t layers,
                                      std::int32_t heads, std::int32_t kv_heads, std::int32_t vocab,
                                      std::int32_t seq_len) {
  std::vector<std::uint8_t> bytes(28);
  patch(bytes, kDimAt, dim);
  patch(bytes, kHiddenAt, hidden);
  patch(bytes, kLayersAt, layers);
  patch(bytes, kHeadsAt, heads);
  patch(bytes, kKvHeadsAt, kv_heads);
  patch(bytes, kVocabAt, vocab);
  patch(bytes, kSeqLenAt, seq_len);
  return bytes;
}

TEST(CheckpointLlama2c, LoadsStories260KConfigAndHash) {
  PASSIM_REQUIRE_DATA();
  const auto m = passim::load_llama2c(passim::test::model_path());
  const passim::ModelConfig& c = m.config;
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 172);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.seq_len, 512);
  EXPECT_TRUE(c.shared_classifier);
  EXPECT_EQ(c.head_size(), 8u);
  EXPECT_EQ(c.kv_dim(), 32u);
  EXPECT_EQ(m.sha256, kStoriesSha256);
  EXPECT_EQ(m.source, passim::test::model_path().string());
  EXPECT_EQ(28 + 4 * passim::llama2c_param_count(c), kStoriesBytes);
}

TEST(CheckpointLlama2c, TensorShapesFollowConfig) {
  PASSIM_REQUIRE_DATA();
  const auto m = passim::load_llama2c(passim::test::model_path());
  const passim::FloatWeights& w = m.weights;
  EXPECT_EQ(w.token_embedding.size(), 512u * 64);
  EXPECT_EQ(w.rms_att.size(), 5u * 64);
  EXPECT_EQ(w.wq.size(), 5u * 64 * 64);
  EXPECT_EQ(w.wk.size(), 5u * 32 * 64);
  EXPECT_EQ(w.wv.size(), 5u * 32 * 64);
  EXPECT_EQ(w.wo.size(), 5u * 64 * 64);
  EXPECT_EQ(w.rms_ffn.size(), 5u * 64);
  EXPECT_EQ(w.w1.size(), 5u * 172 * 64);
  EXPECT_EQ(w.w2.size(), 5u * 64 * 172);
  EXPECT_EQ(w.w3.size(), 5u * 172 * 64);
  EXPECT_EQ(w.rms_final.size(), 64u);
  EXPECT_TRUE(w.wcls.empty());
  EXPECT_EQ(w.classifier().data(), w.token_embedding.data());
}

TEST(CheckpointLlama2c, FirstAndLastWeightsMatchFileBytes) {
  PASSIM_REQUIRE_DATA();
  const auto bytes = read_bytes(passim::test::model_path());
  const auto m = passim::load_llama2c(passim::test::model_path());
  float first = 0;
  float last_final_norm = 0;
  std::memcpy(&first, bytes.data() + 28, 4);
  // rms_final is the last tensor before the two RoPE tables (512 * 8 floats).
  std::memcpy(&last_final_norm, bytes.data() + bytes.size() - 4 * (512 * 8) - 4, 4);
  EXPECT_EQ(m.weights.token_embedding.front(), first);
  EXPECT_EQ(m.weights.rms_final.back(), last_final_norm);
}

TEST(CheckpointLlama2c, TruncatedAtByte1000Throws) {
  PASSIM_REQUIRE_DATA();
  auto bytes = read_bytes(passim::test::model_path());
  bytes.resize(1000);
  const auto msg = load_error(bytes);
  EXPECT_TRUE(
      contains_all(msg, {"file size", "expected 1056540 bytes", "found 1000 bytes", "truncated"}));
}

TEST(CheckpointLlama2c, FullSizeMinusOneThrows) {
  PASSIM_REQUIRE_DATA();
  auto bytes = read_bytes(passim::test::model_path());
  bytes.pop_back();
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(
      msg, {"file size", "expected 1056540 bytes", "found 1056539 bytes", "truncated"}));
}

TEST(CheckpointLlama2c, OneTrailingByteThrows) {
  PASSIM_REQUIRE_DATA();
  auto bytes = read_bytes(passim::test::model_path());
  bytes.push_back(0);
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(
      msg, {"file size", "expected 1056540 bytes", "found 1056541 bytes", "trailing data"}));
}

TEST(CheckpointLlama2c, HeaderShorterThan28BytesThrows) {
  PASSIM_REQUIRE_DATA();
  auto bytes = read_bytes(passim::test::model_path());
  bytes.resize(27);
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(msg, {"header", "expected at least 28 bytes", "27-byte file"}));
}

TEST(CheckpointLlama2c, EmptyFileThrows) {
  const auto msg = load_error({});
  EXPECT_TRUE(contains_all(msg, {"header", "expected at least 28 bytes", "0-byte file"}));
}

TEST(CheckpointLlama2c, MissingFileThrows) {
  const ScratchDir dir;
  const auto path = dir / "no_such_model.bin";
  const auto msg = runtime_error_message([&] { (void)passim::load_llama2c(path); });
  EXPECT_TRUE(contains_all(msg, {path.string(), "not found"}));
}

TEST(CheckpointLlama2c, DirectoryInsteadOfFileThrows) {
  const ScratchDir dir;
  const auto msg = runtime_error_message([&] { (void)passim::load_llama2c(dir.path()); });
  EXPECT_TRUE(contains_all(msg, {dir.path().string(), "not a regular file"}));
}

// llama2.c's newer export formats (export.py --version 1 and 2) start with a magic and a
// version; they are named as such instead of being read as a legacy header.
TEST(CheckpointLlama2c, ExportVersionTwoFileIsNamed) {
  auto bytes = header_only(0x616b3432, 2, 64, 5, 8, 4, 512);
  bytes.resize(256, 0);
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(msg, {"header", "legacy llama2.c checkpoint", "version-2",
                                 "Q8_0", "--version 0"}))
      << msg;
}

// A wrong n_heads breaks both rules it takes part in (it must divide dim = 64 and be a
// multiple of n_kv_heads = 4): n_heads is named, not n_kv_heads or dim.
TEST(CheckpointLlama2c, HeadsBreakingBothRulesAreNamed) {
  PASSIM_REQUIRE_DATA();
  for (const std::int32_t heads : {3, 6}) {
    SCOPED_TRACE("n_heads = " + std::to_string(heads));
    const auto msg = load_error(stories_with_field(kHeadsAt, heads));
    EXPECT_TRUE(contains_all(msg, {"header field n_heads: expected a divisor of dim = 64 and a "
                                   "multiple of n_kv_heads = 4",
                                   "found " + std::to_string(heads)}))
        << msg;
    EXPECT_FALSE(contains_all(msg, {"n_kv_heads: expected"})) << msg;
  }
}

// One broken rule: either of its two fields may be the wrong one, so both are named.
TEST(CheckpointLlama2c, DimNotDivisibleByHeadsThrows) {
  PASSIM_REQUIRE_DATA();
  const auto msg = load_error(stories_with_field(kDimAt, 60));  // 60 % 8 != 0
  EXPECT_TRUE(contains_all(msg, {"header fields dim and n_heads", "expected n_heads to divide dim",
                                 "found dim = 60, n_heads = 8"}))
      << msg;
}

TEST(CheckpointLlama2c, HeadsNotDivisibleByKvHeadsThrows) {
  PASSIM_REQUIRE_DATA();
  for (const std::int32_t kv : {3, 16}) {  // 8 % 3 != 0; more KV heads than heads
    SCOPED_TRACE("n_kv_heads = " + std::to_string(kv));
    const auto msg = load_error(stories_with_field(kKvHeadsAt, kv));
    EXPECT_TRUE(contains_all(msg, {"header fields n_heads and n_kv_heads",
                                   "expected n_kv_heads to divide n_heads",
                                   "found n_heads = 8, n_kv_heads = " + std::to_string(kv)}))
        << msg;
  }
}

TEST(CheckpointLlama2c, OddHeadSizeThrows) {
  PASSIM_REQUIRE_DATA();
  // dim 72 with 8 heads: head size 9, which RoPE cannot rotate in pairs.
  const auto msg = load_error(stories_with_field(kDimAt, 72));
  EXPECT_TRUE(contains_all(msg, {"head size", "expected an even number", "72 / 8 = 9"}));
}

struct FieldCase {
  std::size_t offset;
  const char* field;
  std::int32_t value;
};

TEST(CheckpointLlama2c, ZeroOrNegativeFieldThrowsNamingField) {
  PASSIM_REQUIRE_DATA();
  const FieldCase cases[] = {
      {kDimAt, "dim", 0},
      {kDimAt, "dim", -64},
      {kHiddenAt, "hidden_dim", 0},
      {kHiddenAt, "hidden_dim", -172},
      {kLayersAt, "n_layers", 0},
      {kLayersAt, "n_layers", -5},
      {kHeadsAt, "n_heads", 0},
      {kHeadsAt, "n_heads", -8},
      {kKvHeadsAt, "n_kv_heads", 0},
      {kKvHeadsAt, "n_kv_heads", -4},
      {kVocabAt, "vocab_size", 0},
      {kSeqLenAt, "seq_len", 0},
      {kSeqLenAt, "seq_len", -512},
  };
  for (const FieldCase& c : cases) {
    SCOPED_TRACE(std::string(c.field) + " = " + std::to_string(c.value));
    const auto msg = load_error(stories_with_field(c.offset, c.value));
    EXPECT_TRUE(contains_all(msg, {std::string("header field ") + c.field + ":", "expected 1..",
                                   "found " + std::to_string(c.value)}));
  }
}

TEST(CheckpointLlama2c, MostNegativeVocabThrows) {
  PASSIM_REQUIRE_DATA();
  // -INT32_MIN does not exist: the loader must not negate it (UB) but reject it.
  const auto msg =
      load_error(stories_with_field(kVocabAt, std::numeric_limits<std::int32_t>::min()));
  EXPECT_TRUE(contains_all(msg, {"header field vocab_size:", "expected 1.."}));
}

TEST(CheckpointLlama2c, AbsurdHeaderValuesThrowBeforeAllocating) {
  const FieldCase cases[] = {
      {kDimAt, "dim", 1 << 30},
      {kHiddenAt, "hidden_dim", std::numeric_limits<std::int32_t>::max()},
      {kLayersAt, "n_layers", 1 << 30},
      {kHeadsAt, "n_heads", 1 << 20},  // more heads than dim
      {kKvHeadsAt, "n_kv_heads", 1 << 20},  // more kv heads than dim
      {kVocabAt, "vocab_size", 1 << 30},
      {kSeqLenAt, "seq_len", 1 << 30},
  };
  for (const FieldCase& c : cases) {
    SCOPED_TRACE(std::string(c.field) + " = " + std::to_string(c.value));
    auto bytes = header_only(64, 172, 5, 8, 4, 512, 512);
    patch(bytes, c.offset, c.value);
    const auto msg = load_error(bytes);
    EXPECT_TRUE(contains_all(msg, {std::string("header field ") + c.field + ":", "expected 1..",
                                   "found " + std::to_string(c.value)}));
  }
}

TEST(CheckpointLlama2c, LargestValidHeaderChecksSizeBeforeAllocating) {
  // Every field at its limit describes a multi-terabyte model; a 28-byte file must be
  // rejected by the size check (std::runtime_error), not by std::bad_alloc or the OOM killer.
  passim::ModelConfig c;
  c.dim = passim::kMaxDim;
  c.hidden_dim = passim::kMaxHidden;
  c.n_layers = passim::kMaxLayers;
  c.n_heads = 128;
  c.n_kv_heads = 128;
  c.vocab_size = passim::kMaxVocab;
  c.seq_len = passim::kMaxSeqLen;
  c.shared_classifier = false;
  const auto bytes = header_only(c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads,
                                 -c.vocab_size, c.seq_len);
  const std::uint64_t expected = 28 + 4 * passim::llama2c_param_count(c);
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(msg, {"file size", "expected " + std::to_string(expected) + " bytes",
                                 "found 28 bytes", "truncated"}));
}

TEST(CheckpointLlama2c, NanWeightThrowsNamingTensor) {
  PASSIM_REQUIRE_DATA();
  auto bytes = read_bytes(passim::test::model_path());
  // wq starts after the header, token_embedding (512 * 64) and rms_att (5 * 64).
  const std::size_t wq_at = 28 + 4 * (512 * 64 + 5 * 64);
  patch(bytes, wq_at + 4 * 10, std::numeric_limits<float>::quiet_NaN());
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(msg, {"tensor wq element 10", "expected a finite float",
                                 "byte offset " + std::to_string(wq_at + 4 * 10)}));
}

TEST(CheckpointLlama2c, InfiniteWeightThrowsNamingTensor) {
  PASSIM_REQUIRE_DATA();
  auto bytes = read_bytes(passim::test::model_path());
  // rms_final_weight is the last tensor before the RoPE tables (512 * 8 floats).
  const std::size_t last_at = bytes.size() - 4 * (512 * 8) - 4;
  patch(bytes, last_at, -std::numeric_limits<float>::infinity());
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(msg, {"tensor rms_final_weight element 63", "expected a finite float"}));
}

TEST(CheckpointLlama2c, FiniteWeightsThatOverflowFloat32StopTheForwardPass) {
  PASSIM_REQUIRE_DATA();
  auto bytes = read_bytes(passim::test::model_path());
  // rms_final_weight = 3e38 everywhere: finite, so the file loads, but the logits overflow.
  const std::size_t final_at = bytes.size() - 4 * (512 * 8) - 4 * 64;
  for (std::size_t i = 0; i < 64; ++i) {
    patch(bytes, final_at + 4 * i, 3e38F);
  }
  const ScratchDir dir;
  const auto path = dir / "huge_gain.bin";
  write_bytes(path, bytes);
  const auto model = passim::load_llama2c(path);
  passim::FloatBackend backend(model);
  const std::string msg = runtime_error_message([&] { backend.forward(1, 0); });
  EXPECT_TRUE(contains_all(msg, {"position 0", "non-finite logits"})) << msg;
}

TEST(CheckpointLlama2c, NonFiniteRopeTableIsIgnored) {
  PASSIM_REQUIRE_DATA();
  // The legacy RoPE tables are skipped (llama2.c recomputes them), so their contents are
  // never checked.
  auto bytes = read_bytes(passim::test::model_path());
  patch(bytes, bytes.size() - 4, std::numeric_limits<float>::quiet_NaN());
  const ScratchDir dir;
  const auto path = dir / "nan_rope.bin";
  write_bytes(path, bytes);
  const auto m = passim::load_llama2c(path);
  EXPECT_EQ(m.config.dim, 64);
  EXPECT_NE(m.sha256, kStoriesSha256);
}

TEST(CheckpointLlama2c, SerializeKeepsEveryWeightByte) {
  PASSIM_REQUIRE_DATA();
  const auto original = read_bytes(passim::test::model_path());
  const auto m = passim::load_llama2c(passim::test::model_path());
  const auto bytes = passim::serialize_llama2c(m);
  ASSERT_EQ(bytes.size(), original.size());
  // Identical except for the RoPE tables, which are written as zeros.
  const std::size_t rope_at = original.size() - 4 * (512 * 8);
  for (std::size_t i = 0; i < rope_at; ++i) {
    ASSERT_EQ(bytes[i], original[i]) << "first difference at byte " << i;
  }
  for (std::size_t i = rope_at; i < bytes.size(); ++i) {
    ASSERT_EQ(bytes[i], 0) << "RoPE byte " << i;
  }
}

TEST(CheckpointLlama2c, UnsharedClassifierRoundTrip) {
  PASSIM_REQUIRE_DATA();
  auto m = passim::load_llama2c(passim::test::model_path());
  m.config.shared_classifier = false;
  m.weights.wcls = m.weights.token_embedding;
  for (std::size_t i = 0; i < m.weights.wcls.size(); ++i) {
    m.weights.wcls[i] = m.weights.wcls[i] * 0.5f + float(i % 7) * 0.125f;  // distinct values
  }
  const auto bytes = passim::serialize_llama2c(m);
  ASSERT_EQ(bytes.size(), kStoriesBytes + 4 * 512 * 64);
  std::int32_t vocab_field = 0;
  std::memcpy(&vocab_field, bytes.data() + kVocabAt, 4);
  EXPECT_EQ(vocab_field, -512);  // negative vocab_size: an unshared classifier follows

  const ScratchDir dir;
  const auto path = dir / "unshared.bin";
  write_bytes(path, bytes);
  const auto back = passim::load_llama2c(path);
  EXPECT_FALSE(back.config.shared_classifier);
  EXPECT_EQ(back.config.vocab_size, 512);
  EXPECT_EQ(back.weights.wcls, m.weights.wcls);
  EXPECT_EQ(back.weights.token_embedding, m.weights.token_embedding);
  EXPECT_EQ(back.weights.w2, m.weights.w2);
  EXPECT_EQ(back.weights.rms_final, m.weights.rms_final);
  EXPECT_EQ(back.weights.classifier().data(), back.weights.wcls.data());
  EXPECT_EQ(passim::serialize_llama2c(back), bytes);

  // Without the classifier the file is short by exactly that tensor.
  auto short_bytes = bytes;
  short_bytes.resize(kStoriesBytes);
  const auto msg = load_error(short_bytes);
  EXPECT_TRUE(
      contains_all(msg, {"file size", "vocab_size=-512", "found 1056540 bytes", "truncated"}));
}

}  // namespace
