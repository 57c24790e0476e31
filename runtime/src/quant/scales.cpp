// SPDX-License-Identifier: Apache-2.0
// The quantiser's arithmetic (docs/numerics.md, "Quantisation").
#include "scales.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace passim::quant {

namespace {

/// Per-output-channel requantisation: M[o] = s_in * s_w[o] / s_out(o).
template <typename OutScale>
std::vector<Requant> channel_requant_by(double s_in, const std::vector<float>& s_w,
                                        OutScale s_out) {
  std::vector<Requant> rq(s_w.size());
  for (std::size_t o = 0; o < s_w.size(); ++o) {
    rq[o] = make_requant(s_in * double(s_w[o]) / s_out(o));
  }
  return rq;
}

std::int16_t to_i16(double v) {
  return static_cast<std::int16_t>(std::clamp(std::nearbyint(v), -32768.0, 32767.0));
}

}  // namespace

/// Symmetric int8 quantisation of each row of a (rows, cols) matrix; returns the row scales.
std::vector<float> quantize_rows(std::span<const float> w, std::size_t rows, std::size_t cols,
                                 std::vector<std::int8_t>& out) {
  out.resize(rows * cols);
  std::vector<float> scales(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    float m = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) {
      m = std::max(m, std::fabs(w[r * cols + c]));
    }
    const float s = std::max(m, kMinRange) / 127.0f;
    scales[r] = s;
    for (std::size_t c = 0; c < cols; ++c) {
      const float q = std::nearbyint(w[r * cols + c] / s);
      out[r * cols + c] = static_cast<std::int8_t>(std::clamp(q, -127.0f, 127.0f));
    }
  }
  return scales;
}

/// One output scale per channel (e.g. per-head query/key/value scales).
std::vector<Requant> channel_requant(double s_in, const std::vector<float>& s_w,
                                     const std::vector<float>& s_out) {
  return channel_requant_by(s_in, s_w, [&](std::size_t o) { return double(s_out[o]); });
}

/// One output scale for every channel.
std::vector<Requant> channel_requant(double s_in, const std::vector<float>& s_w, double s_out) {
  return channel_requant_by(s_in, s_w, [=](std::size_t) { return s_out; });
}

/// RMSNorm gain G[i] = g[i] * sqrt(n) / s_out in Q.F with F as large as fits int16 (<= 13).
QuantNorm quantize_rmsnorm(std::span<const float> g, double s_out, const std::string& name) {
  const double sqrt_n = std::sqrt(double(g.size()));
  double max_g = 0;
  for (const float v : g) {
    max_g = std::max(max_g, std::fabs(double(v)) * sqrt_n / s_out);
  }
  int frac = 13;
  while (frac > 0 && max_g * std::ldexp(1.0, frac) > 32767.0) {
    --frac;
  }
  if (max_g * std::ldexp(1.0, frac) > 32767.0) {
    throw std::runtime_error(fmt::format(
        "quantize: {} gain: expected max |g| * sqrt(n) / s_out <= 32767, found {}", name, max_g));
  }
  QuantNorm qn;
  qn.frac_bits = frac;
  qn.gain.resize(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    qn.gain[i] = static_cast<std::int16_t>(
        std::nearbyint(double(g[i]) * sqrt_n / s_out * std::ldexp(1.0, frac)));
  }
  return qn;
}

/// SmoothQuant (Xiao et al. 2023, Eq. 4) with migration strength 0.5: for a matmul input X
/// with per-channel ranges max|X_j| and weights W (rows, cols) sharing input channel j,
/// alpha_j = sqrt(max|X_j| / max_rows |W[:, j]|); X_j / alpha_j and W[:, j] * alpha_j leave
/// the product unchanged in real numbers but flatten the activation's channel ranges, which
/// is what a per-tensor int8 scale needs. Returns alpha (cols).
std::vector<float> smoothing_factors(std::span<const float> x_absmax,
                                     const std::vector<std::span<const float>>& weights,
                                     std::size_t cols) {
  std::vector<float> w_absmax(cols, kMinRange);
  for (const auto& w : weights) {
    for (std::size_t i = 0; i < w.size(); ++i) {
      w_absmax[i % cols] = std::max(w_absmax[i % cols], std::fabs(w[i]));
    }
  }
  std::vector<float> alpha(cols, 1.0f);
  for (std::size_t j = 0; j < cols && j < x_absmax.size(); ++j) {
    alpha[j] = std::sqrt(std::max(x_absmax[j], kMinRange) / w_absmax[j]);
  }
  return alpha;
}

