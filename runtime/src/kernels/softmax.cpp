// SPDX-License-Identifier: Apache-2.0
// Golden integer Softmax (I-BERT Alg. 2 exponential): the 3-pass version and the online 2-pass
// version (Milakov & Gimelshein 2018, Alg. 3). RTL twin: rtl/softmax/psm_softmax.sv.
#include "passim/kernels/softmax.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <limits>
#include <string>

#include "passim/kernels/require.hpp"

namespace passim::kernels {

namespace {

/// exp of a difference d <= 0 taken in int64: iexp_q10(max(d, -2^20)); exp below -2^20 LSB
/// is 0 anyway, and the clamp lets any two int32 logits be subtracted.
std::uint32_t iexp_diff(std::int64_t d) {
  assert(d <= 0);
  return iexp_q10(static_cast<std::int32_t>(std::max<std::int64_t>(d, -(1 << 20))));
}

/// recip = floor(kProbOne * 2^32 / sum), once per row. sum >= kExpOne > 2^21 (the maximum
/// contributes exp(0)), so recip < 2^15 * 2^32 / 2^21 = 2^26.
std::uint64_t softmax_recip(std::uint64_t sum) {
  assert(sum >= std::uint64_t(kExpOne));
  return (std::uint64_t{kProbOne} << kSoftmaxRecipBits) / sum;
}

/// One output of the normalising pass: min(kProbOne, (e * recip + 2^31) >> 32), where
/// e * recip < 2^22 * 2^26 = 2^48 (a 32 x 32 -> 64-bit product, which vectorises), so the
/// quotient is below 2^17 and the minimum is taken in int32.
std::int16_t prob_q15(std::uint32_t e, std::uint64_t recip) {
  const std::uint64_t prod = std::uint64_t{e} * static_cast<std::uint32_t>(recip);
  const auto q = static_cast<std::int32_t>(
      (prod + (std::uint64_t{1} << (kSoftmaxRecipBits - 1))) >> kSoftmaxRecipBits);
  return static_cast<std::int16_t>(std::min(q, kProbOne));
}

/// exp(x - m) for x <= m: iexp_diff(x - m), the difference taken in int64.
std::uint32_t exp_below(std::int32_t x, std::int32_t m) {
  return iexp_diff(std::int64_t{x} - m);
}

/// Elements summed in uint32 before the uint64 row sum: 512 * kExpOne < 2^31.
constexpr std::size_t kExpSumBlock = 512;

/// e[i] = exp(x[i] - m) for a row whose maximum is m; returns the row sum.
std::uint64_t row_exps(std::span<const std::int32_t> x, std::int32_t m, std::uint32_t* e) {
  const std::size_t n = x.size();
  for (std::size_t i = 0; i < n; ++i) {
    e[i] = exp_below(x[i], m);
  }
  std::uint64_t sum = 0;  // integer sums do not depend on the order
  for (std::size_t b = 0; b < n; b += kExpSumBlock) {
    const std::size_t end = std::min(n, b + kExpSumBlock);
    std::uint32_t part = 0;
    for (std::size_t i = b; i < end; ++i) {
      part += e[i];
    }
    sum += part;
  }
  return sum;
}

/// A row of n >= 1 logits with room for n exponentials and n probabilities.
void require_row(std::string_view kernel, std::span<const std::int32_t> x, std::size_t e_size,
                 std::size_t out_size) {
  require_at_least(kernel, "x", 1, x.size());
  require_at_least(kernel, "e_scratch", x.size(), e_size);
  require_at_least(kernel, "out", x.size(), out_size);
}

/// Passes 2 and 3 with the row maximum m: integer exponentials of (x - m) <= 0 and their sum
/// (any int32 row works; exp of anything below -2^20 LSB is 0), then one reciprocal per row.
void normalise_from_max(std::span<const std::int32_t> x, std::int32_t m,
                        std::span<std::uint32_t> e_scratch, std::span<std::int16_t> out) {
  const std::uint64_t sum = row_exps(x, m, e_scratch.data());
  const std::uint64_t recip = softmax_recip(sum);
  for (std::size_t i = 0; i < x.size(); ++i) {
    out[i] = prob_q15(e_scratch[i], recip);
  }
}

}  // namespace

void softmax_i16(std::span<const std::int32_t> x, std::span<std::uint32_t> e_scratch,
                 std::span<std::int16_t> out) {
  require_row("softmax_i16", x, e_scratch.size(), out.size());
  // Pass 1: row maximum.
  std::int32_t m = x[0];
  for (std::size_t i = 1; i < x.size(); ++i) {
    m = std::max(m, x[i]);
  }
  normalise_from_max(x, m, e_scratch, out);
}

void softmax_max_i16(std::span<const std::int32_t> x, std::int32_t m,
                     std::span<std::uint32_t> e_scratch, std::span<std::int16_t> out) {
  require_row("softmax_max_i16", x, e_scratch.size(), out.size());
  const std::int32_t max_x = *std::max_element(x.begin(), x.end());
  if (max_x != m) {
    throw_precondition("softmax_max_i16",
                       "m: expected max(x) = " + std::to_string(max_x) + ", found " +
                           std::to_string(m));
  }
  normalise_from_max(x, m, e_scratch, out);
}

void softmax_online_i16(std::span<const std::int32_t> x, std::size_t lanes,
                        std::span<std::int16_t> out) {
  require_at_least("softmax_online_i16", "x", 1, x.size());
  if (x.size() >= (std::size_t{1} << 16)) {
    throw_size_error("softmax_online_i16", "x", "at most", (std::size_t{1} << 16) - 1, x.size());
  }
  require_at_least("softmax_online_i16", "out", x.size(), out.size());
  if (lanes < 1 || lanes > kMaxSoftmaxLanes) {
    throw_precondition("softmax_online_i16", "lanes: expected 1.." +
                                                 std::to_string(kMaxSoftmaxLanes) + ", found " +
                                                 std::to_string(lanes));
  }
  // Pass 1: per-lane running maximum and sum. When x raises the lane's maximum, the old sum is
  // rescaled by exp(m_old - x) and x contributes exp(0) = kExpOne. An empty lane keeps
  // (INT32_MIN, 0), which adds nothing below. s_l <= (elements of lane l) * kExpOne < 2^38.
  std::array<std::int32_t, kMaxSoftmaxLanes> lane_max{};
  std::array<std::uint64_t, kMaxSoftmaxLanes> lane_sum{};
  lane_max.fill(std::numeric_limits<std::int32_t>::min());
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::int32_t& m = lane_max[i % lanes];
    std::uint64_t& s = lane_sum[i % lanes];
    if (x[i] > m) {
      s = exp_rescale(s, iexp_diff(std::int64_t{m} - x[i])) + std::uint64_t(kExpOne);
      m = x[i];
    } else {
      s += iexp_diff(std::int64_t{x[i]} - m);
    }
  }
  // Lane combine: the row maximum, then every lane's sum rescaled to it (the lanes holding
  // the maximum are rescaled by exactly 1.0).
  const std::int32_t m =
      *std::max_element(lane_max.begin(), lane_max.begin() + std::ptrdiff_t(lanes));
  std::uint64_t sum = 0;
  for (std::size_t l = 0; l < lanes; ++l) {
    sum += exp_rescale(lane_sum[l], iexp_diff(std::int64_t{lane_max[l]} - m));
  }
  // Pass 2: normalise exactly like pass 3 of softmax_i16, recomputing the exponentials.
  const std::uint64_t recip = softmax_recip(sum);
  for (std::size_t i = 0; i < x.size(); ++i) {
    out[i] = prob_q15(exp_below(x[i], m), recip);
  }
}

void softmax_row_i16(std::span<const std::int32_t> x, SoftmaxOptions opt,
                     std::span<std::uint32_t> e_scratch, std::span<std::int16_t> out) {
  if (opt.mode == SoftmaxMode::kOnline) {
    softmax_online_i16(x, opt.lanes, out);
  } else {
    softmax_i16(x, e_scratch, out);
  }
}

}  // namespace passim::kernels
