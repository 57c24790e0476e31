// SPDX-License-Identifier: Apache-2.0
// Integer exponential of a non-positive Q.10 value (I-BERT Alg. 2, "i-exp") as a function, so
// that units can evaluate it only in the states that use it (psm_softmax, psm_silu), and the
// rescale of a running sum by such an exponential (psm_softmax, online mode).
// Golden model: passim::iexp_q10(), passim::exp_rescale_q26() and passim::exp_rescale() in
// runtime/include/passim/fixed_point.hpp.
// rtl/common/psm_iexp.sv wraps it as a combinational module (its unit test).
//
// exp(x) = exp(p) * 2^-z with x = p - z*ln2, p in (-ln2, 0], and exp(p) ~= (p + b)^2 + c in
// units of 0.3585 * 2^-20.
package psm_iexp_pkg;
  // Constants of passim::iexp_q10 (fixed_point.hpp).
  localparam logic [32:0] ExpLn2       = 33'd709;      // kExpLn2 = floor(ln2 * 2^10)
  localparam logic [11:0] ExpB         = 12'd1385;     // kExpB
  localparam logic [21:0] ExpC         = 22'd1006164;  // kExpC
  // kExpMaxShift = 31: for z > 31 the result is 0, i.e. for -x >= 32 * ln2.
  localparam logic [32:0] ExpUnderflow = 33'd22688;    // 32 * kExpLn2

  // x: Q.10 signed, must be <= 0 (a positive x gives 0: -x wraps above ExpUnderflow).
  // Returns an unsigned value, one LSB = 0.3585 * 2^-20, <= kExpOne (22 bits).
  function automatic logic [21:0] iexp_q10(input logic signed [31:0] x);
    logic [32:0] neg;    // -x in 33 bits, so x = INT32_MIN gives +2^31 without overflow
    logic [32:0] p_neg;  // -p = neg - z * ln2, in [0, ln2) when z <= 31
    logic [4:0]  z;
    logic [11:0] t;      // p + b = b - (-p), in [677, 1385]
    logic [23:0] poly;   // t^2 + c < 2^22
    neg = 33'd0 - {x[31], x};
    // z = floor(neg / ln2). The golden model returns 0 for z > 31, so a 5-bit quotient is
    // enough: restoring division by the constant, one bit per unrolled stage.
    p_neg = neg;
    z     = 5'd0;
    for (int b = 4; b >= 0; b--) begin
      if (p_neg >= (ExpLn2 << b)) begin
        p_neg = p_neg - (ExpLn2 << b);
        z[b]  = 1'b1;
      end
    end
    t    = ExpB - p_neg[11:0];
    poly = 24'(t) * 24'(t) + 24'(ExpC);
    if (neg >= ExpUnderflow) iexp_q10 = 22'd0;
    else                     iexp_q10 = 22'(poly >> z);
  endfunction

  // Rescaling a running sum of exponentials (online Softmax): passim::exp_rescale_q26() and
  // passim::exp_rescale() in fixed_point.hpp.
  localparam logic [26:0] ExpRescaleMult = 27'd96250867;  // kExpRescaleMult = round(2^48 / kExpOne)

  // e = iexp_q10(d) -> exp(d) as Q0.26: (e * ExpRescaleMult + 2^21) >> 22, exactly 2^26 for
  // e = kExpOne, below it for every smaller e.
  function automatic logic [26:0] exp_rescale_q26(input logic [21:0] e);
    logic [48:0] prod;  // e * ExpRescaleMult < 2^49
    prod            = 49'(e) * 49'(ExpRescaleMult);
    exp_rescale_q26 = 27'((prod + (49'd1 << 21)) >> 22);
  endfunction

  // s * exp(d) for a running sum s < 2^38: (s * exp_rescale_q26(e) + 2^25) >> 26, round half
  // up; the product is below 2^64 and the result at most s.
  function automatic logic [37:0] exp_rescale(input logic [37:0] s, input logic [21:0] e);
    logic [64:0] prod;  // s * factor, full width
    prod        = 65'(s) * 65'(exp_rescale_q26(e));
    exp_rescale = 38'((prod + (65'd1 << 25)) >> 26);
  endfunction
endpackage : psm_iexp_pkg
