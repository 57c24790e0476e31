// SPDX-License-Identifier: Apache-2.0
// The project model format (.psm): exact round trip of a quantised stories260K, and corrupted
// files that must be rejected with a message naming the file and what is wrong.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "passim/eval/calibrate.hpp"
#include "passim/io/file.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/io/psm.hpp"
#include "passim/model/weights.hpp"
#include "passim/quant/calibration.hpp"
#include "passim/quant/quant_model.hpp"
#include "passim/quant/quantize.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace {

using passim::test::contains_all;
using passim::test::patch;
using passim::test::runtime_error_message;
using passim::test::ScratchDir;
using passim::test::write_bytes;

constexpr char kStoriesSha256[] =
    "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696";
constexpr std::size_t kVersionAt = 8;         // u32 after the 8-byte magic
constexpr std::size_t kConfigAt = 8 + 4 + 8;  // i32 dim, after magic, version, file_bytes
constexpr std::size_t kDigestBytes = 32;

/// Quantises `model` with a short self-generated calibration (32 positions, for speed).
passim::QuantModel quantize_fast(const passim::FloatModel& model) {
  passim::Calibration calib =
      passim::calibrate(model, passim::self_generated_calibration(model, 32));
  calib.description = "io test: self-generated, 4 x 32 positions";
  return passim::quantize(model, calib);
}

/// stories260K quantised once for the whole suite (quantisation is deterministic).
class PsmFormat : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(passim::test::model_path())) {
      return;  // each test skips through PASSIM_REQUIRE_DATA
    }
    model_ = quantize_fast(passim::load_llama2c(passim::test::model_path()));
    bytes_ = passim::serialize_psm(*model_);
  }
  static void TearDownTestSuite() {
    model_.reset();
    bytes_.clear();
  }

  /// Writes `bytes` as a .psm file in a scratch folder, loads it and returns the error
  /// message (failing when the load succeeds). Checks the message names the file.
  static std::string load_error(const std::vector<std::uint8_t>& bytes) {
    const ScratchDir dir;
    const auto path = dir / "corrupt_stories260K.psm";
    write_bytes(path, bytes);
    const std::string msg = runtime_error_message([&] { (void)passim::load_psm(path); });
    EXPECT_TRUE(contains_all(msg, {path.string()}));
    return msg;
  }

  static std::optional<passim::QuantModel> model_;
  static std::vector<std::uint8_t> bytes_;
};

std::optional<passim::QuantModel> PsmFormat::model_;
std::vector<std::uint8_t> PsmFormat::bytes_;

/// (mult, shift) pairs flattened, so vectors of `Requant` compare with one EXPECT_EQ.
std::vector<std::int32_t> flat(const std::vector<passim::Requant>& rq) {
  std::vector<std::int32_t> out;
  for (const passim::Requant r : rq) {
    out.push_back(r.mult);
    out.push_back(r.shift);
  }
  return out;
}
std::vector<std::int32_t> flat(passim::Requant r) { return {r.mult, r.shift}; }

void expect_same_norm(const passim::QuantNorm& a, const passim::QuantNorm& b) {
  EXPECT_EQ(a.gain, b.gain);
  EXPECT_EQ(a.frac_bits, b.frac_bits);
}