/// W[:, j] *= alpha[j] for a (rows, cols) row-major matrix.
void scale_columns(std::span<float> w, const std::vector<float>& alpha) {
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] *= alpha[i % alpha.size()];
  }
}

/// Divides calibration ranges (and, for norms, the gains) by alpha.
void scale_down(std::vector<float>& absmax, const std::vector<float>& alpha) {
  for (std::size_t j = 0; j < absmax.size() && j < alpha.size(); ++j) {
    absmax[j] /= alpha[j];
  }
}

/// Requantisation steps with the projection's bias folded in: bias b (real) becomes
/// round(b / (s_in * s_w[o])) accumulator LSB. Throws naming `what` when it needs more than
/// kRequantBiasBits bits.
std::vector<Requant> with_bias(std::vector<Requant> rq, std::span<const float> b, double s_in,
                               const std::vector<float>& s_w, const std::string& what) {
  const double lim = std::ldexp(1.0, kRequantBiasBits - 1) - 1;
  for (std::size_t o = 0; o < rq.size(); ++o) {
    const double v = std::nearbyint(double(b[o]) / (s_in * double(s_w[o])));
    if (!(std::fabs(v) <= lim)) {
      throw std::runtime_error(fmt::format(
          "quantize: {} bias of channel {}: expected |b / (s_in s_w)| < 2^{} accumulator LSB, "
          "found {}", what, o, kRequantBiasBits - 1, v));
    }
    rq[o].bias = static_cast<std::int32_t>(v);
  }
  return rq;
}

/// LayerNorm: gain g * sqrt(n) / s_out in Q.F (as RMSNorm), bias beta / s_out.
QuantNorm quantize_layernorm(std::span<const float> g, std::span<const float> beta,
                             double s_out, const std::string& name) {
  QuantNorm qn = quantize_rmsnorm(g, s_out, name);
  for (const float b : beta) {
    qn.bias.push_back(to_i16(double(b) / s_out));
  }
  return qn;
}

/// BatchNorm y = a x + b per channel (a = g / sqrt(var + eps), b = beta - a mean), on the
/// int16 residual (scale s_in) to int8 (scale s_out): gain[c] * 2^-k = a[c] s_in / s_out
/// with the largest k that keeps every gain in int16, rq = 2^-k, bias = b / s_out.
QuantNorm quantize_batchnorm(std::span<const float> a, std::span<const float> b, double s_in,
                             double s_out, const std::string& name) {
  double max_a = 0;
  for (const float v : a) {
    max_a = std::max(max_a, std::fabs(double(v)) * s_in / s_out);
  }
  int k = 0;
  while (k < 30 && max_a * std::ldexp(1.0, k + 1) <= 32767.0) {
    ++k;
  }
  if (max_a * std::ldexp(1.0, k) > 32767.0) {
    throw std::runtime_error(fmt::format(
        "quantize: {}: expected max |a| s_in / s_out <= 32767, found {}", name, max_a));
  }
  QuantNorm qn;
  qn.rq = make_requant(std::ldexp(1.0, -k));
  for (std::size_t c = 0; c < a.size(); ++c) {
    qn.gain.push_back(to_i16(double(a[c]) * s_in / s_out * std::ldexp(1.0, k)));
    qn.bias.push_back(to_i16(double(b[c]) / s_out));
  }
  return qn;
}

/// Per-channel affine form of a BatchNorm: a = g / sqrt(var + eps), b = beta - a * mean.
void batchnorm_affine(const float* g, const float* beta, const float* mean, const float* var,
                      std::size_t n, float eps, std::vector<float>& a, std::vector<float>& b) {
  a.resize(n);
  b.resize(n);
  for (std::size_t c = 0; c < n; ++c) {
    const double ac = double(g[c]) / std::sqrt(double(var[c]) + double(eps));
    a[c] = float(ac);
    b[c] = float(double(beta[c]) - ac * double(mean[c]));
  }
}

}  // namespace passim::quant
