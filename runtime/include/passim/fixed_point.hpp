// SPDX-License-Identifier: Apache-2.0
/// \file Fixed-point primitives shared by every golden kernel: rounding shifts, saturation,
/// requantisation, integer square root and the I-BERT integer exponential.
///
/// Each primitive is implemented once here and once in RTL; docs/numerics.md is the contract.
/// C++20 guarantees two's complement and arithmetic right shift of negative values; the
/// rounding shifts below rely on both.
#pragma once

#include <cassert>
#include <cstdint>
#include <limits>

namespace passim {

/// Rounds `x / 2^shift` to nearest, ties toward +infinity ("round half up"), exactly as
/// `floor((x + 2^(shift-1)) / 2^shift)`. shift in [0, 63]; `x + 2^(shift-1)` must not
/// overflow int64 (true whenever |x| < 2^62).
[[nodiscard]] constexpr std::int64_t round_shift(std::int64_t x, int shift) noexcept {
  assert(shift >= 0 && shift <= 63);
  if (shift == 0) {
    return x;
  }
  const std::int64_t bias = std::int64_t{1} << (shift - 1);
  return (x + bias) >> shift;  // arithmetic shift (C++20)
}

/// Clamps `x` to the signed range of a `bits`-wide integer, bits in [2, 63].
[[nodiscard]] constexpr std::int64_t saturate(std::int64_t x, int bits) noexcept {
  assert(bits >= 2 && bits <= 63);
  const std::int64_t hi = (std::int64_t{1} << (bits - 1)) - 1;
  const std::int64_t lo = -hi - 1;
  return x < lo ? lo : (x > hi ? hi : x);
}

/// A requantisation step: real multiplier M ~= mult / 2^shift, with an optional integer
/// bias added to the input first (a layer's bias in accumulator LSB).
/// mult in [0, 2^31 - 1], shift in [0, 63], bias in [-2^25, 2^25 - 1] (kRequantBiasBits).
struct Requant {
  std::int32_t mult = 0;
  std::int32_t shift = 0;
  std::int32_t bias = 0;  ///< only the matmul read-out honours it; every other user has 0
};

/// Width of `Requant::bias`: a parameter entry holds it in bits [63:38] (docs/isa.md).
inline constexpr int kRequantBiasBits = 26;

/// Requantises an int32 accumulator: `saturate(round_shift((x + bias) * mult, shift), out_bits)`.
/// The sum and the product are exact in int64 (|x + bias| < 2^31 + 2^25, mult < 2^31), so
/// there is exactly ONE rounding step, round half up, followed by saturation to `out_bits`
/// (2..32). RTL twin: rtl/common/psm_requant.sv.
[[nodiscard]] constexpr std::int32_t requantize(std::int32_t x, Requant rq,
                                                int out_bits) noexcept {
  assert(rq.mult >= 0 && rq.shift >= 0 && rq.shift <= 63);
  assert(rq.bias >= -(1 << (kRequantBiasBits - 1)) && rq.bias < (1 << (kRequantBiasBits - 1)));
  const std::int64_t prod = (std::int64_t{x} + rq.bias) * rq.mult;
  return static_cast<std::int32_t>(saturate(round_shift(prod, rq.shift), out_bits));
}

/// Counts the results clamped by their final requantise or saturate step while it is alive:
/// the golden side of the accelerator's `saturated` counter (docs/isa.md, "Performance
/// counters"). The kernels report each result they clamp through saturate_result() and
/// requantize_result(); intermediate steps (e.g. the int32 Q.10 input of SiLU) use
/// saturate() and requantize() and are not counted. One tally per thread is active: a tally
/// made while another is alive counts alone and hands back to it when it ends.
class SaturationTally {
 public:
  SaturationTally() noexcept : outer_(active_) { active_ = &count_; }
  ~SaturationTally() { active_ = outer_; }
  SaturationTally(const SaturationTally&) = delete;
  SaturationTally& operator=(const SaturationTally&) = delete;

  /// Results clamped since this tally was made.
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  /// Adds one clamped result to the active tally, if there is one.
  static void note() noexcept {
    if (active_ != nullptr) {
      ++*active_;
    }
  }

