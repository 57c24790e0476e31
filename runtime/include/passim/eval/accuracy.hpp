// SPDX-License-Identifier: Apache-2.0
/// \file The integer model against its float reference, layer by layer: the largest error in
/// LSB, the cosine similarity, the saturated and zero shares of every layer's residual stream,
/// the logits' error, and the perplexity of both on the same text.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "passim/eval/perplexity.hpp"
#include "passim/model/backend.hpp"
#include "passim/model/weights.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim {

/// Int-against-float error of one tensor, accumulated over positions.
struct TensorError {
  double max_abs_lsb = 0;          ///< max |int - float / scale|, in the int tensor's LSB
  double dot = 0, nf = 0, ni = 0;  ///< for the cosine similarity of the concatenation
  long values = 0, saturated = 0, zeros = 0;

  /// Adds one position: float values `f`, int16 values `q` of scale `scale`.
  void add(std::span<const float> f, std::span<const std::int16_t> q, double scale);
  /// Adds one position's int16 values only (no float reference): the saturated and zero
  /// counts; the error and cosine stay those of no comparison (0 and 1).
  void add_int(std::span<const std::int16_t> q);
  [[nodiscard]] double cosine() const;
  [[nodiscard]] double saturated_share() const;
  [[nodiscard]] double zero_share() const;
};

/// Shares above which a layer's int output is reported as mostly saturated or collapsed.
inline constexpr double kSaturatedWarn = 0.5;
inline constexpr double kCollapsedWarn = 0.5;
inline constexpr double kCosineWarn = 0.9;
/// The self-check's thresholds (no float reference, a few positions): a calibrated model
/// saturates almost none of its activations (stories260K: at most 0.012 % of a layer's
/// residual and 0.4 % of a requantised tensor, 0.6 % zeros), while steps 4x too large in its
/// block 2 saturate 17-30 % of that block's q, k and v, or of its gate, up and hidden.
inline constexpr double kSelfCheckSaturatedWarn = 0.02;
inline constexpr double kSelfCheckCollapsedWarn = 0.25;

/// What `compare_int8_float` measured.
struct AccuracyResult {
  /// (n_layers + 1): [0] the quantised embedding (input quantisation), [l + 1] block l's
  /// output, each the int16 residual stream against float.
  std::vector<TensorError> layers;
  TensorError logits;        ///< in Q.16 LSB (cosine of the real values)
  PerplexityResult int8;     ///< the integer model on the text
  PerplexityResult float32;  ///< the float model on the same text
  std::vector<std::string> warnings;  ///< layers mostly saturated or collapsed, named
  /// Empty, or why the float reference is invalid: the float forward's first error (e.g.
  /// logits that overflow float32). Positions where the float forward failed are left out of
  /// `layers` and `logits`, and `float32` is then empty (predicted == 0).
  std::string float_error;
  long float_failed_positions = 0;  ///< paired positions whose float forward failed
  bool has_float = true;  ///< false from `inspect_int8`: no float model, int-only statistics
};

/// "0 input quantisation" for entry 0 of AccuracyResult::layers, "l block l-1 output" after.
[[nodiscard]] std::string accuracy_layer_label(std::size_t entry);

/// Runs the float model `fm` and the integer model `qm` (cpu backend) side by side over a text
/// (`evaluate` feeds the text to a backend and returns its perplexity; it is called twice on
/// float-and-int pairs and once more on the float model alone) and compares them. A float
/// forward that fails (std::runtime_error) does not stop the comparison: it is recorded in
/// `float_error`, and the integer model is still measured.
[[nodiscard]] AccuracyResult compare_int8_float(
    const FloatModel& fm, const QuantModel& qm,
    const std::function<PerplexityResult(Backend&)>& evaluate);

/// The integer model alone (a `.psm`, whose float model is not at hand): every layer's
/// saturated and zero shares (no error, no cosine: `has_float` is false), the int8 perplexity
/// from `evaluate` (called once, on the cpu backend), the warnings of `compare_int8_float`, and
/// one for each requantised tensor (CpuBackend::set_saturation_observer) of which more than
/// kSelfCheckSaturatedWarn of the values are saturated.
[[nodiscard]] AccuracyResult inspect_int8(
    const QuantModel& qm, const std::function<PerplexityResult(Backend&)>& evaluate);

/// The self-check of an integer model without its float reference: runs `qm` on the cpu
/// backend for `positions` positions (at most seq_len), feeding `tokens` and then the model's
/// own greedy continuation (BOS first when `tokens` is empty), and returns a warning for each
/// layer whose int16 residual output is saturated or collapsed beyond kSelfCheckSaturatedWarn
/// or kSelfCheckCollapsedWarn (worded as `compare_int8_float`'s warnings), and for each
/// requantised tensor saturated beyond kSelfCheckSaturatedWarn, e.g. after a wrong scale.
/// Empty when every layer looks sane. (A residual-side step that is too large saturates
/// nothing and goes unseen: only the float reference, `compare_int8_float`, shows it.)
[[nodiscard]] std::vector<std::string> self_check(const QuantModel& qm,
                                                  std::span<const int> tokens, int positions);

}  // namespace passim
