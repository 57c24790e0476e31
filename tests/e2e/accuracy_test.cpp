// SPDX-License-Identifier: Apache-2.0
// compare_int8_float when the float reference is invalid: a float forward that fails (its
// logits overflow float32) is said, not fatal; the integer model is still measured.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpt_fixture.hpp"
#include "passim/eval/accuracy.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/eval/perplexity.hpp"
#include "passim/quant/quantize.hpp"

namespace {

TEST(AccuracyFloatReference, AnOverflowingFloatModelIsReportedNotFatal) {
  passim::FloatModel fm = passim::test::random_gpt(passim::NormKind::kLayer, 31);
  const passim::Tokenizer tok = passim::test::random_gpt_tokenizer();
  const auto calib = passim::calibrate(fm, passim::self_generated_calibration(fm, 16));
  const passim::QuantModel qm = passim::quantize(fm, calib);
  const std::vector<std::string> docs = {"abcdefgabc", "jihgf"};
  const auto evaluate = [&](passim::Backend& b) { return passim::perplexity(b, tok, docs); };

  const passim::AccuracyResult ok = passim::compare_int8_float(fm, qm, evaluate);
  EXPECT_TRUE(ok.float_error.empty()) << ok.float_error;
  EXPECT_GT(ok.float32.predicted, 0);

  // The final norm's gain at 1e38: the float logits overflow, the residuals do not.
  for (float& g : fm.weights.rms_final) {
    g *= 1e38f;
  }
  passim::AccuracyResult bad;
  ASSERT_NO_THROW(bad = passim::compare_int8_float(fm, qm, evaluate));
  EXPECT_NE(bad.float_error.find("non-finite logits"), std::string::npos) << bad.float_error;
  EXPECT_GT(bad.float_failed_positions, bad.int8.predicted / 2);
  EXPECT_EQ(bad.float32.predicted, 0);
  EXPECT_EQ(bad.int8.predicted, ok.int8.predicted);
  EXPECT_DOUBLE_EQ(bad.int8.total_nll, ok.int8.total_nll);  // the integer model is unchanged
  EXPECT_TRUE(std::isfinite(bad.int8.perplexity()));
  // Only the positions with a valid float reference are compared (11 logits each).
  EXPECT_EQ(bad.logits.values, (bad.int8.predicted - bad.float_failed_positions) * 11);
  bool warned = false;
  for (const std::string& w : bad.warnings) {
    warned = warned || w.find("float reference is invalid") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

}  // namespace

namespace selfcheck {

/// Makes every step of `rq` 2^k times larger (as a scale 2^k times too small folded into the
/// steps would).
void shift_steps(std::vector<passim::Requant>& rq, int k) {
  for (passim::Requant& r : rq) {
    r.shift = std::max(r.shift - k, 0);
  }
}

/// True when one of `warnings` contains every one of `parts`.
bool any_has(const std::vector<std::string>& warnings, std::initializer_list<std::string> parts) {
  return std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) {
    return std::all_of(parts.begin(), parts.end(),
                       [&](const std::string& p) { return w.find(p) != std::string::npos; });
  });
}

// The random model's residual is clean (its LayerNorm outputs saturate 2-3 %: random weights
// and 16 calibration positions); a broken step shows in the layer it breaks.
TEST(SelfCheck, NamesTheLayerAWrongScaleSaturatesOrCollapses) {
  const passim::FloatModel fm = passim::test::random_gpt(passim::NormKind::kLayer, 32, 32, 64, 3);
  const auto calib = passim::calibrate(fm, passim::self_generated_calibration(fm, 16));
  const passim::QuantModel good = passim::quantize(fm, calib);
  const std::vector<int> tokens = {0, 3, 5, 7, 2, 9, 4, 1};
  const auto warn_good = passim::self_check(good, tokens, 8);
  EXPECT_FALSE(any_has(warn_good, {"output"})) << warn_good.front();

  passim::QuantModel loud = good;  // block 1 writes its outputs 4x too large
  shift_steps(loud.layers[1].rq_o, 2);
  shift_steps(loud.layers[1].rq_2, 2);
  EXPECT_TRUE(any_has(passim::self_check(loud, tokens, 8), {"2 block 1 output", "saturated"}));

  passim::QuantModel ffn = good;  // block 2's up projection 4x too large
  shift_steps(ffn.layers[2].rq_1, 2);
  EXPECT_TRUE(any_has(passim::self_check(ffn, tokens, 8), {"layer 3 (block 2)", "up values"}));
  EXPECT_FALSE(any_has(passim::self_check(good, tokens, 8), {"up values"}));

  passim::QuantModel quiet = good;  // the embedding 4096x too small: every residual collapses
  for (passim::Requant& r : quiet.embed_rq) {
    r.shift = std::min(r.shift + 12, 63);
  }
  for (passim::Requant& r : quiet.pos_rq) {
    r.shift = std::min(r.shift + 12, 63);
  }
  EXPECT_TRUE(any_has(passim::self_check(quiet, tokens, 8), {"input quantisation", "collapsed"}));
}

}  // namespace selfcheck
