// SPDX-License-Identifier: Apache-2.0
// LayerNorm (three passes) or inference BatchNorm (one pass) of one int16 row in the vector
// scratchpad, int8 out.
// Golden model: passim::kernels::layernorm_i8() in runtime/src/kernels/layernorm.cpp; BatchNorm:
// passim::kernels::batchnorm_i8() in runtime/src/kernels/batchnorm.cpp.
//
// LayerNorm (mode_i = 0):
//   pass 0 reads the row: per-lane signed sums; sum = the lane sums added; the rounded mean
//          m = floor((2 sum + n) / (2n)) (psm_divider on the magnitude, see "Mean" below).
//   pass 1 reads the row: per-lane uint64 sums of (x - m)^2; ssd = the lane sums + eps (1 if
//          that is 0); r = rsqrt_requant(ssd, gain_frac_bits) (psm_rsqrt).
//   pass 2 reads x, gain and bias word by word and writes
//          out[i] = saturate(requantize((x[i] - m) * gain[i], r, 32) + bias[i], 8)
//          (psm_batchnorm, started with m and r).
// BatchNorm (mode_i = 1): pass 2 alone, with m = 0 and r = {rq_mult_i, rq_shift_i}; pass_o
// stays 0. The gain row is at gain_addr_i, the bias row right after it, at
// gain_addr_i + ceil(len / Lanes).
//
// Cycles for W = ceil(len / Lanes) words, from the cycle after start_i:
//   pass 0: W reads + 1 (last data) + 1 (reduce) + DivSteps + 1 (divide)  = W + DivSteps + 3
//   pass 1: W reads + 1 (last data) + 1 (reduce) + 65 + k (rsqrt)         = W + 67 + k
//           with k = (62 - bit_width(ssd)) / 2 in [0, 30]
//   pass 2: (read x, read gain, read bias, round, write) per word         = 5 * W
// DivSteps = ceil(DivWidth / 2), DivWidth = LenWidth + 17 (17 and 33 for the default LenWidth
// 16): psm_divider makes two quotient bits per cycle. done_o pulses in the cycle after
// the last write, with busy_o already low.
// Ports: the vector-unit groups `PSM_VEC_* of rtl/common/psm_vector_port.svh; scratchpad
// data: int16 x, gain and bias in, int8 out, each sign-extended to 32 bits.
`include "psm_vector_port.svh"
module psm_layernorm #(
  `PSM_VEC_PARAMS
) (
  `PSM_VEC_START_PORTS,
  input  logic                 mode_i,            // 0: LayerNorm, 1: BatchNorm
  `PSM_VEC_GAIN_ROW_PORTS,
  input  logic [63:0]          eps_i,             // LayerNorm: unsigned, added to the ssd
  input  logic [3:0]           gain_frac_bits_i,  // LayerNorm: gain is Q.gain_frac_bits, 0..13
  input  logic [30:0]          rq_mult_i,         // BatchNorm: the step's multiplier
  input  logic [5:0]           rq_shift_i,        // BatchNorm: the step's shift, 0..63
  `PSM_VEC_DONE_PORTS,
  output logic [1:0]           pass_o,            // LayerNorm 0, 1, 2; BatchNorm 0 (0 if idle)
  `PSM_VEC_MEM_PORTS
);
  // The row sum is below 2^15 * 2^LenWidth in magnitude; 2 sum + n needs two bits more, and
  // its magnitude (the divider's dividend) fits LenWidth + 17 unsigned bits.
  localparam int unsigned SumWidth = LenWidth + 16;
  localparam int unsigned NumWidth = LenWidth + 18;
  localparam int unsigned DivWidth = LenWidth + 17;

  typedef enum logic [2:0] {
    StIdle,        // wait for start_i (pass 2 runs in psm_batchnorm)
    StMeanRead,    // pass 0: read every word, add x into per-lane sums
    StMeanReduce,  // pass 0: sum the lanes; start the division for the mean
    StMeanDivide,  // pass 0: wait for the quotient; m
    StVarRead,     // pass 1: read every word, add (x - m)^2 into per-lane sums
    StVarReduce,   // pass 1: ssd = lane sums + eps; start the reciprocal square root
    StRsqrt        // pass 1: wait for r = rsqrt_requant(ssd, gain_frac_bits); start pass 2
  } layernorm_state_e;

  layernorm_state_e state_d, state_q;

  always_ff @(posedge clk_i) state_q <= rst_i ? StIdle : state_d;  // control: reset

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and row walk                                                                     //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The datapath below is evaluated only while passes 0 and 1 run (active, or a command
  // starts): an idle unit costs the simulator one test per block instead of its whole datapath.
  logic active;
  assign active = (state_q != StIdle) || start_i;

  // The command, sampled when it starts.
  logic                 mode_q;      // 1: BatchNorm
  logic [AddrWidth-1:0] src_q, gain_q, dst_q;
  logic [LenWidth-1:0]  len_q;
  logic [63:0]          eps_q;
  logic [3:0]           gain_frac_bits_q;

  // Passes 0 and 1 walk the row from word 0, one word per read; rd_mask: the lanes of the
  // word read last cycle inside the row (0 without one).
  logic                 start_cmd;   // accept a command this cycle
  logic                 walk_next, walk_rewind, issue_read;
  logic [AddrWidth-1:0] word, row_words;     // a command is one row, and is only read here:
  logic [Lanes-1:0]     word_mask, rd_mask;  // row_words, word_mask and last_word unused
  logic                 last_word, row_end;

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start_cmd) begin
      {src_q, gain_q, dst_q, len_q, eps_q, gain_frac_bits_q, mode_q} <=
          {src_addr_i, gain_addr_i, dst_addr_i, len_i, eps_i, gain_frac_bits_i, mode_i};
    end
  end

  psm_row_walk_one #(.Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth)) u_walk (
    .clk_i, .rst_i, .start_i, .busy_i(busy_o), .len_i, .start_o(start_cmd), .next_i(walk_next),
    .rewind_i(walk_rewind), .read_i(issue_read), .step_o(word), .row_words_o(row_words),
    .mask_o(word_mask), .last_step_o(last_word), .row_end_o(row_end), .rd_mask_o(rd_mask)
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Lanes: sums and squared deviations                                                       //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic signed [15:0]  mean_q;    // m, int16
  logic [Lanes*64-1:0] lane_acc;

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic               use_lane;  // this lane of mem_rdata_i is a row element
    logic signed [15:0] rd;        // this lane of mem_rdata_i as int16 (x)
    logic signed [16:0] dev;       // x - m, |dev| <= 65535 (pass 1)
    logic signed [33:0] dev_sq;    // (x - m)^2 < 2^32
    logic [63:0]        acc_add;   // what this lane adds to its sum this cycle
    logic [63:0]        acc_q;     // pass 0: sum of x (two's complement, |sum| < 2^31 for
                                   // 16-bit lengths); pass 1: sum of (x - m)^2 (exact; wraps
                                   // mod 2^64 only beyond 2^32 elements, like the golden
                                   // uint64)

    assign use_lane = active && rd_mask[l];
    assign rd       = mem_rdata_i[l*32 +: 16];

    // Pass 0 adds x, pass 1 adds (x - m)^2; 0 on lanes outside the row and in other states.
    always_comb begin
      dev     = '0;
      dev_sq  = '0;
      acc_add = '0;
      if (use_lane && state_q == StMeanRead) acc_add = 64'(rd);
      if (use_lane && state_q == StVarRead) begin
        dev     = 17'(rd) - 17'(mean_q);
        dev_sq  = 34'(dev) * 34'(dev);
        acc_add = 64'(dev_sq[31:0]);
      end
    end

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (active) begin
        if (start_cmd || walk_rewind) acc_q <= '0;
        else if (use_lane)             acc_q <= acc_q + acc_add;
      end
    end

    assign lane_acc[l*64 +: 64] = acc_q;

    // The upper half of a lane is the sign extension of the int16 value (asserted below);
    // (x - m)^2 < 2^32 leaves the top bits of the square zero.
    logic unused_bits;
    assign unused_bits = ^{mem_rdata_i[l*32+16 +: 16], dev_sq[33:32]};

