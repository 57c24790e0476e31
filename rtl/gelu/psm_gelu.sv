// SPDX-License-Identifier: Apache-2.0
// GELU on int8 rows in the vector scratchpad (I-BERT's i-GELU), one word (Lanes elements) at a
// time.
// Golden model: passim::kernels::gelu_i8() and gelu_phi_q16() in runtime/src/kernels/gelu.cpp.
//
// Per element x (the low 8 bits of a lane, int8):
//   t   = requantize(x, to_q10, 32)                      Q.10             (psm_requant)
//   phi = gelu_phi_q16(t)                                Phi(t), Q0.16    (psm_gelu_phi_pkg)
//   out = requantize(x * phi, out_rq, 8)                 int8, written sign-extended
// The rows, the two requantisations (one requantiser per lane, used twice per word) and the
// scratchpad port are psm_gated_act's; each lane adds the gate, gelu_phi_q16() evaluated into a
// register only when t arrives (an idle unit computes nothing). The two Requant steps are inputs.
//
// Cycles per word (one word in flight at a time):
//   read, load (to_q10 round), round, phi, scale (out_rq round), round, write = 7
// done_o pulses in the cycle after the last write, with busy_o already low.
module psm_gelu #(
  parameter int unsigned Lanes     = 2,   // elements per scratchpad word
  parameter int unsigned AddrWidth = 16,  // scratchpad word address
  parameter int unsigned LenWidth  = 16   // row length and row count
) (
  input  logic                 clk_i,
  input  logic                 rst_i,           // synchronous, active high
  // Command: valid with the one-cycle start_i pulse; ignored while busy_o
  input  logic                 start_i,
  input  logic [AddrWidth-1:0] src_addr_i,      // int8 input rows
  input  logic [AddrWidth-1:0] dst_addr_i,      // int8 output rows (may equal src_addr_i)
  input  logic [LenWidth-1:0]  len_i,           // elements per row, >= 1
  input  logic [LenWidth-1:0]  rows_i,          // rows, >= 1
  input  logic [30:0]          to_q10_mult_i,   // x -> Q.10 step: multiplier
  input  logic [5:0]           to_q10_shift_i,  //                 shift, 0..63
  input  logic [30:0]          out_rq_mult_i,   // x * phi -> int8 step: multiplier
  input  logic [5:0]           out_rq_shift_i,  //                       shift, 0..63
  output logic                 busy_o,
  output logic                 done_o,          // one-cycle pulse after the last write
  output logic [1:0]           pass_o,          // always 0: one pass per row
  // Vector scratchpad port (docs/accelerator.md): read data arrives one cycle after the request
  output logic                 mem_req_o,
  output logic                 mem_we_o,
  output logic [AddrWidth-1:0] mem_addr_o,
  output logic [Lanes*32-1:0]  mem_wdata_o,     // int8, sign-extended
  output logic [Lanes-1:0]     mem_wmask_o,
  input  logic [Lanes*32-1:0]  mem_rdata_i      // int8 x in the low 8 bits of each lane
);
  localparam int unsigned GeluPhiFracBits = 16;  // kGeluPhiFracBits (fixed_point.hpp): Q0.16

  logic                gate_start;  // t is valid: every lane evaluates Phi(t)
  logic [Lanes*32-1:0] t;           // requantize(x, to_q10, 32) per lane, Q.10
  logic [Lanes*17-1:0] phi;         // Phi(t) per lane, Q0.16, in [0, 2^16]

  psm_gated_act #(
    .Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth), .XBits(8), .OutBits(8)
  ) u_act (
    .clk_i, .rst_i, .start_i, .src_addr_i, .dst_addr_i, .len_i, .rows_i, .to_q10_mult_i,
    .to_q10_shift_i, .out_mult_i(out_rq_mult_i), .out_shift_i(out_rq_shift_i), .busy_o, .done_o,
    .gate_start_o(gate_start), .t_o(t), .gate_valid_i(1'b1), .g_i(phi), .mem_req_o, .mem_we_o,
    .mem_addr_o, .mem_wdata_o, .mem_wmask_o, .mem_rdata_i
  );

  assign pass_o = 2'd0;

  // The gate of each lane: Phi(t) into a register, valid from the next cycle on.
  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic [GeluPhiFracBits:0] phi_q;

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (gate_start) phi_q <= psm_gelu_phi_pkg::gelu_phi_q16(t[l*32 +: 32]);
    end

    assign phi[l*17 +: 17] = phi_q;
  end : g_lane
endmodule : psm_gelu
