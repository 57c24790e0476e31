// SPDX-License-Identifier: Apache-2.0
// Integer exponential of a non-positive Q.10 value (I-BERT Alg. 2, "i-exp"), combinational:
// psm_iexp_pkg::iexp_q10() as a module (the units call the function directly).
// Golden model: passim::iexp_q10() in runtime/include/passim/fixed_point.hpp.
// Latency: 0 cycles (no clock); the caller registers the result.
module psm_iexp (
  input  logic signed [31:0] x_q10_i,  // Q.10 signed, must be <= 0
  output logic        [21:0] exp_o     // unsigned, one LSB = 0.3585 * 2^-20, <= kExpOne
);
  // No assertion on x_q10_i <= 0 here: a positive input simply gives 0. Callers assert on the
  // lanes they use.
  assign exp_o = psm_iexp_pkg::iexp_q10(x_q10_i);
endmodule : psm_iexp
