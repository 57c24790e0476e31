// SPDX-License-Identifier: Apache-2.0
// Whole sequences: a prompt fed in one pass (every matmul on n rows) and then decoded token by
// token gives exactly what token-by-token decoding gives, on the float and cpu backends; and
// within a pass, a later token never changes an earlier position's outputs (the causal mask).
#include <algorithm>
#include <memory>
#include <span>
#include <stdexcept>
#include <string_view>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "passim/eval/calibrate.hpp"
#include "passim/eval/generate.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quantize.hpp"
#include "test_data.hpp"

namespace {

using namespace passim;

/// A backend that throws when it reaches position `stop`, as the simulator's watchdog does.
class StopAt final : public Backend {
 public:
  StopAt(Backend& inner, int stop) : inner_(inner), stop_(stop) {}
  [[nodiscard]] std::string_view name() const noexcept override { return inner_.name(); }
  [[nodiscard]] const ModelConfig& config() const noexcept override { return inner_.config(); }
  void forward(int token, int pos) override {
    if (pos == stop_) {
      throw std::runtime_error("stopped");
    }
    inner_.forward(token, pos);
  }
  [[nodiscard]] std::span<const float> logits() const noexcept override {
    return inner_.logits();
  }
  void reset() override { inner_.reset(); }

 private:
  Backend& inner_;
  int stop_;
};

class Prefill : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(test::model_path())) {
      return;
    }
    fm_ = std::make_unique<FloatModel>(load_llama2c(test::model_path()));
    tok_ = std::make_unique<Tokenizer>(Tokenizer::load(test::tokenizer_path(), 512));
    qm_ = std::make_unique<QuantModel>(
        quantize(*fm_, calibrate(*fm_, self_generated_calibration(*fm_, 64))));
  }
  static void TearDownTestSuite() {
    qm_.reset();
    tok_.reset();
    fm_.reset();
  }
  void SetUp() override { PASSIM_REQUIRE_DATA(); }

  /// Generation with and without prefill: the same ids, text and last logits.
  static void expect_same_generation(Backend& a, Backend& b, const GenerateOptions& base) {
    GenerateOptions with = base, without = base;
    with.prefill = true;
    without.prefill = false;
    const GenerateResult ra = generate(a, *tok_, with, nullptr);
    const std::vector<float> la(a.logits().begin(), a.logits().end());
    const GenerateResult rb = generate(b, *tok_, without, nullptr);
    EXPECT_GT(ra.prefill_positions, 8) << "the prompt is prefilled";
    EXPECT_EQ(rb.prefill_positions, 0);
    EXPECT_EQ(ra.prompt_tokens, rb.prompt_tokens);
    EXPECT_EQ(ra.generated_tokens, rb.generated_tokens);
    EXPECT_EQ(ra.text, rb.text);
    EXPECT_EQ(la, std::vector<float>(b.logits().begin(), b.logits().end()));
  }

  static inline std::unique_ptr<FloatModel> fm_;
  static inline std::unique_ptr<Tokenizer> tok_;
  static inline std::unique_ptr<QuantModel> qm_;
};

GenerateOptions story(float temperature) {
  GenerateOptions o;
  o.prompt = "Once upon a time, there was a little girl named Lily. She loved to play";
  o.steps = 64;
  o.temperature = temperature;
  o.seed = 7;
  return o;
}

TEST_F(Prefill, CpuGreedyAndSampledEqualTokenByToken) {
  CpuBackend a(*qm_), b(*qm_);
  expect_same_generation(a, b, story(0.0f));
  expect_same_generation(a, b, story(0.9f));
}

TEST_F(Prefill, FloatEqualsTokenByToken) {
  FloatBackend a(*fm_), b(*fm_);
  expect_same_generation(a, b, story(0.0f));
}

TEST_F(Prefill, CpuOnlineSoftmaxEqualsTokenByToken) {
  const kernels::SoftmaxOptions online{kernels::SoftmaxMode::kOnline, 8};
  CpuBackend a(*qm_, online), b(*qm_, online);
  expect_same_generation(a, b, story(0.0f));
}

