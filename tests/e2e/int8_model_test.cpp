// SPDX-License-Identifier: Apache-2.0
// The int8 (cpu) backend on stories260K: accuracy against float, and the CS224N-style
// invariants (causality bit for bit, attention rows summing to one, finiteness, shapes).
#include <cmath>
#include <memory>

#include <gtest/gtest.h>

#include "passim/eval/calibrate.hpp"
#include "passim/eval/generate.hpp"
#include "passim/eval/perplexity.hpp"
#include "passim/io/file.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/io/psm.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/model/weights.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quant_model.hpp"
#include "passim/quant/quantize.hpp"
#include "test_data.hpp"

namespace {

/// Loads stories260K once and quantises it with the default (self-generated) calibration.
class Int8Model : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(passim::test::model_path())) {
      return;
    }
    float_model_ = std::make_unique<passim::FloatModel>(
        passim::load_llama2c(passim::test::model_path()));
    tok_ = std::make_unique<passim::Tokenizer>(
        passim::Tokenizer::load(passim::test::tokenizer_path(), 512));
    const auto calib = passim::calibrate(
        *float_model_, passim::self_generated_calibration(*float_model_, 128));
    quant_model_ = std::make_unique<passim::QuantModel>(passim::quantize(*float_model_, calib));
  }
  static void TearDownTestSuite() {
    quant_model_.reset();
    tok_.reset();
    float_model_.reset();
  }
  void SetUp() override { PASSIM_REQUIRE_DATA(); }

  static std::vector<std::string> sample_documents() {
    const auto bytes = passim::read_file(passim::test::sample_text_path(), 1 << 20);
    return passim::split_documents({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  }

  static inline std::unique_ptr<passim::FloatModel> float_model_;
  static inline std::unique_ptr<passim::Tokenizer> tok_;
  static inline std::unique_ptr<passim::QuantModel> quant_model_;
};

TEST_F(Int8Model, PerplexityWithinFivePercentOfFloat) {
  const auto docs = sample_documents();
  passim::FloatBackend fb(*float_model_);
  passim::CpuBackend cb(*quant_model_);
  const double ppl_f = passim::perplexity(fb, *tok_, docs).perplexity();
  const double ppl_i = passim::perplexity(cb, *tok_, docs).perplexity();
  RecordProperty("perplexity_float", std::to_string(ppl_f));
  RecordProperty("perplexity_int8", std::to_string(ppl_i));
  std::printf("perplexity: float %.4f, int8 %.4f (%+.2f%%)\n", ppl_f, ppl_i,
              100.0 * (ppl_i / ppl_f - 1.0));
  EXPECT_LE(std::fabs(ppl_i / ppl_f - 1.0), 0.05);
}

TEST_F(Int8Model, TeacherForcedTop1AgreementAtLeast95Percent) {
  passim::FloatBackend fb(*float_model_);
  passim::CpuBackend cb(*quant_model_);
  const auto agree = passim::top1_agreement(fb, cb, *tok_, sample_documents());
  std::printf("top-1 agreement: %ld / %ld = %.2f%%\n", agree.top1_agree, agree.positions,
              100.0 * agree.rate());
  EXPECT_GE(agree.rate(), 0.95);
}

TEST_F(Int8Model, CausalMaskLaterTokensNeverChangeEarlierLogits) {
  const std::vector<int> a = tok_->encode("Once upon a time, there was a little dog", true, false);
  std::vector<int> b = a;
  const std::size_t changed = 6;
  ASSERT_LT(changed, a.size());
  b[changed] = (b[changed] + 17) % 512;
  passim::CpuBackend ca(*quant_model_);
  passim::CpuBackend cbk(*quant_model_);
  for (std::size_t t = 0; t < a.size(); ++t) {
    ca.forward(a[t], static_cast<int>(t));
    cbk.forward(b[t], static_cast<int>(t));
    const auto la = ca.logits_i32();
    const auto lb = cbk.logits_i32();
    const bool same = std::equal(la.begin(), la.end(), lb.begin(), lb.end());
    if (t < changed) {
      EXPECT_TRUE(same) << "position " << t << " changed although only position " << changed
                        << " differs";
    } else {
      EXPECT_FALSE(same) << "position " << t << " ignored the changed token";
    }
  }
}

TEST_F(Int8Model, AttentionRowsSumToOneWithinBound) {
  // Bound (docs/numerics.md): |sum(p) - 32767| <= ceil(n / 2) + 1 LSB for a row of n, because
  // each of the n outputs rounds once (+-0.5) and the floored reciprocal loses < 1 LSB in all.
  passim::CpuBackend cb(*quant_model_);
  cb.capture_attention(true);
  const std::vector<int> ids = tok_->encode(sample_documents()[0], true, false);
  int worst = 0;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    cb.forward(ids[t], static_cast<int>(t));
    for (int l = 0; l < quant_model_->config.n_layers; ++l) {
      for (int h = 0; h < quant_model_->config.n_heads; ++h) {
        const auto row = cb.attention_row(l, h);
        ASSERT_EQ(row.size(), t + 1);
        int sum = 0;
        for (const std::int16_t p : row) {
          ASSERT_GE(p, 0);
          sum += p;
        }
        const int err = std::abs(sum - passim::kProbOne);
        worst = std::max(worst, err);
        ASSERT_LE(err, int((row.size() + 1) / 2) + 1) << "layer " << l << " head " << h;
      }
    }
  }
  std::printf("attention row sums: worst |sum - 32767| = %d LSB over %zu positions\n", worst,
              ids.size());
}

TEST_F(Int8Model, LogitsFiniteAndShaped) {
  passim::CpuBackend cb(*quant_model_);
  passim::FloatBackend fb(*float_model_);
  const std::vector<int> ids = tok_->encode("The cat sat", true, false);
  for (std::size_t t = 0; t < ids.size(); ++t) {
    cb.forward(ids[t], static_cast<int>(t));
    fb.forward(ids[t], static_cast<int>(t));
    ASSERT_EQ(cb.logits().size(), 512u);
    ASSERT_EQ(cb.logits_i32().size(), 512u);
    ASSERT_EQ(fb.logits().size(), 512u);
    for (std::size_t i = 0; i < 512; ++i) {
      ASSERT_TRUE(std::isfinite(cb.logits()[i]));
      ASSERT_TRUE(std::isfinite(fb.logits()[i]));
    }
  }
}

TEST_F(Int8Model, SavedModelRunsIdentically) {
  const auto bytes = passim::serialize_psm(*quant_model_);
  const auto loaded = passim::parse_psm(bytes, "memory.psm");
  passim::CpuBackend a(*quant_model_);
  passim::CpuBackend b(loaded);
  passim::GenerateOptions opts;
  opts.prompt = "One day";
  opts.steps = 24;
  const auto ra = passim::generate(a, *tok_, opts, nullptr);
  const auto rb = passim::generate(b, *tok_, opts, nullptr);
  EXPECT_EQ(ra.generated_tokens, rb.generated_tokens);
  EXPECT_TRUE(std::equal(a.logits_i32().begin(), a.logits_i32().end(), b.logits_i32().begin()));
}

}  // namespace
