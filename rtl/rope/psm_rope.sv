// SPDX-License-Identifier: Apache-2.0
// Rotary position embedding (RoPE) of 12-bit query/key heads in the vector scratchpad.
// Golden model: passim::kernels::rope_i16() in runtime/src/kernels/rope.cpp, as called
// by passim::CpuDevice::vector_op().
//
// Each row is one head of len (even) values; pair j = (v[2j], v[2j+1]) rotates by the Q1.14
// table entries c = cos[j], s = sin[j]:
//   v[2j]   <- saturate(round_shift(v[2j] c - v[2j+1] s, 14), 12)
//   v[2j+1] <- saturate(round_shift(v[2j] s + v[2j+1] c, 14), 12)
// with exact 33-bit sums and one rounding (half up). Every row uses the same tables: cos at
// src2_addr (len/2 entries), sin at src2_addr + ceil(len/2 / Lanes). Values, cos and sin are
// the low 16 bits of each lane; results are written sign-extended to 32 bits.
//
// The unit works in steps of 2 * Lanes elements: step k reads words 2k and 2k+1 of the row
// (Lanes pairs, whatever Lanes is, odd included) and word k of each table, which holds exactly
// the entries of those pairs. Every word is read once per row.
//
// Cycles per step: read v0, read v1, read cos, read sin, latch, write v0, write v1 = 7
// (5 when the row's last step has only one word): 3.5 cycles per word of the row.
// done_o pulses in the cycle after the last write, with busy_o already low.
// Ports: the vector-unit groups `PSM_VEC_* of rtl/common/psm_vector_port.svh; scratchpad
// data: 12-bit values and Q1.14 tables in, 12-bit values out, each sign-extended to 32 bits.
`include "psm_vector_port.svh"
module psm_rope #(
  `PSM_VEC_PARAMS
) (
  `PSM_VEC_START_PORTS,
  input  logic [AddrWidth-1:0] src_addr_i,   // heads, 12-bit values
  input  logic [AddrWidth-1:0] src2_addr_i,  // cos table (Q1.14), then the sin table
  input  logic [AddrWidth-1:0] dst_addr_i,   // output heads (may equal src_addr_i)
  input  logic [LenWidth-1:0]  len_i,        // head_size, even, >= 2
  input  logic [LenWidth-1:0]  rows_i,       // heads, >= 1
  `PSM_VEC_DONE_PORTS,
  output logic [1:0]           pass_o,       // always 0: one pass per row
  `PSM_VEC_MEM_PORTS
);
  localparam int unsigned FracBits = psm_pkg::ROPE_FRAC_BITS;  // 14
  localparam int unsigned OutBits  = psm_pkg::QK_BITS;         // 12

  typedef enum logic [2:0] {
    StIdle,     // wait for start_i
    StReadV0,   // request word 2k of the row
    StReadV1,   // request word 2k+1 (skipped when the row ends in word 2k); word 2k arrives
    StReadCos,  // request word k of the cos table
    StReadSin,  // request word k of the sin table; cos arrives
    StLatch,    // sin arrives: every operand of the step is in a register
    StWriteV0,  // write the rotated word 2k
    StWriteV1   // write the rotated word 2k+1 (skipped like StReadV1)
  } rope_state_e;

  rope_state_e state_d, state_q;

  always_ff @(posedge clk_i) state_q <= rst_i ? StIdle : state_d;  // control: reset
  rope_state_e read_state_q;  // the state of the previous cycle: names the read data arriving

  // Twin of saturate(round_shift(r, 14), 12) in fixed_point.hpp: add 2^13, arithmetic shift
  // (ties toward +infinity), clamp to [-2048, 2047]. |r| <= 2^31, so 34 bits hold every step.
  // TODO: move to rtl/common next to psm_requant (its x_i is 32 bits, r needs 33).
  // Returns {clamped, the element}.
  function automatic logic [OutBits:0] round_sat(input logic signed [32:0] r);
    logic signed [33:0] shifted;
    shifted = (34'(r) + (34'sd1 <<< (FracBits - 1))) >>> FracBits;
    if (shifted > 34'sd2047)       round_sat = {1'b1, 12'sd2047};
    else if (shifted < -34'sd2048) round_sat = {1'b1, -12'sd2048};
    else                           round_sat = {1'b0, shifted[OutBits-1:0]};
  endfunction

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and row walk                                                                     //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [AddrWidth-1:0] src_q, cos_q, dst_q;  // the command

  // Step by step (words 2k and 2k+1), row by row: the last write of a step moves the walk on
  // (the masks are evaluated only while the unit is busy).
  logic                 start, step_end;
  logic [AddrWidth-1:0] step, row_off, row_words;  // step k: table word k, row words 2k, 2k+1
  logic [2*Lanes-1:0]   step_mask;                  // word 2k's lanes, then word 2k+1's
  logic                 last_step, last_row;
  logic [2*Lanes-1:0]   rd_mask;                    // not needed: the read tracking
  logic                 row_end;

  psm_row_walk #(.Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth), .StepWords(2)) u_walk (
    .clk_i, .rst_i, .busy_i(busy_o), .start_i, .len_i, .rows_i, .start_o(start), .next_i(step_end),
    .rewind_i(1'b0), .row_next_i(1'b0), .row_rewind_i(1'b0), .read_i(1'b0), .step_o(step),
    .row_off_o(row_off), .row_words_o(row_words), .mask_o(step_mask), .last_step_o(last_step),
    .last_row_o(last_row), .row_end_o(row_end), .rd_mask_o(rd_mask)
  );

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start) {src_q, cos_q, dst_q} <= {src_addr_i, src2_addr_i, dst_addr_i};
  end

  logic [AddrWidth-1:0] word0, word1;  // words 2k and 2k+1 of the row
  assign word0 = {step[AddrWidth-2:0], 1'b0};
  assign word1 = {step[AddrWidth-2:0], 1'b1};

  logic has_v1;  // word 2k+1 belongs to the row
  assign has_v1 = step_mask[Lanes];

  // The sin table follows the cos table: ceil(len/2 / Lanes) = ceil(row_words / 2) words on.
  logic [AddrWidth-1:0] sin_off;
  assign sin_off = (row_words >> 1) + AddrWidth'(row_words[0]);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Operands and the rotation                                                                //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [Lanes*16-1:0]   rd16;    // the low 16 bits of each lane of mem_rdata_i
  logic [2*Lanes*16-1:0] v_q;     // elements 2kL .. 2kL + 2L - 1 of the row (words 2k, 2k+1)
  logic [Lanes*16-1:0]   cos_w_q; // cos[kL .. kL + L - 1], Q1.14
  logic [2*Lanes*32-1:0] rot_q;   // rotated elements, sign-extended to 32 bits
  logic [2*Lanes-1:0]    rot_sat_q;  // ... clamped to 12 bits, one bit per element

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    assign rd16[l*16 +: 16] = mem_rdata_i[l*32 +: 16];
    // The upper bits of each lane are the sign extension of a 16-bit value.
    logic unused_rdata;
    assign unused_rdata = ^mem_rdata_i[l*32+16 +: 16];
  end : g_lane

  // Pair p of the step uses elements 2p and 2p+1 of v and entry p of each table word.
  // en is always high where the result is latched (the products of r1 are zero otherwise).
  // The select keeps Yosys 0.23's iCE40 DSP packing (`synth_ice40 -dsp`) from folding the
  // 33-bit sum r1 into the post-adder of an SB_MAC16, which it gets wrong: the adder's output
  // is 32 bits and Yosys copies bit 31 into bit 32, so v0 s + v1 c = 2^31 (all four -32768)
  // came out as -2^31. |r0| <= 2^31 - 2^15 fits 32 bits, so a 32-bit post-adder would be exact
  // for it. The select works only while Yosys does not prove en = 1 under the register's
  // enable; the iCE40 netlist test (Ice40 RopeRtl, tests/sim/ice40.cmake) checks that it does not.
  // Returns the 2 Lanes elements sign-extended to 32 bits, and above them one clamped bit per
  // element.
  function automatic logic [2*Lanes*33-1:0] rotate(input logic                 en,
                                                   input logic [2*Lanes*16-1:0] v,
                                                   input logic [Lanes*16-1:0]   cos_w,
                                                   input logic [Lanes*16-1:0]   sin_w);
    logic signed [15:0] v0, v1, c, s;
    logic signed [31:0] v0s, v1c;  // exact: each product is at most 2^30 in magnitude
    logic signed [32:0] r0, r1;
    logic [OutBits:0]   y0, y1;
    for (int p = 0; p < Lanes; p++) begin
      v0  = v[(2*p)*16 +: 16];
      v1  = v[(2*p+1)*16 +: 16];
      c   = cos_w[p*16 +: 16];
      s   = sin_w[p*16 +: 16];
      v0s = en ? 32'(v0) * 32'(s) : 32'sd0;
      v1c = en ? 32'(v1) * 32'(c) : 32'sd0;
      r0  = 33'(32'(v0) * 32'(c)) - 33'(32'(v1) * 32'(s));
      r1  = 33'(v0s) + 33'(v1c);
      y0  = round_sat(r0);
      y1  = round_sat(r1);
      rotate[(2*p)*32 +: 32]          = 32'($signed(y0[OutBits-1:0]));
      rotate[(2*p+1)*32 +: 32]        = 32'($signed(y1[OutBits-1:0]));
      rotate[2*Lanes*32 + 2*p]        = y0[OutBits];
      rotate[2*Lanes*32 + 2*p + 1]    = y1[OutBits];
    end
  endfunction

  // The rotation is computed once per step, in StLatch, when the sin word arrives (the
  // multipliers only switch then).
  logic sin_arrives;
  assign sin_arrives = (read_state_q == StReadSin);

  always_ff @(posedge clk_i) begin  // datapath: no reset
    unique case (read_state_q)
      StReadV0:  v_q[0 +: Lanes*16]        <= rd16;
      StReadV1:  v_q[Lanes*16 +: Lanes*16] <= rd16;
      StReadCos: cos_w_q                   <= rd16;
      StReadSin: {rot_sat_q, rot_q}        <= rotate(sin_arrives, v_q, cos_w_q, rd16);
      default: ;  // no read data this cycle
    endcase
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // step_end: the last write of a step; the next step, the next row, or the end.
  logic done_d;
  assign step_end = (state_q == StWriteV1) || (state_q == StWriteV0 && !has_v1);
  assign done_d   = step_end && last_step && last_row;

  // Words 2k, 2k+1 (only 2k if the row ends there), table words k, then the writes.
  always_comb begin
    state_d = state_q;
    unique case (state_q)
      StIdle:    if (start_i) state_d = StReadV0;
      StReadV0:  state_d = has_v1 ? StReadV1 : StReadCos;
      StReadV1:  state_d = StReadCos;
      StReadCos: state_d = StReadSin;
      StReadSin: state_d = StLatch;
      StLatch:   state_d = StWriteV0;
      StWriteV0: state_d = has_v1 ? StWriteV1 : (done_d ? StIdle : StReadV0);
      StWriteV1: state_d = done_d ? StIdle : StReadV0;
      default:   state_d = StIdle;
    endcase
  end

  // The scratchpad port: the step's words and table words, then the rotated words, tail lanes
  // masked.
  always_comb begin
    unique case (state_q)
      StReadV1:  mem_addr_o = src_q + row_off + word1;
      StReadCos: mem_addr_o = cos_q + step;
      StReadSin: mem_addr_o = cos_q + sin_off + step;
      StWriteV0: mem_addr_o = dst_q + row_off + word0;
      StWriteV1: mem_addr_o = dst_q + row_off + word1;
      default:   mem_addr_o = src_q + row_off + word0;
    endcase
  end
  assign mem_req_o   = (state_q != StIdle) && (state_q != StLatch);
  assign mem_we_o    = (state_q == StWriteV0) || (state_q == StWriteV1);
  assign mem_wdata_o = (state_q == StWriteV1) ? rot_q[Lanes*32 +: Lanes*32]
                                              : rot_q[0 +: Lanes*32];
  assign mem_wsat_o  = (state_q == StWriteV1) ? rot_sat_q[Lanes +: Lanes]
                                              : rot_sat_q[0 +: Lanes];
  always_comb begin
    unique case (state_q)
      StWriteV0: mem_wmask_o = step_mask[0 +: Lanes];
      StWriteV1: mem_wmask_o = step_mask[Lanes +: Lanes];
      default:   mem_wmask_o = '0;
    endcase
  end

  always_ff @(posedge clk_i) begin  // control: reset
    read_state_q <= rst_i ? StIdle : state_q;
    done_o       <= !rst_i && done_d;
  end

  assign busy_o = (state_q != StIdle);
  assign pass_o = 2'd0;

  // Word 2k fits the address because k < 2^(AddrWidth-1) for any row inside the scratchpad;
  // the walk's read tracking is not needed.
  logic unused_bits;
  assign unused_bits = ^{step[AddrWidth-1], row_end, rd_mask};

`ifndef SYNTHESIS
  CmdSizes_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (start_i && !busy_o) |-> (len_i >= LenWidth'(2) && !len_i[0] && rows_i != '0))
    else $error("psm_rope: len_i must be even and >= 2, rows_i >= 1");
`endif
endmodule : psm_rope