// Changing the last token of a 40-token pass leaves every earlier position's residual stream,
// in every layer, unchanged; the last position's changes.
TEST_F(Prefill, LaterTokenNeverChangesEarlierPositions) {
  std::vector<int> tokens = tok_->encode(story(0.0f).prompt, true, false);
  tokens.resize(std::min<std::size_t>(tokens.size(), 40));
  ASSERT_GE(tokens.size(), 12u);
  auto residuals = [&](const std::vector<int>& ids) {
    CpuBackend cpu(*qm_);
    std::vector<std::vector<std::int16_t>> rows;
    cpu.set_residual_observer([&](int, std::span<const std::int16_t> x) {
      rows.emplace_back(x.begin(), x.end());
    });
    cpu.forward_sequence(ids, 0);
    return rows;  // (layers + 1) x n rows, layer-major
  };
  std::vector<int> changed = tokens;
  changed.back() = changed.back() == 42 ? 43 : 42;
  const auto a = residuals(tokens), b = residuals(changed);
  ASSERT_EQ(a.size(), b.size());
  const std::size_t n = tokens.size();
  std::size_t last_differs = 0;
  for (std::size_t r = 0; r < a.size(); ++r) {
    if (r % n + 1 < n) {
      EXPECT_EQ(a[r], b[r]) << "layer " << int(r / n) - 1 << ", position " << r % n;
    } else {
      last_differs += a[r] != b[r] ? 1 : 0;
    }
  }
  EXPECT_GT(last_differs, 0u) << "the changed token's own position must change";
}

// A run stopped at a position (by the watchdog, say) leaves what completed in the result: the
// prompt's tokens, the positions, the ids chosen before the stop; a stop inside the prefill
// pass leaves no position.
TEST_F(Prefill, AStoppedRunKeepsTheCompletedPositions) {
  FloatBackend fb(*fm_);
  GenerateOptions o{.prompt = "Once upon a time", .steps = 24, .prefill = false};
  const GenerateResult full = generate(fb, *tok_, o, nullptr);
  const int n_prompt = int(full.prompt_tokens.size());
  ASSERT_GT(n_prompt, 2);
  StopAt stop(fb, 16);
  GenerateResult r;
  EXPECT_THROW(generate_into(r, stop, *tok_, o, nullptr), std::runtime_error);
  EXPECT_EQ(r.prompt_tokens, full.prompt_tokens);
  EXPECT_EQ(r.steps, 16);
  ASSERT_EQ(r.generated_tokens.size(), std::size_t(16 - (n_prompt - 1)));
  EXPECT_TRUE(std::equal(r.generated_tokens.begin(), r.generated_tokens.end(),
                         full.generated_tokens.begin()));
  EXPECT_EQ(r.prefill_positions, 0);
  EXPECT_EQ(r.seconds, 0.0) << "timings only for a run that ends";

  o.prefill = true;  // the default forward_sequence feeds the prompt through forward()
  StopAt early(fb, 1);
  EXPECT_THROW(generate_into(r, early, *tok_, o, nullptr), std::runtime_error);
  EXPECT_EQ(r.prompt_tokens, full.prompt_tokens);
  EXPECT_EQ(r.steps, 0);
  EXPECT_EQ(r.prefill_positions, 0);
  EXPECT_TRUE(r.generated_tokens.empty());
}

TEST_F(Prefill, BadSequencesAreRefused) {
  CpuBackend cpu(*qm_);
  const std::vector<int> none;
  EXPECT_THROW(cpu.forward_sequence(none, 0), std::runtime_error);
  const std::vector<int> too_long(513, 1);
  EXPECT_THROW(cpu.forward_sequence(too_long, 0), std::runtime_error);
  const std::vector<int> two{1, 2};
  EXPECT_THROW(cpu.forward_sequence(two, 511), std::runtime_error);
  const std::vector<int> bad_token{1, 512};
  EXPECT_THROW(cpu.forward_sequence(bad_token, 0), std::runtime_error);
}

}  // namespace
