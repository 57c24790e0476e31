// SPDX-License-Identifier: Apache-2.0
// GELU on int8 rows in the vector scratchpad (I-BERT's i-GELU), one word (Lanes elements) at a
// time.
// Golden model: passim::kernels::gelu_i8() and gelu_phi_q16() in runtime/src/kernels/gelu.cpp.
//
// Per element x (the low 8 bits of a lane, int8):
//   t   = requantize(x, to_q10, 32)                      Q.10             (psm_requant)
//   phi = gelu_phi_q16(t)                                Phi(t), Q0.16    (psm_gelu_phi_pkg)
//   out = requantize(x * phi, out_rq, 8)                 int8, written sign-extended
// The rows, the sequence of the two requantisations and the scratchpad port are
// psm_gated_act's; each lane is a psm_gated_lane (x and its requantiser, used twice per word)
// and the gate, gelu_phi_q16() evaluated into a register only when t arrives (an idle unit
// computes nothing). The two Requant steps are inputs.
//
// Cycles per word (one word in flight at a time):
//   read, load (to_q10 round), round, phi, scale (out_rq round), round, write = 7
// done_o pulses in the cycle after the last write, with busy_o already low.
// Ports: the vector-unit groups `PSM_VEC_* of rtl/common/psm_vector_port.svh; scratchpad
// data: int8 x in (the low 8 bits of a lane), int8 out, each sign-extended to 32 bits.
`include "psm_vector_port.svh"
module psm_gelu #(
  `PSM_VEC_PARAMS
) (
  `PSM_VEC_START_PORTS,
  `PSM_VEC_ROW_PORTS,
  input  logic [30:0]          to_q10_mult_i,   // x -> Q.10 step: multiplier
  input  logic [5:0]           to_q10_shift_i,  //                 shift, 0..63
  input  logic [30:0]          out_rq_mult_i,   // x * phi -> int8 step: multiplier
  input  logic [5:0]           out_rq_shift_i,  //                       shift, 0..63
  `PSM_VEC_DONE_PORTS,
  output logic [1:0]           pass_o,          // always 0: one pass per row
  `PSM_VEC_MEM_PORTS
);
  localparam int unsigned GeluPhiFracBits = 16;  // kGeluPhiFracBits (fixed_point.hpp): Q0.16

  logic                load, scale, gate_start;  // gate_start: every lane evaluates Phi(t)
  logic [30:0]         rq_mult;
  logic [5:0]          rq_shift, rq_bits;
  logic [Lanes*32-1:0] lane_out;                 // requantised results, sign-extended
  logic [Lanes-1:0]    lane_sat;                 // ... clamped to 8 bits

  psm_gated_act #(
    .Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth), .OutBits(8)
  ) u_act (
    .clk_i, .rst_i, .start_i, .src_addr_i, .dst_addr_i, .len_i, .rows_i, .to_q10_mult_i,
    .to_q10_shift_i, .out_mult_i(out_rq_mult_i), .out_shift_i(out_rq_shift_i), .busy_o, .done_o,
    .load_o(load), .gate_start_o(gate_start), .gate_valid_i(1'b1), .scale_o(scale),
    .rq_mult_o(rq_mult), .rq_shift_o(rq_shift), .rq_bits_o(rq_bits), .lane_out_i(lane_out),
    .lane_sat_i(lane_sat), .mem_req_o, .mem_we_o, .mem_addr_o, .mem_wdata_o, .mem_wmask_o,
    .mem_wsat_o
  );

  assign pass_o = 2'd0;

  // Each lane: x and its requantiser, and the gate Phi(t) into a register, valid from the next
  // cycle on.
  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [31:0]       t;      // requantize(x, to_q10, 32), Q.10; then the result
    logic [GeluPhiFracBits:0] phi_q;  // Phi(t), Q0.16, in [0, 2^16]

    psm_gated_lane #(.XBits(8)) u_lane (
      .clk_i, .load_i(load), .scale_i(scale), .x_i(mem_rdata_i[l*32 +: 8]), .g_i(phi_q),
      .rq_mult_i(rq_mult), .rq_shift_i(rq_shift), .rq_bits_i(rq_bits), .y_o(t),
      .sat_o(lane_sat[l])
    );
    assign lane_out[l*32 +: 32] = t;

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (gate_start) phi_q <= psm_gelu_phi_pkg::gelu_phi_q16(t);
    end

    // The upper bits of a lane are the sign extension of x.
    logic unused_bits;
    assign unused_bits = ^mem_rdata_i[l*32+8 +: 24];
  end : g_lane
endmodule : psm_gelu
