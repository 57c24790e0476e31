// SPDX-License-Identifier: Apache-2.0
// The quantiser's arithmetic: int8 weight rows, requantisation steps, norm parameters and
// SmoothQuant factors (docs/numerics.md, "Quantisation"). Internal to runtime/src/quant.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "passim/fixed_point.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim::quant {

/// A tensor that never left zero still gets a valid scale.
inline constexpr float kMinRange = 1e-6f;

/// Symmetric int8 quantisation of each row of a (rows, cols) matrix; returns the row scales.
std::vector<float> quantize_rows(std::span<const float> w, std::size_t rows, std::size_t cols,
                                 std::vector<std::int8_t>& out);

/// One output scale per channel (e.g. per-head query/key/value scales).
std::vector<Requant> channel_requant(double s_in, const std::vector<float>& s_w,
                                     const std::vector<float>& s_out);

/// One output scale for every channel.
std::vector<Requant> channel_requant(double s_in, const std::vector<float>& s_w, double s_out);

/// RMSNorm gain G[i] = g[i] * sqrt(n) / s_out in Q.F with F as large as fits int16 (<= 13).
QuantNorm quantize_rmsnorm(std::span<const float> g, double s_out, const std::string& name);

/// SmoothQuant (Xiao et al. 2023, Eq. 4) with migration strength 0.5: for a matmul input X
/// with per-channel ranges max|X_j| and weights W (rows, cols) sharing input channel j,
/// alpha_j = sqrt(max|X_j| / max_rows |W[:, j]|); X_j / alpha_j and W[:, j] * alpha_j leave
/// the product unchanged in real numbers but flatten the activation's channel ranges, which
/// is what a per-tensor int8 scale needs. Returns alpha (cols).
std::vector<float> smoothing_factors(std::span<const float> x_absmax,
                                     const std::vector<std::span<const float>>& weights,
                                     std::size_t cols);

/// W[:, j] *= alpha[j] for a (rows, cols) row-major matrix.
void scale_columns(std::span<float> w, const std::vector<float>& alpha);

/// Divides calibration ranges (and, for norms, the gains) by alpha.
void scale_down(std::vector<float>& absmax, const std::vector<float>& alpha);

/// Requantisation steps with the projection's bias folded in: bias b (real) becomes
/// round(b / (s_in * s_w[o])) accumulator LSB. Throws naming `what` when it needs more than
/// kRequantBiasBits bits.
std::vector<Requant> with_bias(std::vector<Requant> rq, std::span<const float> b, double s_in,
                               const std::vector<float>& s_w, const std::string& what);

/// LayerNorm: gain g * sqrt(n) / s_out in Q.F (as RMSNorm), bias beta / s_out.
QuantNorm quantize_layernorm(std::span<const float> g, std::span<const float> beta,
                             double s_out, const std::string& name);

/// BatchNorm y = a x + b per channel (a = g / sqrt(var + eps), b = beta - a mean), on the
/// int16 residual (scale s_in) to int8 (scale s_out): gain[c] * 2^-k = a[c] s_in / s_out
/// with the largest k that keeps every gain in int16, rq = 2^-k, bias = b / s_out.
QuantNorm quantize_batchnorm(std::span<const float> a, std::span<const float> b, double s_in,
                             double s_out, const std::string& name);

/// Per-channel affine form of a BatchNorm: a = g / sqrt(var + eps), b = beta - a * mean.
void batchnorm_affine(const float* g, const float* beta, const float* mean, const float* var,
                      std::size_t n, float eps, std::vector<float>& a, std::vector<float>& b);

}  // namespace passim::quant