 private:
  static inline thread_local std::uint64_t* active_ = nullptr;
  std::uint64_t count_ = 0;
  std::uint64_t* outer_;
};

/// saturate() for a kernel's result: a clamp is counted by the active SaturationTally.
[[nodiscard]] inline std::int64_t saturate_result(std::int64_t x, int bits) noexcept {
  const std::int64_t y = saturate(x, bits);
  if (y != x) [[unlikely]] {
    SaturationTally::note();
  }
  return y;
}

/// requantize() for a kernel's result: a clamp is counted by the active SaturationTally.
[[nodiscard]] inline std::int32_t requantize_result(std::int32_t x, Requant rq,
                                                    int out_bits) noexcept {
  const std::int64_t prod = (std::int64_t{x} + rq.bias) * rq.mult;
  return static_cast<std::int32_t>(saturate_result(round_shift(prod, rq.shift), out_bits));
}

/// Converts a positive real multiplier to a `Requant` with a 31-bit mantissa
/// (mult in [2^30, 2^31)). Multipliers too small to represent become {0, 0} (output 0).
/// Only used at quantisation time (floats are allowed there).
[[nodiscard]] Requant make_requant(double multiplier);

/// The real value a `Requant` represents (for reports and tests).
[[nodiscard]] double requant_value(Requant rq) noexcept;

/// Integer square root: floor(sqrt(x)) for x >= 0, by Newton iteration on integers
/// (I-BERT, Kim et al. 2021, Alg. 4), exact for every uint64 input.
/// RTL twin: the digit-recurrence square root in rtl/common/psm_isqrt.sv (same floor).
[[nodiscard]] std::uint64_t isqrt_u64(std::uint64_t x) noexcept;

/// Reciprocal square root as a requantisation step: returns `Requant r` such that
/// `r.mult / 2^r.shift ~= 1 / sqrt(x)`, for x in [1, 2^62).
/// Method: normalise x by an even left shift 2k into [2^60, 2^62), s = isqrt(x << 2k) in
/// [2^30, 2^31), mult = floor(2^59 / s) in [2^28, 2^29] (30 unsigned bits),
/// shift = 59 - k + extra_shift. Precondition: shift <= 63, i.e. x < 2^(70 - 2*extra_shift)
/// when x has k >= extra_shift - 4 (the quantiser guarantees it: dim <= 4096, eps < 2^40).
/// `extra_shift` lets the caller fold a power-of-two scale into the same step.
/// Relative error <= 2^-28 from the two floors. RTL twin: rtl/common/psm_rsqrt.sv.
/// Callers check x < 2^rsqrt_limit_bits(extra_shift) first.
[[nodiscard]] Requant rsqrt_requant(std::uint64_t x, int extra_shift) noexcept;

/// Bits of the largest `x` that rsqrt_requant(x, extra_shift) takes: x < 2^62 and shift <= 63,
/// so x < 2^min(62, 70 - 2 * extra_shift) (44 bits for the norms' gain_frac_bits of 13).
[[nodiscard]] constexpr int rsqrt_limit_bits(int extra_shift) noexcept {
  return 70 - 2 * extra_shift < 62 ? 70 - 2 * extra_shift : 62;
}

// ---------------------------------------------------------------------------------------------
// Integer exponential (I-BERT Alg. 2, "i-exp"), with a FIXED input format.
// Inputs are non-positive reals in Q.10 (one LSB = 2^-10). exp(x) is computed as
// exp(p) * 2^-z with x = p - z*ln2, p in (-ln2, 0], and exp(p) ~= a*(p + b)^2 + c with
// a = 0.3585, b = 1.353, c = 0.344 (I-BERT Eq. 10). The output scale is a * 2^-20.
// ---------------------------------------------------------------------------------------------

inline constexpr int kExpInFracBits = 10;          ///< input LSB = 2^-10
inline constexpr std::int32_t kExpLn2 = 709;       ///< floor(ln2 * 2^10)
inline constexpr std::int32_t kExpB = 1385;        ///< floor(1.353 * 2^10)
inline constexpr std::int32_t kExpC = 1006164;     ///< floor(0.344 / (0.3585 * 2^-20))
/// exp(0) in output units: kExpB^2 + kExpC (one LSB = 0.3585 * 2^-20, so this is ~0.99985).
inline constexpr std::int32_t kExpOne = kExpB * kExpB + kExpC;
inline constexpr int kExpMaxShift = 31;            ///< beyond this the result is 0

/// exp(x) for x <= 0 given in Q.10 (`x_q10 <= 0`); returns an unsigned value in units of
/// 0.3585 * 2^-20, in [0, kExpOne] (22 bits). Every input at or below -15230 (about -14.9)
/// gives 0: the shift empties the 22-bit polynomial; z > 31 only guards the shift width.
/// Max error vs float exp: docs/numerics.md (measured by tests/kernels/fixed_point_test.cpp).
/// RTL twin: rtl/common/psm_iexp.sv.
[[nodiscard]] constexpr std::uint32_t iexp_q10(std::int32_t x_q10) noexcept {
  assert(x_q10 <= 0);
  // z = floor(-x / ln2) as an integer quotient; p = x + z*ln2 in (-ln2, 0].
  const std::int64_t neg = -std::int64_t{x_q10};
  const std::int64_t z = neg / kExpLn2;
  if (z > kExpMaxShift) {
    return 0;
  }
  const std::int64_t p = std::int64_t{x_q10} + z * kExpLn2;
  const std::int64_t t = p + kExpB;  // in (kExpB - kExpLn2, kExpB] = [677, 1385]
  const std::int64_t poly = t * t + kExpC;
  return static_cast<std::uint32_t>(poly >> z);
}

// ---------------------------------------------------------------------------------------------
// Rescaling a running sum of exponentials (online Softmax, Milakov & Gimelshein 2018, Alg. 3).
// When the running maximum rises from m_old to m_new, the sum so far is multiplied by
// exp(m_old - m_new). The factor is taken from the same i-exp: e = iexp_q10(d), then turned
// into a Q0.26 fraction whose 1.0 is exactly kExpOne, so that d = 0 leaves a sum unchanged.
// ---------------------------------------------------------------------------------------------

inline constexpr int kExpRescaleBits = 26;                  ///< the factor is Q0.26
inline constexpr int kExpRescaleMultShift = 22;             ///< shift of the e -> factor step
inline constexpr std::uint64_t kExpRescaleMult = 96250867;  ///< round(2^48 / kExpOne), 27 bits
/// Running sums handed to `exp_rescale` are below 2^kExpSumBits (rows of up to 65535 elements:
/// 65535 * kExpOne < 2^37.5), so the product sum * factor stays below 2^64.
inline constexpr int kExpSumBits = 38;

/// The factor exp(d) in Q0.26 from e = iexp_q10(d): `(e * kExpRescaleMult + 2^21) >> 22`
/// (round half up; e * mult < 2^49). It is exactly 2^26 for e = kExpOne (d = 0), below 2^26
/// for every smaller e, and 0 for e = 0. RTL twin: `exp_rescale_q26` in
/// rtl/common/psm_iexp_pkg.sv.
[[nodiscard]] constexpr std::uint32_t exp_rescale_q26(std::uint32_t e) noexcept {
  assert(e <= std::uint32_t(kExpOne));
  const std::uint64_t prod = std::uint64_t{e} * kExpRescaleMult;
  return static_cast<std::uint32_t>((prod + (std::uint64_t{1} << (kExpRescaleMultShift - 1))) >>
                                    kExpRescaleMultShift);
}

/// A running sum of exponentials times exp(d), given e = iexp_q10(d):
/// `(s * exp_rescale_q26(e) + 2^25) >> 26`, one rounding (half up). s < 2^38, so the product
/// is below 2^64 and the result is at most s. RTL twin: `exp_rescale` in
/// rtl/common/psm_iexp_pkg.sv.
[[nodiscard]] constexpr std::uint64_t exp_rescale(std::uint64_t s, std::uint32_t e) noexcept {
  assert(s < (std::uint64_t{1} << kExpSumBits));
  const std::uint64_t prod = s * exp_rescale_q26(e);
  return (prod + (std::uint64_t{1} << (kExpRescaleBits - 1))) >> kExpRescaleBits;
}

static_assert(exp_rescale_q26(std::uint32_t(kExpOne)) == (1u << kExpRescaleBits),
              "exp(0) must rescale by exactly 1.0");
static_assert(exp_rescale_q26(std::uint32_t(kExpOne) - 1) < (1u << kExpRescaleBits));

/// Softmax output: a probability of 1.0 is 32767 LSB (int16 Q0.15, scale 1/32767). An int8
/// probability (1/127) rounds every weight below 1/254 to zero, which loses up to half of the
/// mass of a long, flat attention row.
inline constexpr std::int32_t kProbOne = 32767;
/// Fraction bits of the softmax reciprocal: recip = floor(kProbOne * 2^32 / sum).
inline constexpr int kSoftmaxRecipBits = 32;

/// Sigmoid fraction bits: sigmoid values are Q0.15 (1.0 = 2^15).
inline constexpr int kSigmoidFracBits = 15;

// ---------------------------------------------------------------------------------------------
// Integer GELU (I-BERT, Kim et al. 2021, Alg. 2 "i-GELU"). GELU(x) = x * Phi(x) with
// Phi(x) = (1 + erf(x / sqrt 2)) / 2, and erf(u) ~= sgn(u) (1 + a (min(|u|, -b) + b)^2) with
// a = -0.2888, b = -1.769. The input is Q.10, like i-exp's.
// ---------------------------------------------------------------------------------------------

inline constexpr std::int64_t kGeluInvSqrt2 = 46341;  ///< round(2^16 / sqrt 2)
inline constexpr int kGeluInvSqrt2Shift = 16;         ///< u = round_shift(|x| * 46341, 16)
inline constexpr std::int64_t kGeluClip = 1811;       ///< floor(1.769 * 2^10) = -b in Q.10
inline constexpr std::int64_t kGeluA = 18927;         ///< round(0.2888 * 2^16) = -a in Q0.16
inline constexpr int kGeluAShift = 21;                ///< (Q.20 square * Q0.16) >> 21 -> Q0.15
/// Phi fraction bits: Phi is Q0.16 (1.0 = 2^16), erf is Q0.15 (1.0 = 2^15).
inline constexpr int kGeluPhiFracBits = 16;

/// Queries and keys are 12-bit signed values (range +-2047) held in int16: int8 loses too
/// much in q . k for small heads (docs/numerics.md), 12 bits is lossless on stories260K.
inline constexpr int kQkBits = 12;

/// RoPE sin/cos tables are Q1.14 (1.0 = 2^14).
inline constexpr int kRopeFracBits = 14;

}  // namespace passim
