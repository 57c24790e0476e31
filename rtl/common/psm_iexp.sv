// SPDX-License-Identifier: Apache-2.0
// Integer exponential of a non-positive Q.10 value (I-BERT Alg. 2, "i-exp"), combinational.
// Golden model: passim::iexp_q10() in runtime/include/passim/fixed_point.hpp.
//
// exp(x) = exp(p) * 2^-z with x = p - z*ln2, p in (-ln2, 0], and exp(p) ~= (p + b)^2 + c in
// units of 0.3585 * 2^-20. Latency: 0 cycles (no clock); the caller registers the result.
module psm_iexp (
  input  logic signed [31:0] x_q10_i,  // Q.10 signed, must be <= 0
  output logic        [21:0] exp_o     // unsigned, one LSB = 0.3585 * 2^-20, <= kExpOne
);
  // Constants of passim::iexp_q10 (fixed_point.hpp).
  localparam logic [32:0] ExpLn2      = 33'd709;      // kExpLn2 = floor(ln2 * 2^10)
  localparam logic [11:0] ExpB        = 12'd1385;     // kExpB
  localparam logic [21:0] ExpC        = 22'd1006164;  // kExpC
  // kExpMaxShift = 31: for z > 31 the result is 0, i.e. for -x >= 32 * ln2.
  localparam logic [32:0] ExpUnderflow = 33'd22688;   // 32 * kExpLn2

  // neg = -x in 33 bits, so x = INT32_MIN gives +2^31 without overflow.
  logic [32:0] neg;
  assign neg = 33'd0 - {x_q10_i[31], x_q10_i};

  // z = floor(neg / ln2). The golden model returns 0 for z > 31, so only a 5-bit quotient is
  // ever needed: find it by restoring division with the constant divisor, one bit per stage
  // (compare with ln2 * 16, then ln2 * 8, ...). The stages are unrolled, not clocked.
  logic        too_small;  // z > kExpMaxShift: exp underflows to 0
  logic [4:0]  z;
  logic [32:0] p_neg;      // -p = neg - z * ln2, in [0, ln2) when not too_small
  assign too_small = (neg >= ExpUnderflow);

  always_comb begin
    p_neg = neg;
    z     = 5'd0;
    for (int b = 4; b >= 0; b--) begin
      if (p_neg >= (ExpLn2 << b)) begin
        p_neg = p_neg - (ExpLn2 << b);
        z[b]  = 1'b1;
      end
    end
  end

  // t = p + b = b - (-p), in [b - ln2 + 1, b] = [677, 1385]; poly = t^2 + c < 2^22.
  logic [11:0] t;
  logic [23:0] t_sq;
  logic [23:0] poly;
  assign t    = ExpB - p_neg[11:0];
  assign t_sq = t * t;
  assign poly = t_sq + 24'(ExpC);

  logic [23:0] poly_shifted;
  assign poly_shifted = poly >> z;
  assign exp_o        = too_small ? 22'd0 : poly_shifted[21:0];

  // poly <= kExpOne < 2^22, so the top bits are always zero; p_neg < ln2 < 2^10.
  logic unused_bits;
  assign unused_bits = ^{poly_shifted[23:22], p_neg[32:12]};
  // No assertion on x_q10_i <= 0 here: callers feed don't-care lanes through this block, and
  // a positive input simply gives 0 (neg wraps above ExpUnderflow). Callers assert on the
  // lanes they use.
endmodule : psm_iexp
