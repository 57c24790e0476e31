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
module psm_rope #(
  parameter int unsigned Lanes     = 2,   // elements per scratchpad word
  parameter int unsigned AddrWidth = 16,  // scratchpad word address
  parameter int unsigned LenWidth  = 16   // row length and row count
) (
  input  logic                 clk_i,
  input  logic                 rst_i,        // synchronous, active high
  // Command: valid with the one-cycle start_i pulse; ignored while busy_o
  input  logic                 start_i,
  input  logic [AddrWidth-1:0] src_addr_i,   // heads, 12-bit values
  input  logic [AddrWidth-1:0] src2_addr_i,  // cos table (Q1.14), then the sin table
  input  logic [AddrWidth-1:0] dst_addr_i,   // output heads (may equal src_addr_i)
  input  logic [LenWidth-1:0]  len_i,        // head_size, even, >= 2
  input  logic [LenWidth-1:0]  rows_i,       // heads, >= 1
  output logic                 busy_o,
  output logic                 done_o,       // one-cycle pulse after the last write
  output logic [1:0]           pass_o,       // always 0: one pass per row
  // Vector scratchpad port (docs/accelerator.md): read data arrives one cycle after the request
  output logic                 mem_req_o,
  output logic                 mem_we_o,
  output logic [AddrWidth-1:0] mem_addr_o,
  output logic [Lanes*32-1:0]  mem_wdata_o,  // 12-bit values, sign-extended
  output logic [Lanes-1:0]     mem_wmask_o,
  input  logic [Lanes*32-1:0]  mem_rdata_i
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
  rope_state_e read_state_q;  // the state of the previous cycle: names the read data arriving

  // Ceil(n / Lanes): the words of an n-element row (a shift when Lanes is a power of two).
  function automatic logic [AddrWidth-1:0] words_of(input logic [LenWidth-1:0] n);
    logic [LenWidth:0] sum;
    sum      = {1'b0, n} + (LenWidth + 1)'(Lanes - 1);
    words_of = AddrWidth'(sum / (LenWidth + 1)'(Lanes));
  endfunction

  // Twin of saturate(round_shift(r, 14), 12) in fixed_point.hpp: add 2^13, arithmetic shift
  // (ties toward +infinity), clamp to [-2048, 2047]. |r| <= 2^31, so 34 bits hold every step.
  // TODO: move to rtl/common next to psm_requant (its x_i is 32 bits, r needs 33).
  function automatic logic signed [OutBits-1:0] round_sat(input logic signed [32:0] r);
    logic signed [33:0] shifted;
    shifted = (34'(r) + (34'sd1 <<< (FracBits - 1))) >>> FracBits;
    if (shifted > 34'sd2047)       round_sat = 12'sd2047;
    else if (shifted < -34'sd2048) round_sat = -12'sd2048;
    else                           round_sat = shifted[OutBits-1:0];
  endfunction

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and row walk                                                                     //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [AddrWidth-1:0] src_q, cos_q, sin_q, dst_q;  // sin_q = cos_q + ceil(len/2 / Lanes)
  logic [LenWidth-1:0]  len_q;
  logic [AddrWidth-1:0] row_words_q;  // ceil(len / Lanes): the stride between rows
  logic [AddrWidth-1:0] row_off_q;    // r * row_words: offset of row r from src and dst
  logic [LenWidth-1:0]  rows_left_q;  // rows not finished, including the current one
  logic [AddrWidth-1:0] step_q;       // k: table word, and half the first row word of the step
  logic [LenWidth-1:0]  left_q;       // elements of the row from word 2k on

  logic [AddrWidth-1:0] word0;  // word 2k of the row
  assign word0 = {step_q[AddrWidth-2:0], 1'b0};

  logic has_v1;     // word 2k+1 belongs to the row
  logic last_step;  // the row ends in word 2k or 2k+1
  assign has_v1    = (left_q > LenWidth'(Lanes));
  assign last_step = ({1'b0, left_q} <= (LenWidth + 1)'(2 * Lanes));

  // Lanes of words 2k and 2k+1 that belong to the row.
  logic [Lanes-1:0] mask0, mask1;
  always_comb begin  // evaluated only while busy (an idle unit costs the simulator one test)
    mask0 = '0;
    mask1 = '0;
    if (busy_o) begin
      for (int l = 0; l < Lanes; l++) begin
        mask0[l] = ({1'b0, LenWidth'(l)} < {1'b0, left_q});
        mask1[l] = ((LenWidth + 1)'(l + Lanes) < {1'b0, left_q});
      end
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Operands and the rotation                                                                //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [Lanes*16-1:0]   rd16;    // the low 16 bits of each lane of mem_rdata_i
  logic [2*Lanes*16-1:0] v_q;     // elements 2kL .. 2kL + 2L - 1 of the row (words 2k, 2k+1)
  logic [Lanes*16-1:0]   cos_w_q; // cos[kL .. kL + L - 1], Q1.14
  logic [2*Lanes*32-1:0] rot_q;   // rotated elements, sign-extended to 32 bits

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
  function automatic logic [2*Lanes*32-1:0] rotate(input logic                 en,
                                                   input logic [2*Lanes*16-1:0] v,
                                                   input logic [Lanes*16-1:0]   cos_w,
                                                   input logic [Lanes*16-1:0]   sin_w);
    logic signed [15:0] v0, v1, c, s;
    logic signed [31:0] v0s, v1c;  // exact: each product is at most 2^30 in magnitude
    logic signed [32:0] r0, r1;
    for (int p = 0; p < Lanes; p++) begin
      v0  = v[(2*p)*16 +: 16];
      v1  = v[(2*p+1)*16 +: 16];
      c   = cos_w[p*16 +: 16];
      s   = sin_w[p*16 +: 16];
      v0s = en ? 32'(v0) * 32'(s) : 32'sd0;
      v1c = en ? 32'(v1) * 32'(c) : 32'sd0;
      r0  = 33'(32'(v0) * 32'(c)) - 33'(32'(v1) * 32'(s));
      r1  = 33'(v0s) + 33'(v1c);
      rotate[(2*p)*32 +: 32]   = 32'(round_sat(r0));
      rotate[(2*p+1)*32 +: 32] = 32'(round_sat(r1));
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
      StReadSin: rot_q                     <= rotate(sin_arrives, v_q, cos_w_q, rd16);
      default: ;  // no read data this cycle
    endcase
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic start_cmd;  // accept a command this cycle
  logic next_row;   // the row's last step is written and another row follows
  logic next_step;  // a step that is not the last of its row is written
  logic step_end;   // the last write of a step
  logic done_d;

  always_comb begin
    state_d     = state_q;
    start_cmd   = 1'b0;
    step_end    = 1'b0;
    mem_req_o   = 1'b0;
    mem_we_o    = 1'b0;
    mem_addr_o  = src_q + row_off_q + word0;
    mem_wdata_o = rot_q[0 +: Lanes*32];
    mem_wmask_o = '0;
    unique case (state_q)
      // Wait for a command.
      StIdle: begin
        if (start_i) begin
          start_cmd = 1'b1;
          state_d   = StReadV0;
        end
      end
      StReadV0: begin
        mem_req_o = 1'b1;
        state_d   = has_v1 ? StReadV1 : StReadCos;
      end
      StReadV1: begin
        mem_req_o  = 1'b1;
        mem_addr_o = src_q + row_off_q + word0 + AddrWidth'(1);
        state_d    = StReadCos;
      end
      StReadCos: begin
        mem_req_o  = 1'b1;
        mem_addr_o = cos_q + step_q;
        state_d    = StReadSin;
      end
      StReadSin: begin
        mem_req_o  = 1'b1;
        mem_addr_o = sin_q + step_q;
        state_d    = StLatch;
      end
      StLatch: state_d = StWriteV0;
      StWriteV0: begin
        mem_req_o   = 1'b1;
        mem_we_o    = 1'b1;
        mem_addr_o  = dst_q + row_off_q + word0;
        mem_wmask_o = mask0;
        if (has_v1) state_d = StWriteV1;
        else        step_end = 1'b1;
      end
      StWriteV1: begin
        mem_req_o   = 1'b1;
        mem_we_o    = 1'b1;
        mem_addr_o  = dst_q + row_off_q + word0 + AddrWidth'(1);
        mem_wdata_o = rot_q[Lanes*32 +: Lanes*32];
        mem_wmask_o = mask1;
        step_end    = 1'b1;
      end
      default: state_d = StIdle;
    endcase
    // After the last write of a step: the next step, the next row, or the end.
    next_step = step_end && !last_step;
    next_row  = step_end && last_step && rows_left_q != LenWidth'(1);
    done_d    = step_end && last_step && rows_left_q == LenWidth'(1);
    if (step_end) state_d = done_d ? StIdle : StReadV0;
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      state_q      <= StIdle;
      read_state_q <= StIdle;
      done_o       <= 1'b0;
      row_off_q    <= '0;
      rows_left_q  <= '0;
      step_q       <= '0;
      left_q       <= '0;
    end else begin
      state_q      <= state_d;
      read_state_q <= state_q;
      done_o       <= done_d;
      if (start_cmd || next_row) begin
        row_off_q   <= start_cmd ? '0 : row_off_q + row_words_q;
        rows_left_q <= start_cmd ? rows_i : rows_left_q - LenWidth'(1);
        step_q      <= '0;
        left_q      <= start_cmd ? len_i : len_q;
      end else if (next_step) begin
        step_q <= step_q + AddrWidth'(1);
        left_q <= left_q - LenWidth'(2 * Lanes);
      end
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start_cmd) begin
      src_q       <= src_addr_i;
      cos_q       <= src2_addr_i;
      sin_q       <= src2_addr_i + words_of(len_i >> 1);
      dst_q       <= dst_addr_i;
      len_q       <= len_i;
      row_words_q <= words_of(len_i);
    end
  end

  assign busy_o = (state_q != StIdle);
  assign pass_o = 2'd0;

  // Word 2k fits the address because k < 2^(AddrWidth-1) for any row inside the scratchpad.
  logic unused_step;
  assign unused_step = step_q[AddrWidth-1];

`ifndef SYNTHESIS
  CmdSizes_A : assert property (@(posedge clk_i) disable iff (rst_i)
      start_cmd |-> (len_i >= LenWidth'(2) && !len_i[0] && rows_i != '0))
    else $error("psm_rope: len_i must be even and >= 2, rows_i >= 1");
`endif
endmodule : psm_rope
