// SPDX-License-Identifier: Apache-2.0
// One processing element of the weight-stationary systolic array.
// Golden model: passim::kernels::matmul_i8() in runtime/src/kernels/matmul.cpp.
module psm_pe #(
  parameter int unsigned DataWidth = 8,
  parameter int unsigned AccWidth  = 32
) (
  input  logic                        clk_i,
  input  logic                        rst_i,        // synchronous, active high
  // Weight load: latched once per tile, then held
  input  logic                        wgt_load_i,
  input  logic signed [DataWidth-1:0] wgt_i,
  // Activations move left to right
  input  logic                        act_valid_i,
  input  logic signed [DataWidth-1:0] act_i,
  output logic                        act_valid_o,
  output logic signed [DataWidth-1:0] act_o,
  // Partial sums move top to bottom; int32, wraps on overflow like the golden model
  input  logic signed [AccWidth-1:0]  psum_i,
  output logic signed [AccWidth-1:0]  psum_o
);
  logic signed [DataWidth-1:0]   wgt_q, act_q;
  logic signed [2*DataWidth-1:0] prod;
  logic signed [AccWidth-1:0]    psum_d, psum_q;
  logic                          act_valid_q;

  assign prod   = act_i * wgt_q;  // full precision, then sign-extend below
  assign psum_d = act_valid_i ? psum_i + AccWidth'(prod) : psum_i;  // wraps (int32)

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) act_valid_q <= 1'b0;
    else       act_valid_q <= act_valid_i;
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset, maps to DSP
    if (wgt_load_i) wgt_q <= wgt_i;
    act_q  <= act_i;
    psum_q <= psum_d;
  end

  assign act_valid_o = act_valid_q;
  assign act_o       = act_q;
  assign psum_o      = psum_q;
endmodule : psm_pe