/// Field-by-field equality of two quantised models (QuantModel has no operator==).
void expect_same_model(const passim::QuantModel& a, const passim::QuantModel& b) {
  EXPECT_EQ(a.config.dim, b.config.dim);
  EXPECT_EQ(a.config.hidden_dim, b.config.hidden_dim);
  EXPECT_EQ(a.config.n_layers, b.config.n_layers);
  EXPECT_EQ(a.config.n_heads, b.config.n_heads);
  EXPECT_EQ(a.config.n_kv_heads, b.config.n_kv_heads);
  EXPECT_EQ(a.config.vocab_size, b.config.vocab_size);
  EXPECT_EQ(a.config.seq_len, b.config.seq_len);
  EXPECT_EQ(a.config.shared_classifier, b.config.shared_classifier);
  EXPECT_EQ(a.norm_eps, b.norm_eps);
  EXPECT_EQ(a.token_embedding, b.token_embedding);
  EXPECT_EQ(flat(a.embed_rq), flat(b.embed_rq));
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (std::size_t l = 0; l < a.layers.size(); ++l) {
    SCOPED_TRACE("layer " + std::to_string(l));
    const passim::QuantLayer& x = a.layers[l];
    const passim::QuantLayer& y = b.layers[l];
    expect_same_norm(x.attn_norm, y.attn_norm);
    EXPECT_EQ(x.wq, y.wq);
    EXPECT_EQ(x.wk, y.wk);
    EXPECT_EQ(x.wv, y.wv);
    EXPECT_EQ(x.wo, y.wo);
    EXPECT_EQ(flat(x.rq_q), flat(y.rq_q));
    EXPECT_EQ(flat(x.rq_k), flat(y.rq_k));
    EXPECT_EQ(flat(x.rq_v), flat(y.rq_v));
    EXPECT_EQ(flat(x.rq_o), flat(y.rq_o));
    EXPECT_EQ(flat(x.score_rq), flat(y.score_rq));
    EXPECT_EQ(flat(x.attn_out_rq), flat(y.attn_out_rq));
    expect_same_norm(x.ffn_norm, y.ffn_norm);
    EXPECT_EQ(x.w1, y.w1);
    EXPECT_EQ(x.w3, y.w3);
    EXPECT_EQ(x.w2, y.w2);
    EXPECT_EQ(flat(x.rq_1), flat(y.rq_1));
    EXPECT_EQ(flat(x.rq_3), flat(y.rq_3));
    EXPECT_EQ(flat(x.rq_2), flat(y.rq_2));
    EXPECT_EQ(flat(x.silu_in_rq), flat(y.silu_in_rq));
    EXPECT_EQ(flat(x.silu_out_rq), flat(y.silu_out_rq));
    EXPECT_EQ(flat(x.mul_rq), flat(y.mul_rq));
  }
  expect_same_norm(a.final_norm, b.final_norm);
  EXPECT_EQ(a.wcls, b.wcls);
  EXPECT_EQ(flat(a.rq_cls), flat(b.rq_cls));
  EXPECT_EQ(a.rope_cos, b.rope_cos);
  EXPECT_EQ(a.rope_sin, b.rope_sin);
  // Scales are stored as float32 bit patterns, so they round-trip exactly.
  EXPECT_EQ(a.scales.residual, b.scales.residual);
  EXPECT_EQ(a.scales.layer, b.scales.layer);
  EXPECT_EQ(a.scales.final_norm, b.scales.final_norm);
  EXPECT_EQ(a.source_sha256, b.source_sha256);
  EXPECT_EQ(a.calibration, b.calibration);
}

TEST_F(PsmFormat, RoundTripPreservesEveryField) {
  PASSIM_REQUIRE_DATA();
  const passim::QuantModel back = passim::parse_psm(bytes_, "in-memory.psm");
  expect_same_model(*model_, back);
  EXPECT_EQ(back.source_sha256, kStoriesSha256);
  EXPECT_EQ(back.calibration, "io test: self-generated, 4 x 32 positions");
  EXPECT_EQ(back.layers.size(), 5u);
  EXPECT_TRUE(back.config.shared_classifier);  // the float checkpoint's flag is kept
  // SmoothQuant folds the final-norm factors into the classifier, so even a shared
  // classifier is stored as its own int8 copy ("output.weight").
  EXPECT_EQ(back.wcls.size(), 512u * 64);
  EXPECT_EQ(back.classifier().data(), back.wcls.data());
  std::uint32_t flags = 0;
  std::memcpy(&flags, bytes_.data() + kConfigAt + 7 * 4, 4);
  EXPECT_EQ(flags, 1u);  // bit 0: shared classifier
  // Serialising what was parsed reproduces the file byte for byte.
  EXPECT_EQ(passim::serialize_psm(back), bytes_);
}

TEST_F(PsmFormat, SaveAndLoadFileRoundTrip) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  const auto path = dir / "stories260K.psm";
  passim::save_psm(*model_, path);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  EXPECT_TRUE(passim::is_psm_file(path));
  EXPECT_FALSE(passim::is_psm_file(passim::test::model_path()));
  EXPECT_EQ(passim::test::read_bytes(path), bytes_);
  expect_same_model(*model_, passim::load_psm(path));
}

TEST_F(PsmFormat, QuantisationIsDeterministic) {
  PASSIM_REQUIRE_DATA();
  const auto again = quantize_fast(passim::load_llama2c(passim::test::model_path()));
  EXPECT_EQ(passim::serialize_psm(again), bytes_);
}

