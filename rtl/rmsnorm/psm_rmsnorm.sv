// SPDX-License-Identifier: Apache-2.0
// RMSNorm of one int16 row in the vector scratchpad, in two passes, int8 out.
// Golden model: passim::kernels::rmsnorm_i8() in runtime/src/kernels/rmsnorm.cpp.
//
// Pass 0 reads the row: per-lane uint64 sums of x^2, then ss = the lane sums added + eps
//        (1 if that is 0), and r = rsqrt_requant(ss, gain_frac_bits) (psm_rsqrt).
// Pass 1 reads the row and the gain row word by word and writes
//        out[i] = requantize(x[i] * gain[i], r, 8) as int8, sign-extended to 32 bits.
//
// Cycles for W = ceil(len / Lanes) words, from the cycle after start_i:
//   pass 0: W reads + 1 (last data) + 1 (reduce) + 65 + k (rsqrt)  = W + 67 + k
//           with k = (62 - bit_width(ss)) / 2 in [0, 30]
//   pass 1: (read x, read gain, write) per word                   = 3 * W
// done_o pulses in the cycle after the last write, with busy_o already low.
// Ports: the vector-unit groups `PSM_VEC_* of rtl/common/psm_vector_port.svh; scratchpad
// data: int16 x and gain in, int8 out, each sign-extended to 32 bits.
`include "psm_vector_port.svh"
module psm_rmsnorm #(
  `PSM_VEC_PARAMS
) (
  `PSM_VEC_START_PORTS,
  `PSM_VEC_GAIN_ROW_PORTS,
  input  logic [63:0]          eps_i,             // unsigned, added to the sum of squares
  input  logic [3:0]           gain_frac_bits_i,  // gain is Q.gain_frac_bits, 0..13
  `PSM_VEC_DONE_PORTS,
  output logic [1:0]           pass_o,            // current pass 0, 1 (0 when idle)
  `PSM_VEC_MEM_PORTS
);
  typedef enum logic [2:0] {
    StIdle,       // wait for start_i
    StSumRead,    // pass 0: read every word, add x^2 into per-lane sums
    StSumReduce,  // pass 0: ss = lane sums + eps; start the reciprocal square root
    StRsqrt,      // pass 0: wait for r = rsqrt_requant(ss, gain_frac_bits)
    StNormReadX,  // pass 1: read one word of x
    StNormReadG,  // pass 1: read the same word of the gain; x arrives
    StNormWrite   // pass 1: the gain arrives; write the normalised int8 values
  } rmsnorm_state_e;

  rmsnorm_state_e state_d, state_q;

  always_ff @(posedge clk_i) state_q <= rst_i ? StIdle : state_d;  // control: reset

  // RMSNorm's own requantisation step, the twin of passim::requantize(x, {mult, shift, 0}, 8)
  // in fixed_point.hpp: exact product, ONE rounding (half up: add 2^(shift-1), arithmetic
  // shift), then saturation to int8; bit-exact with rmsnorm_i8() (tests/sim/rmsnorm_rtl_test.cpp).
  // It is combinational, not the 2-cycle pipeline rtl/common/psm_requant.sv, so pass 1 writes
  // in the cycle the gain arrives (3 cycles per word). Returns {clamped, y}.
  function automatic logic [8:0] requantize_i8(input logic signed [31:0] x,
                                               input logic [30:0] mult,
                                               input logic [5:0] shift);
    logic signed [63:0] x_wide;
    logic signed [63:0] mult_wide;
    logic signed [63:0] prod;     // |x * mult| < 2^62: exact
    logic signed [63:0] bias;
    logic signed [63:0] shifted;
    x_wide    = 64'(x);
    mult_wide = $signed({33'd0, mult});
    prod      = x_wide * mult_wide;
    bias      = (shift == 6'd0) ? 64'sd0 : (64'sd1 <<< (shift - 6'd1));
    shifted   = (prod + bias) >>> shift;
    if (shifted > 64'sd127)       requantize_i8 = {1'b1, 8'sd127};
    else if (shifted < -64'sd128) requantize_i8 = {1'b1, -8'sd128};
    else                          requantize_i8 = {1'b0, shifted[7:0]};
  endfunction

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and row walk                                                                    //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The datapath below is evaluated only while the unit runs (active, or a command starts):
  // an idle unit costs the simulator one test per block instead of its whole datapath.
  logic active;
  assign active = (state_q != StIdle) || start_i;

  // The command, sampled when it starts.
  logic [AddrWidth-1:0] src_q, gain_q, dst_q;
  logic [63:0]          eps_q;
  logic [3:0]           gain_frac_bits_q;

  // Both passes walk the row from word 0: one word per read (pass 0) or per write (pass 1);
  // rd_mask: the lanes of the word read last cycle inside the row (0 without one).
  logic                 start, walk_next, walk_rewind, issue_read;
  logic [AddrWidth-1:0] word, row_words;     // a command is one row, and the mask of the word
  logic [Lanes-1:0]     word_mask, rd_mask;  // written is rd_mask: row_words, word_mask unused
  logic                 last_word, row_end;

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start) begin
      {src_q, gain_q, dst_q, eps_q, gain_frac_bits_q} <=
          {src_addr_i, gain_addr_i, dst_addr_i, eps_i, gain_frac_bits_i};
    end
  end

  psm_row_walk_one #(.Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth)) u_walk (
    .clk_i, .rst_i, .start_i, .busy_i(busy_o), .len_i, .start_o(start), .next_i(walk_next),
    .rewind_i(walk_rewind), .read_i(issue_read), .step_o(word), .row_words_o(row_words),
    .mask_o(word_mask), .last_step_o(last_word), .row_end_o(row_end), .rd_mask_o(rd_mask)
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Lanes: sums of squares, normalisation                                                   //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [30:0]          rq_mult;   // r from psm_rsqrt, valid in pass 1
  logic [5:0]           rq_shift;
  logic [Lanes*64-1:0]  lane_sumsq;
  logic [Lanes*32-1:0]  lane_out;
  logic [Lanes-1:0]     lane_sat;  // the write's result was clamped to int8

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic               use_lane;  // this lane of mem_rdata_i is a row element
    logic signed [15:0] rd;        // this lane of mem_rdata_i as int16 (x or gain)
    logic signed [31:0] rd_wide;
    logic signed [31:0] sq;        // x^2 in [0, 2^30]
    logic signed [15:0] x_q;       // x, held while the gain is read (pass 1)
    logic signed [31:0] xg;        // x * gain, |xg| <= 2^30
    logic signed [7:0]  y;
    logic               y_sat;     // y was clamped
    logic [63:0]        sumsq_q;   // this lane's sum of squares; exact (wraps mod 2^64 only
                                   // beyond 2^34 elements, like the golden uint64)

    assign use_lane = active && rd_mask[l];
    assign rd       = mem_rdata_i[l*32 +: 16];
    assign rd_wide  = 32'(rd);

    // Squares in pass 0, products and their requantisation in pass 1: evaluated only on the
    // lanes and in the state that use them (0 elsewhere).
    always_comb begin
      sq = '0;
      xg = '0;
      {y_sat, y} = '0;
      if (use_lane) begin
        if (state_q == StSumRead) sq = rd_wide * rd_wide;
        if (state_q == StNormWrite) begin
          xg = 32'(x_q) * rd_wide;
          {y_sat, y} = requantize_i8(xg, rq_mult, rq_shift);
        end
      end
    end

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (active) begin
        if (state_q == StIdle)                     sumsq_q <= '0;  // start_i
        else if (state_q == StSumRead && use_lane) sumsq_q <= sumsq_q + 64'(sq);
        if (state_q == StNormReadG)                x_q     <= rd;
      end
    end

    logic [31:0] out;  // read only in StNormWrite
    always_comb begin
      out = '0;
      if (state_q == StNormWrite) out = {{24{y[7]}}, y};
    end
    assign lane_sumsq[l*64 +: 64] = sumsq_q;
    assign lane_out[l*32 +: 32]   = out;
    assign lane_sat[l]            = y_sat;

    // The upper half of a lane is the sign extension of the int16 value (asserted below).
    logic unused_hi;
    assign unused_hi = ^mem_rdata_i[l*32+16 +: 16];

`ifndef SYNTHESIS
    SignExtended_A : assert property (@(posedge clk_i) disable iff (rst_i)
        use_lane |-> mem_rdata_i[l*32+16 +: 16] == {16{rd[15]}})
      else $error("psm_rmsnorm: lane %0d: %08x is not a sign-extended int16", l,
                  mem_rdata_i[l*32 +: 32]);
`endif
  end : g_lane

  // ss = sum of the lane sums + eps, exact in uint64; 1 if it is 0 (an all-zero row with
  // eps = 0 then gives 0 whatever the scale).
  logic [63:0] row_ss;
  logic [63:0] rsqrt_x;
  always_comb begin  // only needed in StSumReduce, where psm_rsqrt samples it
    row_ss = eps_q;
    if (state_q == StSumReduce) begin
      for (int l = 0; l < Lanes; l++) row_ss = row_ss + lane_sumsq[l*64 +: 64];
    end
  end
  assign rsqrt_x = (row_ss == 64'd0) ? 64'd1 : row_ss;

  logic rsqrt_start;
  logic rsqrt_busy;
  logic rsqrt_done;

  psm_rsqrt u_rsqrt (.clk_i, .rst_i, .start_i(rsqrt_start), .x_i(rsqrt_x),
                     .extra_shift_i({2'b00, gain_frac_bits_q}), .busy_o(rsqrt_busy),
                     .done_o(rsqrt_done), .mult_o(rq_mult), .shift_o(rq_shift));

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Pass 0 requests one word per cycle until the row is requested (the cycle after the last
  // request receives the last word); pass 1 reads x and the gain of a word, then writes it.
  logic sum_read;    // pass 0 still has words to request
  logic norm_write;  // StNormWrite: the int8 results of the word
  assign sum_read   = (state_q == StSumRead) && !row_end;
  assign norm_write = (state_q == StNormWrite);

  always_comb begin
    state_d = state_q;
    unique case (state_q)
      StIdle:      if (start_i) state_d = StSumRead;
      StSumRead:   if (row_end) state_d = StSumReduce;
      StSumReduce: state_d = StRsqrt;
      StRsqrt:     if (rsqrt_done) state_d = StNormReadX;
      StNormWrite: state_d = last_word ? StIdle : StNormReadX;  // the next word, or the end
      StNormReadX: state_d = StNormReadG;
      StNormReadG: state_d = StNormWrite;
      default:     state_d = StIdle;
    endcase
  end

  // Pass 1 starts at word 0 again: rewind when the reciprocal square root starts.
  assign walk_rewind = (state_q == StSumReduce);
  assign walk_next   = sum_read || norm_write;
  assign issue_read  = sum_read || (state_q == StNormReadX) || (state_q == StNormReadG);
  assign rsqrt_start = (state_q == StSumReduce);

  // The scratchpad port: x, the gain, then the write (lane_out is 0 but in StNormWrite).
  always_comb begin
    unique case (state_q)
      StNormReadG: mem_addr_o = gain_q + word;
      StNormWrite: mem_addr_o = dst_q + word;
      default:     mem_addr_o = src_q + word;
    endcase
  end
  assign mem_req_o   = issue_read || norm_write;
  assign mem_we_o    = norm_write;
  assign mem_wdata_o = lane_out;
  assign mem_wmask_o = norm_write ? rd_mask : '0;
  assign mem_wsat_o  = lane_sat;

  always_ff @(posedge clk_i) begin  // control: reset
    done_o <= !rst_i && norm_write && last_word;
  end

  assign busy_o = (state_q != StIdle);
  always_comb begin
    unique case (state_q)
      StNormReadX, StNormReadG, StNormWrite: pass_o = 2'd1;
      default:                               pass_o = 2'd0;
    endcase
  end

  // busy is implied by StRsqrt; a command is one row.
  logic unused_bits;
  assign unused_bits = ^{rsqrt_busy, row_words, word_mask};

`ifndef SYNTHESIS
  FracBitsInRange_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (state_q == StIdle && start_i) |-> gain_frac_bits_i <= 4'd13)
    else $error("psm_rmsnorm: gain_frac_bits_i = %0d > 13", gain_frac_bits_i);
`endif
endmodule : psm_rmsnorm
