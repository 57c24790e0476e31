// SPDX-License-Identifier: Apache-2.0
// One lane of psm_gated_act's out = x * g(x): x kept from the read data, and one requantiser
// used twice per word, for t = requantize(x, to_q10, 32) and for out = requantize(x * g, out_rq,
// OutBits). The unit adds the lane's gate g of t (psm_silu: sigmoid, psm_gelu: Phi).
// Golden model: the shared steps of passim::kernels::silu_i16() (runtime/src/kernels/silu.cpp)
// and passim::kernels::gelu_i8() (runtime/src/kernels/gelu.cpp).
//
// load_i: x_i is sampled, and the requantiser takes x (y_o = t two cycles later); scale_i: the
// requantiser takes x * g_i (y_o = out two cycles later); rq_*_i: the step of that cycle.
// |x * g| <= 2^(XBits - 1) * 2^16 must fit 32 bits.
module psm_gated_lane #(
  parameter int unsigned XBits = 16  // element bits: 16 (SiLU), 8 (GELU)
) (
  input  logic                    clk_i,
  input  logic                    load_i,
  input  logic                    scale_i,
  input  logic signed [XBits-1:0] x_i,         // the lane's read data
  input  logic        [16:0]      g_i,         // the gate of t, unsigned, <= 2^16
  input  logic        [30:0]      rq_mult_i,
  input  logic        [5:0]       rq_shift_i,
  input  logic        [5:0]       rq_bits_i,
  output logic signed [31:0]      y_o,         // t, then out (sign-extended)
  output logic                    sat_o        // with out: it was clamped to rq_bits_i
);
  logic signed [XBits-1:0] x_q;   // kept for x * g
  logic signed [31:0]      rq_x;  // x, or x * g (exact)

  always_comb begin
    rq_x = '0;
    if (load_i)       rq_x = 32'(x_i);
    else if (scale_i) rq_x = 32'(x_q) * $signed({15'd0, g_i});
  end

  psm_requant u_requant (.clk_i, .en_i(load_i || scale_i), .x_i(rq_x), .bias_i(26'sd0),
                         .mult_i(rq_mult_i), .shift_i(rq_shift_i), .out_bits_i(rq_bits_i),
                         .y_o, .sat_o);

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (load_i) x_q <= x_i;
  end
endmodule : psm_gated_lane
