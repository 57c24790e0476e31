// SPDX-License-Identifier: Apache-2.0
// The normalising pass over one int16 row in the vector scratchpad, int8 out: inference
// BatchNorm (mean_i = 0, the trained step) and the third pass of LayerNorm (psm_layernorm: its
// mean m and r = rsqrt_requant(ssd)).
// Golden model: passim::kernels::batchnorm_i8() in runtime/src/kernels/batchnorm.cpp, which is
// pass 3 of passim::kernels::layernorm_i8() in runtime/src/kernels/layernorm.cpp.
//
//   out[i] = saturate(requantize((x[i] - m) * gain[i], rq, 32) + bias[i], 8)
// read word by word: x, the gain, the bias, one round, the write. The gain row is at
// gain_addr_i, the bias row right after it, at gain_addr_i + ceil(len / Lanes).
//
// Cycles for W = ceil(len / Lanes) words, from the cycle after start_i:
//   (read x, read gain, read bias, round, write) per word = 5 * W
// done_o pulses in the cycle after the last write, with busy_o already low.
// Ports: the vector-unit groups `PSM_VEC_* of rtl/common/psm_vector_port.svh; scratchpad
// data: int16 x, gain and bias in, int8 out, each sign-extended to 32 bits.
`include "psm_vector_port.svh"
module psm_batchnorm #(
  `PSM_VEC_PARAMS
) (
  `PSM_VEC_START_PORTS,
  `PSM_VEC_GAIN_ROW_PORTS,
  input  logic signed [15:0]   mean_i,      // m, int16 (BatchNorm: 0)
  input  logic [30:0]          rq_mult_i,   // the step applied to (x - m) * gain: multiplier
  input  logic [5:0]           rq_shift_i,  //                                     shift, 0..63
  `PSM_VEC_DONE_PORTS,
  `PSM_VEC_MEM_PORTS
);
  typedef enum logic [2:0] {
    StIdle,   // wait for start_i
    StReadX,  // read one word of x
    StReadG,  // read the same word of the gain; x arrives, d = x - m
    StReadB,  // read the same word of the bias; the gain arrives, d * gain
    StRound,  // the bias arrives; requantiser stage 2
    StWrite   // write saturate(requantize(d * gain, rq, 32) + bias, 8)
  } batchnorm_state_e;

  batchnorm_state_e state_d, state_q;

  always_ff @(posedge clk_i) state_q <= rst_i ? StIdle : state_d;  // control: reset

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and row walk                                                                     //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The datapath below is evaluated only while the unit runs (active, or a command starts):
  // an idle unit costs the simulator one test per block instead of its whole datapath.
  logic active;
  assign active = (state_q != StIdle) || start_i;

  // The command, sampled when it starts.
  logic [AddrWidth-1:0] src_q, gain_q, dst_q;
  logic signed [15:0]   mean_q;
  logic [30:0]          rq_mult_q;
  logic [5:0]           rq_shift_q;

  // One word per write; rd_mask: the lanes of the word read last cycle inside the row (0
  // without one). row_words: the bias row follows the gain row.
  logic                 start, issue_read, write;
  logic [AddrWidth-1:0] word, row_words;
  logic [Lanes-1:0]     word_mask, rd_mask;
  logic                 last_word, row_end;  // a command is one row: row_end unused

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start) begin
      {src_q, gain_q, dst_q, mean_q, rq_mult_q, rq_shift_q} <=
          {src_addr_i, gain_addr_i, dst_addr_i, mean_i, rq_mult_i, rq_shift_i};
    end
  end

  psm_row_walk_one #(.Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth)) u_walk (
    .clk_i, .rst_i, .start_i, .busy_i(busy_o), .len_i, .start_o(start), .next_i(write),
    .rewind_i(1'b0), .read_i(issue_read), .step_o(word), .row_words_o(row_words),
    .mask_o(word_mask), .last_step_o(last_word), .row_end_o(row_end), .rd_mask_o(rd_mask)
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Lanes                                                                                    //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [Lanes*32-1:0] lane_out;
  logic [Lanes-1:0]    lane_sat;  // the write's result was clamped to int8

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic               use_lane;  // this lane of mem_rdata_i is a row element
    logic signed [15:0] rd;        // this lane of mem_rdata_i as int16 (x, gain or bias)
    logic signed [16:0] dev_q;     // d = x - m, |d| <= 65535, held while the gain is read
    logic signed [15:0] bias_q;    // held for the write
    logic signed [31:0] dg_full;   // d * gain: |dg| <= 65535 * 32768 < 2^31, exact
    logic signed [31:0] dg;        // d * gain in StReadB, 0 otherwise
    logic signed [31:0] scaled;    // requantize(d * gain, rq, 32)
    logic signed [32:0] biased;    // scaled + bias: |scaled| <= 2^15 (1 + 2^-28) (numerics)
    logic signed [7:0]  y;
    logic               unused_scaled_sat;  // the int32 step: not a result

    assign use_lane = active && rd_mask[l];
    assign rd       = mem_rdata_i[l*32 +: 16];

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (state_q == StReadG) dev_q  <= 17'(rd) - 17'(mean_q);
      if (state_q == StRound) bias_q <= rd;
    end

    // The requantiser takes d * gain in StReadB (the gain is on mem_rdata_i); its result
    // arrives two cycles later, in StWrite. The product is a signed 17 x 16 multiply of its
    // own, selected afterwards: inside the select ('0 is unsigned) it would be an unsigned
    // 32 x 32 multiply of sign-extended operands, which Yosys 0.23 maps wrongly (README.md).
    assign dg_full = dev_q * rd;
    assign dg      = (state_q == StReadB && use_lane) ? dg_full : '0;

    psm_requant u_requant (.clk_i, .en_i(state_q == StReadB), .x_i(dg), .bias_i(26'sd0),
                           .mult_i(rq_mult_q), .shift_i(rq_shift_q), .out_bits_i(6'd32),
                           .y_o(scaled), .sat_o(unused_scaled_sat));

    // The bias is an integer, so adding it after the one rounding adds no second rounding.
    // Only the write uses the result (0 in the other states).
    always_comb begin
      biased      = '0;
      y           = '0;
      lane_sat[l] = 1'b0;
      if (state_q == StWrite) begin
        biased      = 33'(scaled) + 33'(bias_q);
        lane_sat[l] = (biased > 33'sd127) || (biased < -33'sd128);
        if (biased > 33'sd127)       y = 8'sd127;
        else if (biased < -33'sd128) y = -8'sd128;
        else                         y = biased[7:0];
      end
    end
    assign lane_out[l*32 +: 32] = {{24{y[7]}}, y};

    // The upper half of a lane is the sign extension of the int16 value (asserted below).
    logic unused_hi;
    assign unused_hi = ^mem_rdata_i[l*32+16 +: 16];

`ifndef SYNTHESIS
    SignExtended_A : assert property (@(posedge clk_i) disable iff (rst_i)
        use_lane |-> mem_rdata_i[l*32+16 +: 16] == {16{rd[15]}})
      else $error("psm_batchnorm: lane %0d: %08x is not a sign-extended int16", l,
                  mem_rdata_i[l*32 +: 32]);
`endif
  end : g_lane

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Per word: three reads (x, gain, bias), a cycle for the requantiser, the write.
  assign write = (state_q == StWrite);

  always_comb begin
    state_d = state_q;
    unique case (state_q)
      StIdle:  if (start_i) state_d = StReadX;
      StWrite: state_d = last_word ? StIdle : StReadX;  // the next word, or the end
      StReadX: state_d = StReadG;
      StReadG: state_d = StReadB;
      StReadB: state_d = StRound;
      StRound: state_d = StWrite;
      default: state_d = StIdle;
    endcase
  end

  assign issue_read = (state_q == StReadX) || (state_q == StReadG) || (state_q == StReadB);

  // The scratchpad port: the three reads, and the write of the word's lanes inside the row
  // (lane_out is 0 in every other state).
  always_comb begin
    unique case (state_q)
      StReadG: mem_addr_o = gain_q + word;
      StReadB: mem_addr_o = gain_q + row_words + word;
      StWrite: mem_addr_o = dst_q + word;
      default: mem_addr_o = src_q + word;
    endcase
  end
  assign mem_req_o   = issue_read || write;
  assign mem_we_o    = write;
  assign mem_wdata_o = lane_out;
  assign mem_wmask_o = write ? word_mask : '0;
  assign mem_wsat_o  = lane_sat;

  always_ff @(posedge clk_i) begin  // control: reset
    done_o <= !rst_i && write && last_word;
  end

  assign busy_o = (state_q != StIdle);

  logic unused_walk;
  assign unused_walk = row_end;
endmodule : psm_batchnorm