TEST_F(PsmFormat, UnsharedClassifierRoundTrip) {
  PASSIM_REQUIRE_DATA();
  auto fm = passim::load_llama2c(passim::test::model_path());
  fm.config.shared_classifier = false;
  fm.weights.wcls = fm.weights.token_embedding;
  for (float& v : fm.weights.wcls) {
    v *= -0.75f;  // differs from the embedding, so sharing by mistake would show
  }
  const auto q = quantize_fast(fm);
  ASSERT_EQ(q.wcls.size(), 512u * 64);
  const auto bytes = passim::serialize_psm(q);
  std::uint32_t flags = 0;
  std::memcpy(&flags, bytes.data() + kConfigAt + 7 * 4, 4);
  EXPECT_EQ(flags & 1u, 0u);  // bit 0: shared classifier
  const auto back = passim::parse_psm(bytes, "unshared.psm");
  EXPECT_FALSE(back.config.shared_classifier);
  expect_same_model(q, back);
  EXPECT_NE(back.wcls, model_->wcls);  // built from the scaled copy, not the embedding
}

TEST_F(PsmFormat, ModelWithoutClassifierCopyUsesEmbedding) {
  PASSIM_REQUIRE_DATA();
  // A shared-classifier model may leave `wcls` empty; the file then has no output.weight.
  passim::QuantModel m = *model_;
  m.wcls.clear();
  const auto bytes = passim::serialize_psm(m);
  EXPECT_EQ(bytes.size(), bytes_.size() - (2 + 13 + 1 + 1 + 2 * 4 + 512 * 64));
  const auto back = passim::parse_psm(bytes, "no_output_weight.psm");
  EXPECT_TRUE(back.wcls.empty());
  EXPECT_EQ(back.classifier().data(), back.token_embedding.data());
  expect_same_model(m, back);
}

TEST_F(PsmFormat, TruncatedAtByte1000Throws) {
  PASSIM_REQUIRE_DATA();
  auto bytes = bytes_;
  bytes.resize(1000);
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(
      msg, {"file size", "expected " + std::to_string(bytes_.size()), "found 1000", "truncated"}));
}

TEST_F(PsmFormat, FullSizeMinusOneThrows) {
  PASSIM_REQUIRE_DATA();
  auto bytes = bytes_;
  bytes.pop_back();
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(msg, {"file size", "expected " + std::to_string(bytes_.size()),
                                 "found " + std::to_string(bytes.size()), "truncated"}));
}

TEST_F(PsmFormat, TrailingByteThrows) {
  PASSIM_REQUIRE_DATA();
  auto bytes = bytes_;
  bytes.push_back(0);
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(msg, {"file size", "trailing data"}));
}

TEST_F(PsmFormat, WrongMagicThrows) {
  PASSIM_REQUIRE_DATA();
  auto bytes = bytes_;
  bytes[0] = 'X';
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(msg, {"magic", "expected \"PASSIMQ\""}));
}

TEST_F(PsmFormat, WrongVersionIsReportedBeforeChecksum) {
  PASSIM_REQUIRE_DATA();
  auto bytes = bytes_;
  patch(bytes, kVersionAt, passim::kPsmVersion + 1);  // the footer no longer matches either
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(msg, {"version", "expected 1..2", "found 3"}));
  EXPECT_EQ(msg.find("checksum"), std::string::npos) << msg;
}

TEST_F(PsmFormat, FlippedByteInTheMiddleFailsChecksum) {
  PASSIM_REQUIRE_DATA();
  auto bytes = bytes_;
  bytes[bytes.size() / 2] ^= 0xFF;
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(msg, {"checksum", "SHA-256"}));
}

TEST_F(PsmFormat, FlippedFooterByteFailsChecksum) {
  PASSIM_REQUIRE_DATA();
  auto bytes = bytes_;
  bytes.back() ^= 0x01;
  EXPECT_TRUE(contains_all(load_error(bytes), {"checksum"}));
}

TEST_F(PsmFormat, ConfigInconsistentWithTensorsThrowsEvenWithValidChecksum) {
  PASSIM_REQUIRE_DATA();
  // dim 32 is a valid config on its own (8 heads of 4); with a recomputed footer only the
  // tensor shape check can notice that the tensors were written for dim 64.
  auto bytes = bytes_;
  patch(bytes, kConfigAt, std::int32_t{32});
  const std::size_t body_end = bytes.size() - kDigestBytes;
  const auto digest = passim::sha256_raw({bytes.data(), body_end});
  std::copy(digest.begin(), digest.end(), bytes.begin() + std::ptrdiff_t(body_end));
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(
      msg, {"tok_embeddings.weight", "shape", "expected (512, 32)", "found (512, 64)"}));
}

