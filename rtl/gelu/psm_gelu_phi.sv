// SPDX-License-Identifier: Apache-2.0
// Phi(t) = (1 + erf(t / sqrt 2)) / 2 of I-BERT's i-GELU in Q0.16, for t in Q.10; combinational:
// psm_gelu_phi_pkg::gelu_phi_q16() as a module (psm_gelu calls the function directly).
// Golden model: passim::kernels::gelu_phi_q16() in runtime/src/kernels/gelu.cpp.
// Latency: 0 cycles (no clock); the caller registers the result.
module psm_gelu_phi (
  input  logic signed [31:0] t_i,   // Q.10, any int32
  output logic        [16:0] phi_o  // Q0.16 (1.0 = 2^16), in [0, 2^16]
);
  assign phi_o = psm_gelu_phi_pkg::gelu_phi_q16(t_i);
endmodule : psm_gelu_phi
