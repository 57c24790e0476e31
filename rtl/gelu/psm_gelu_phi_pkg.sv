// SPDX-License-Identifier: Apache-2.0
// Phi(t) = (1 + erf(t / sqrt 2)) / 2 of I-BERT's i-GELU in Q0.16, for t in Q.10, as a function,
// so that psm_gelu evaluates it only in the state that uses it.
// Golden model: passim::kernels::gelu_phi_q16() in runtime/src/kernels/gelu.cpp.
// rtl/gelu/psm_gelu_phi.sv wraps it as a combinational module (its unit test).
//
//   u   = min(round_shift(|t| * kGeluInvSqrt2, 16), kGeluClip)   |t| / sqrt 2 in Q.10
//   E   = 2^15 - round_shift((kGeluClip - u)^2 * kGeluA, 21)      erf(|t| / sqrt 2), Q0.15
//   phi = (t >= 0) ? 2^15 + E : 2^15 - E                          in [0, 2^16]
// Every intermediate is non-negative, so round_shift(v, s) is (v + 2^(s-1)) >> s.
// Widths: |t| * 46341 < 2^47; (1811 - u)^2 < 2^22; (1811 - u)^2 * 18927 < 2^37.
package psm_gelu_phi_pkg;
  // The i-GELU constants of runtime/include/passim/fixed_point.hpp (not in psm_pkg).
  localparam logic [15:0] GeluInvSqrt2      = 16'd46341;  // kGeluInvSqrt2 = round(2^16 / sqrt 2)
  localparam int unsigned GeluInvSqrt2Shift = 16;         // kGeluInvSqrt2Shift
  localparam logic [10:0] GeluClip          = 11'd1811;   // kGeluClip = floor(1.769 * 2^10)
  localparam logic [14:0] GeluA             = 15'd18927;  // kGeluA = round(0.2888 * 2^16)
  localparam int unsigned GeluAShift        = 21;         // kGeluAShift
  // kGeluPhiFracBits = 16: phi is Q0.16, erf Q0.15, so 1/2 is 2^15.
  localparam logic [16:0] PhiHalf           = 17'd32768;

  // t: Q.10, any int32. Returns Phi(t) in Q0.16 (1.0 = 2^16), in [0, 2^16].
  function automatic logic [16:0] gelu_phi_q16(input logic signed [31:0] t);
    logic [31:0] mag;     // |t| <= 2^31 (modulo 2^32: |-2^31| = 2^31)
    logic [47:0] scaled;  // |t| * 46341 + 2^15 < 2^47 + 2^15
    logic [31:0] u_full;  // round_shift(|t| * 46341, 16) < 2^32
    logic [10:0] w_mag;   // |u - 1811| = 1811 - min(u_full, 1811), in [0, 1811]
    logic [21:0] w_sq;    // w^2 <= 1811^2 < 2^22
    logic [36:0] drop;    // w^2 * 18927 + 2^20 < 2^37
    logic [15:0] erf;     // 2^15 - round_shift(w^2 * 18927, 21), in [3167, 2^15]
    mag          = t[31] ? 32'd0 - $unsigned(t) : $unsigned(t);
    scaled       = 48'(mag) * 48'(GeluInvSqrt2) + (48'd1 << (GeluInvSqrt2Shift - 1));
    u_full       = 32'(scaled >> GeluInvSqrt2Shift);
    w_mag        = (u_full >= 32'(GeluClip)) ? 11'd0 : GeluClip - u_full[10:0];
    w_sq         = 22'(w_mag) * 22'(w_mag);
    drop         = 37'(w_sq) * 37'(GeluA) + (37'd1 << (GeluAShift - 1));
    erf          = 16'd32768 - 16'(drop >> GeluAShift);
    gelu_phi_q16 = t[31] ? PhiHalf - 17'(erf) : PhiHalf + 17'(erf);
  endfunction
endpackage : psm_gelu_phi_pkg
