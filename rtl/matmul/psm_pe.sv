// SPDX-License-Identifier: Apache-2.0
// One processing element of the weight-stationary systolic array, with a double-buffered weight:
// the next tile's weight loads into the shadow register while the current tile streams, and the
// first activation of the next tile (act_swap_i) switches to it.
// Golden model: passim::kernels::matmul_i8() in runtime/src/kernels/matmul.cpp.
module psm_pe #(
  parameter int unsigned DataWidth = 8,
  parameter int unsigned AccWidth  = 32
) (
  input  logic                        clk_i,
  input  logic                        rst_i,        // synchronous, active high
  input  logic                        en_i,         // clock enable of the activation/psum path
  // Weight load into the shadow register, at any time; the active weight is not disturbed
  input  logic                        wgt_load_i,
  input  logic signed [DataWidth-1:0] wgt_i,
  // Activations move left to right. act_swap_i marks the first activation of a tile: it is
  // multiplied by the shadow weight, which becomes the active weight from then on.
  input  logic                        act_valid_i,
  input  logic                        act_swap_i,
  input  logic signed [DataWidth-1:0] act_i,
  output logic                        act_valid_o,
  output logic                        act_swap_o,
  output logic signed [DataWidth-1:0] act_o,
  // Partial sums move top to bottom; int32, wraps on overflow like the golden model
  input  logic signed [AccWidth-1:0]  psum_i,
  output logic signed [AccWidth-1:0]  psum_o
);
  logic signed [DataWidth-1:0]   wgt_q, wgt_shadow_q, wgt, act_q;
  logic signed [2*DataWidth-1:0] prod;
  logic signed [AccWidth-1:0]    psum_q;
  logic                          act_valid_q, act_swap_q, swap;

  // A shadow load in the same cycle as a swap is fine: the swap takes the old shadow value.
  // The product is formed only for a valid activation (0 otherwise).
  assign swap = act_valid_i && act_swap_i;
  assign wgt  = swap ? wgt_shadow_q : wgt_q;
  always_comb begin
    prod = '0;
    if (act_valid_i) prod = act_i * wgt;  // full precision, then sign-extend below
  end

  // en_i low (the array holds no valid activation): the path holds its state.
  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      act_valid_q <= 1'b0;
      act_swap_q  <= 1'b0;
    end else if (en_i) begin
      act_valid_q <= act_valid_i;
      act_swap_q  <= swap;
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset, maps to DSP
    if (wgt_load_i) wgt_shadow_q <= wgt_i;
    if (en_i) begin
      if (swap) wgt_q <= wgt_shadow_q;
      act_q  <= act_i;
      psum_q <= psum_i + AccWidth'(prod);  // wraps (int32); prod is 0 for an invalid activation
    end
  end

  assign act_valid_o = act_valid_q;
  assign act_swap_o  = act_swap_q;
  assign act_o       = act_q;
  assign psum_o      = psum_q;
endmodule : psm_pe