`ifndef SYNTHESIS
    SignExtended_A : assert property (@(posedge clk_i) disable iff (rst_i)
        use_lane |-> mem_rdata_i[l*32+16 +: 16] == {16{rd[15]}})
      else $error("psm_layernorm: lane %0d: %08x is not a sign-extended int16", l,
                  mem_rdata_i[l*32 +: 32]);
`endif
  end : g_lane

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Mean (pass 0) and reciprocal standard deviation (pass 1)                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The lanes added: pass 0 the row sum (two's complement), pass 1 the sum of squares (exact
  // in uint64). Only needed in the reduce states.
  logic [63:0] row_acc;
  always_comb begin
    row_acc = '0;
    if (state_q == StMeanReduce || state_q == StVarReduce) begin
      for (int l = 0; l < Lanes; l++) row_acc = row_acc + lane_acc[l*64 +: 64];
    end
  end

  // Mean: m = floor(num / den) with num = 2 sum + n and den = 2n. For num < 0 the floor is
  // -floor((-num - 1) / den) - 1, and -v - 1 = ~v in two's complement: the divider takes
  // ~num and m is ~quotient. (The golden rounded_mean() truncates and corrects instead; both
  // are the floor.)
  logic signed [SumWidth-1:0] row_sum;
  logic signed [NumWidth-1:0] sum_wide, len_wide;
  logic signed [NumWidth-1:0] mean_num;
  logic [DivWidth-1:0]        div_dividend;
  logic [DivWidth-1:0]        div_divisor;
  logic [DivWidth-1:0]        div_quotient;
  logic                       div_start;
  logic                       div_busy;
  logic                       div_done;
  logic                       num_neg_q;   // num < 0, kept for the quotient
  logic signed [DivWidth-1:0] mean_full;   // the floor, in [min(x), max(x)]

  // Only StMeanReduce uses the numerator (0 in the other states).
  assign row_sum  = row_acc[SumWidth-1:0];
  assign sum_wide = NumWidth'(row_sum);  // sign-extended
  assign len_wide = $signed(NumWidth'(len_q));
  always_comb begin
    mean_num     = '0;
    div_dividend = '0;
    if (state_q == StMeanReduce) begin
      mean_num     = (sum_wide <<< 1) + len_wide;
      div_dividend = mean_num[NumWidth-1] ? ~mean_num[DivWidth-1:0] : mean_num[DivWidth-1:0];
    end
  end
  assign div_divisor  = DivWidth'({len_q, 1'b0});
  assign mean_full    = num_neg_q ? ~div_quotient : div_quotient;

  psm_divider #(.Width(DivWidth)) u_divider (
    .clk_i, .rst_i, .start_i(div_start), .dividend_i(div_dividend), .divisor_i(div_divisor),
    .busy_o(div_busy), .done_o(div_done), .quotient_o(div_quotient)
  );

  // ssd = sum of squared deviations + eps, exact in uint64; 1 if it is 0 (a constant row with
  // eps = 0: every d is 0 and the output is the bias).
  logic [63:0] row_ssd;
  logic [63:0] rsqrt_x;
  logic        rsqrt_start;
  logic        rsqrt_busy;
  logic        rsqrt_done;
  logic [30:0] rsqrt_mult;   // r, valid from rsqrt_done until the next start
  logic [5:0]  rsqrt_shift;

  always_comb begin  // only StVarReduce uses it (0 in the other states)
    row_ssd = '0;
    rsqrt_x = '0;
    if (state_q == StVarReduce) begin
      row_ssd = row_acc + eps_q;
      rsqrt_x = (row_ssd == 64'd0) ? 64'd1 : row_ssd;
    end
  end

  psm_rsqrt u_rsqrt (.clk_i, .rst_i, .start_i(rsqrt_start), .x_i(rsqrt_x),
                     .extra_shift_i({2'b00, gain_frac_bits_q}), .busy_o(rsqrt_busy),
                     .done_o(rsqrt_done), .mult_o(rsqrt_mult), .shift_o(rsqrt_shift));

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Pass 2: psm_batchnorm                                                                    //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // BatchNorm runs the normalising pass alone, on the command as it arrives (m = 0, its step);
  // LayerNorm starts it when r is ready, on the latched command with m and r.
  logic                 bn_start;
  logic                 bn_busy;
  logic                 bn_done;
  logic                 bn_req;
  logic                 bn_we;
  logic [AddrWidth-1:0] bn_addr;
  logic [Lanes*32-1:0]  bn_wdata;
  logic [Lanes-1:0]     bn_wmask;

  assign bn_start = (start_cmd && mode_i) || (state_q == StRsqrt && rsqrt_done);

  psm_batchnorm #(
    .Lanes    (Lanes),
    .AddrWidth(AddrWidth),
    .LenWidth (LenWidth)
  ) u_batchnorm (
    .clk_i,
    .rst_i,
    .start_i    (bn_start),
    .src_addr_i (start_cmd ? src_addr_i : src_q),
    .gain_addr_i(start_cmd ? gain_addr_i : gain_q),
    .dst_addr_i (start_cmd ? dst_addr_i : dst_q),
    .len_i      (start_cmd ? len_i : len_q),
    .mean_i     (start_cmd ? 16'sd0 : mean_q),
    .rq_mult_i  (start_cmd ? rq_mult_i : rsqrt_mult),
    .rq_shift_i (start_cmd ? rq_shift_i : rsqrt_shift),
    .busy_o     (bn_busy),
    .done_o     (bn_done),
    .mem_req_o  (bn_req),
    .mem_we_o   (bn_we),
    .mem_addr_o (bn_addr),
    .mem_wdata_o(bn_wdata),
    .mem_wmask_o(bn_wmask),
    .mem_wsat_o,  // only psm_batchnorm writes
    .mem_rdata_i
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Passes 0 and 1 read one word per cycle until the row is requested (the cycle after the
  // last request receives the last word); the divider, then psm_rsqrt, finish the pass.
  logic row_read;  // a read pass that still has words to request
  assign row_read = (state_q == StMeanRead || state_q == StVarRead) && !row_end;

  always_comb begin
    state_d = state_q;
    unique case (state_q)
      StIdle:       if (start_cmd && !mode_i) state_d = StMeanRead;
      StMeanRead:   if (row_end) state_d = StMeanReduce;
      StMeanReduce: state_d = StMeanDivide;
      StMeanDivide: if (div_done) state_d = StVarRead;
      StVarRead:    if (row_end) state_d = StVarReduce;
      StVarReduce:  state_d = StRsqrt;
      StRsqrt:      if (rsqrt_done) state_d = StIdle;
      default:      state_d = StIdle;
    endcase
  end

  // A command is accepted (start_cmd, the walk's) while this unit and psm_batchnorm are both
  // idle. Pass 1 starts at word 0 again (and clears the lane sums) when m is latched.
  assign walk_rewind = (state_q == StMeanDivide) && div_done;
  assign walk_next   = row_read;
  assign issue_read  = row_read;
  assign div_start   = (state_q == StMeanReduce);
  assign rsqrt_start = (state_q == StVarReduce);

  // The scratchpad port: the reads of passes 0 and 1, or psm_batchnorm's.
  assign mem_req_o   = issue_read || bn_req;
  assign mem_we_o    = bn_we;
  assign mem_addr_o  = bn_busy ? bn_addr : src_q + word;
  assign mem_wdata_o = bn_wdata;
  assign mem_wmask_o = bn_wmask;

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (state_q == StMeanDivide && div_done) mean_q    <= mean_full[15:0];
    if (state_q == StMeanReduce)             num_neg_q <= mean_num[NumWidth-1];
  end

  assign busy_o = (state_q != StIdle) || bn_busy;
  assign done_o = bn_done;
  always_comb begin
    unique case (state_q)
      StVarRead, StVarReduce, StRsqrt: pass_o = 2'd1;
      default:                         pass_o = (bn_busy && !mode_q) ? 2'd2 : 2'd0;
    endcase
  end

  // The sub-units' busy flags are implied by the states that wait for them; the top of
  // row_acc is the sign extension of the row sum in pass 0; a command is one row, only read.
  logic unused_bits;
  assign unused_bits = ^{div_busy, rsqrt_busy, row_acc[63:SumWidth], row_words, word_mask,
                         last_word};

`ifndef SYNTHESIS
  FracBitsInRange_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (start_cmd && !mode_i) |-> gain_frac_bits_i <= 4'd13)
    else $error("psm_layernorm: gain_frac_bits_i = %0d > 13", gain_frac_bits_i);
  MeanFitsInt16_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (state_q == StMeanDivide && div_done) |->
          mean_full == DivWidth'($signed(mean_full[15:0])))
    else $error("psm_layernorm: mean %0d outside int16", mean_full);
`endif
endmodule : psm_layernorm