TEST_F(PsmFormat, UnknownFlagBitsThrow) {
  PASSIM_REQUIRE_DATA();
  auto bytes = bytes_;
  std::uint32_t flags = 0;
  std::memcpy(&flags, bytes.data() + kConfigAt + 4 * 7, sizeof flags);
  patch(bytes, kConfigAt + 4 * 7, std::uint32_t{flags | 0x10u});  // after the 7 config i32
  const std::size_t body_end = bytes.size() - kDigestBytes;
  const auto digest = passim::sha256_raw({bytes.data(), body_end});
  std::copy(digest.begin(), digest.end(), bytes.begin() + std::ptrdiff_t(body_end));
  EXPECT_TRUE(contains_all(load_error(bytes), {"flags", "expected bit 0", "found 0x1"}));
}

TEST_F(PsmFormat, InvalidConfigThrowsNamingField) {
  PASSIM_REQUIRE_DATA();
  auto bytes = bytes_;
  patch(bytes, kConfigAt + 4 * 3, std::int32_t{0});  // n_heads
  const std::size_t body_end = bytes.size() - kDigestBytes;
  const auto digest = passim::sha256_raw({bytes.data(), body_end});
  std::copy(digest.begin(), digest.end(), bytes.begin() + std::ptrdiff_t(body_end));
  EXPECT_TRUE(contains_all(load_error(bytes), {"n_heads", "expected 1..64", "found 0"}));
}

TEST_F(PsmFormat, EmptyFileThrows) {
  const auto msg = load_error({});
  EXPECT_TRUE(contains_all(msg, {"magic"}));
}

TEST_F(PsmFormat, MagicOnlyThrows) {
  const std::vector<std::uint8_t> bytes = {'P', 'A', 'S', 'S', 'I', 'M', 'Q', '\0'};
  const auto msg = load_error(bytes);
  EXPECT_TRUE(contains_all(msg, {"version", "expected 4 bytes"}));
}

TEST_F(PsmFormat, LlamaCheckpointIsNotAPsmFile) {
  PASSIM_REQUIRE_DATA();
  const auto path = passim::test::model_path();
  const auto msg = runtime_error_message([&] { (void)passim::load_psm(path); });
  EXPECT_TRUE(contains_all(msg, {path.string(), "magic"}));
}

TEST_F(PsmFormat, NamesADamagedMagic) {
  PASSIM_REQUIRE_DATA();
  const ScratchDir dir;
  write_bytes(dir / "ok.psm", bytes_);
  auto bytes = bytes_;
  bytes[1] = 'B';  // "PBSSIMQ"
  write_bytes(dir / "one.psm", bytes);
  bytes[4] = 'J';  // two bytes
  write_bytes(dir / "two.psm", bytes);
  bytes[6] = 'R';  // three bytes: not recognisably a .psm
  write_bytes(dir / "three.psm", bytes);
  EXPECT_EQ(passim::psm_magic_near_miss(dir / "ok.psm"), "");
  EXPECT_EQ(passim::psm_magic_near_miss(dir / "three.psm"), "");
  EXPECT_EQ(passim::psm_magic_near_miss(passim::test::model_path()), "");
  const std::string one = passim::psm_magic_near_miss(dir / "one.psm");
  EXPECT_TRUE(contains_all(one, {(dir / "one.psm").string(), "magic", "expected \"PASSIMQ\"",
                                 "found 50 42 53 53 49 4d 51 00", "damaged .psm", "1 of 8"}))
      << one;
  EXPECT_TRUE(contains_all(passim::psm_magic_near_miss(dir / "two.psm"), {"2 of 8"}));
}

TEST_F(PsmFormat, MissingFileThrows) {
  const ScratchDir dir;
  const auto path = dir / "missing.psm";
  const auto msg = runtime_error_message([&] { (void)passim::load_psm(path); });
  EXPECT_TRUE(contains_all(msg, {path.string(), "not found"}));
  EXPECT_FALSE(passim::is_psm_file(path));
}

}  // namespace
