// SPDX-License-Identifier: Apache-2.0
// LayerNorm (three passes) or inference BatchNorm (one pass) of one int16 row in the vector
// scratchpad, int8 out.
// Golden model: passim::kernels::layernorm_i8() and batchnorm_i8() in
// runtime/src/kernels/layernorm.cpp.
//
// LayerNorm (mode_i = 0):
//   pass 0 reads the row: per-lane signed sums; sum = the lane sums added; the rounded mean
//          m = floor((2 sum + n) / (2n)) (psm_divider on the magnitude, see "Mean" below).
//   pass 1 reads the row: per-lane uint64 sums of (x - m)^2; ssd = the lane sums + eps (1 if
//          that is 0); r = rsqrt_requant(ssd, gain_frac_bits) (psm_rsqrt).
//   pass 2 reads x, gain and bias word by word and writes
//          out[i] = saturate(requantize((x[i] - m) * gain[i], r, 32) + bias[i], 8).
// BatchNorm (mode_i = 1): pass 2 alone, with m = 0 and r = {rq_mult_i, rq_shift_i}; pass_o
// stays 0. The gain row is at gain_addr_i, the bias row right after it, at
// gain_addr_i + ceil(len / Lanes).
//
// Cycles for W = ceil(len / Lanes) words, from the cycle after start_i:
//   pass 0: W reads + 1 (last data) + 1 (reduce) + DivWidth + 1 (divide)  = W + DivWidth + 3
//   pass 1: W reads + 1 (last data) + 1 (reduce) + 95 + k (rsqrt)         = W + 97 + k
//           with k = (62 - bit_width(ssd)) / 2 in [0, 30]
//   pass 2: (read x, read gain, read bias, round, write) per word         = 5 * W
// DivWidth = LenWidth + 17 (33 for the default LenWidth 16). done_o pulses in the cycle after
// the last write, with busy_o already low.
module psm_layernorm #(
  parameter int unsigned Lanes     = 2,   // elements per scratchpad word
  parameter int unsigned AddrWidth = 16,  // scratchpad word address
  parameter int unsigned LenWidth  = 16   // row length in elements
) (
  input  logic                 clk_i,
  input  logic                 rst_i,             // synchronous, active high
  // Command: valid with the one-cycle start_i pulse; ignored while busy_o
  input  logic                 start_i,
  input  logic                 mode_i,            // 0: LayerNorm, 1: BatchNorm
  input  logic [AddrWidth-1:0] src_addr_i,        // first word of the input row (int16)
  input  logic [AddrWidth-1:0] gain_addr_i,       // gain row (int16), then the bias row (int16)
  input  logic [AddrWidth-1:0] dst_addr_i,        // first word of the output row (int8)
  input  logic [LenWidth-1:0]  len_i,             // elements in the row, >= 1
  input  logic [63:0]          eps_i,             // LayerNorm: unsigned, added to the ssd
  input  logic [3:0]           gain_frac_bits_i,  // LayerNorm: gain is Q.gain_frac_bits, 0..13
  input  logic [30:0]          rq_mult_i,         // BatchNorm: the step's multiplier
  input  logic [5:0]           rq_shift_i,        // BatchNorm: the step's shift, 0..63
  output logic                 busy_o,
  output logic                 done_o,            // one-cycle pulse after the last write
  output logic [1:0]           pass_o,            // LayerNorm 0, 1, 2; BatchNorm 0 (0 if idle)
  // Vector scratchpad port (docs/accelerator.md): read data arrives one cycle after the request
  output logic                 mem_req_o,
  output logic                 mem_we_o,
  output logic [AddrWidth-1:0] mem_addr_o,
  output logic [Lanes*32-1:0]  mem_wdata_o,       // int8, sign-extended
  output logic [Lanes-1:0]     mem_wmask_o,
  input  logic [Lanes*32-1:0]  mem_rdata_i        // int16 x, gain or bias, sign-extended
);
  // The row sum is below 2^15 * 2^LenWidth in magnitude; 2 sum + n needs two bits more, and
  // its magnitude (the divider's dividend) fits LenWidth + 17 unsigned bits.
  localparam int unsigned SumWidth = LenWidth + 16;
  localparam int unsigned NumWidth = LenWidth + 18;
  localparam int unsigned DivWidth = LenWidth + 17;

  typedef enum logic [3:0] {
    StIdle,        // wait for start_i
    StMeanRead,    // pass 0: read every word, add x into per-lane sums
    StMeanReduce,  // pass 0: sum the lanes; start the division for the mean
    StMeanDivide,  // pass 0: wait for the quotient; m
    StVarRead,     // pass 1: read every word, add (x - m)^2 into per-lane sums
    StVarReduce,   // pass 1: ssd = lane sums + eps; start the reciprocal square root
    StRsqrt,       // pass 1: wait for r = rsqrt_requant(ssd, gain_frac_bits)
    StNormReadX,   // pass 2: read one word of x
    StNormReadG,   // pass 2: read the same word of the gain; x arrives, d = x - m
    StNormReadB,   // pass 2: read the same word of the bias; the gain arrives, d * gain
    StNormRound,   // pass 2: the bias arrives; requantiser stage 2
    StNormWrite    // pass 2: write saturate(requantize(d * gain, r, 32) + bias, 8)
  } layernorm_state_e;

  layernorm_state_e state_d, state_q;

  // Ceil(n / Lanes): the words of an n-element row (a shift when Lanes is a power of two).
  function automatic logic [AddrWidth-1:0] words_of(input logic [LenWidth-1:0] n);
    logic [LenWidth:0] sum;
    sum      = {1'b0, n} + (LenWidth + 1)'(Lanes - 1);
    words_of = AddrWidth'(sum / (LenWidth + 1)'(Lanes));
  endfunction

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and row walk                                                                     //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The three passes walk the same row the same way: start_walk rewinds to word 0, and each
  // read (passes 0, 1) or write (pass 2) moves on by one word.
  logic                 mode_q;      // 1: BatchNorm
  logic [AddrWidth-1:0] src_q, gain_q, bias_addr_q, dst_q;
  logic [LenWidth-1:0]  len_q;
  logic [63:0]          eps_q;
  logic [3:0]           gain_frac_bits_q;
  logic [30:0]          bn_mult_q;
  logic [5:0]           bn_shift_q;
  logic [AddrWidth-1:0] word_q;      // word of the row being worked on (offset from each base)
  logic [LenWidth-1:0]  left_q;      // elements not yet requested (passes 0, 1) / written (2)
  logic                 rd_valid_q;  // mem_rdata_i holds the word requested last cycle
  logic [Lanes-1:0]     rd_mask_q;   // its lanes that belong to the row

  // Lanes of the word at word_q that belong to the row (the tail word may be partial).
  // The datapath below is evaluated only while the unit runs (active, or a command starts):
  // an idle unit costs the simulator one test per block instead of its whole datapath.
  logic active;
  assign active = (state_q != StIdle) || start_i;

  logic [Lanes-1:0]    word_mask;
  logic [LenWidth-1:0] left_after;  // left_q after one more word

  psm_row_tail #(.Lanes(Lanes), .LenWidth(LenWidth)) u_row_tail (
    .en_i        (active),
    .left_i      (left_q),
    .mask_o      (word_mask),
    .left_after_o(left_after)
  );

  logic start_cmd;     // accept a command this cycle
  logic start_walk;    // rewind to the start of the row (start of each pass)
  logic advance_walk;  // one more word requested (passes 0, 1) or written (pass 2)
  logic issue_read;    // a read request goes out this cycle

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Lanes: sums, squared deviations, normalisation                                           //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic signed [15:0]  mean_q;    // m (LayerNorm) or 0 (BatchNorm), int16
  logic [30:0]         rq_mult;   // r (LayerNorm, from psm_rsqrt) or the BatchNorm step
  logic [5:0]          rq_shift;
  logic [30:0]         rsqrt_mult;
  logic [5:0]          rsqrt_shift;
  logic [Lanes*64-1:0] lane_acc;
  logic [Lanes*32-1:0] lane_out;

  assign rq_mult  = mode_q ? bn_mult_q : rsqrt_mult;
  assign rq_shift = mode_q ? bn_shift_q : rsqrt_shift;

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic               use_lane;  // this lane of mem_rdata_i is a row element
    logic signed [15:0] rd;        // this lane of mem_rdata_i as int16 (x, gain or bias)
    logic signed [16:0] dev;       // x - m, |dev| <= 65535 (pass 1; pass 2 from x)
    logic signed [33:0] dev_sq;    // (x - m)^2 < 2^32
    logic [63:0]        acc_add;   // what this lane adds to its sum this cycle
    logic [63:0]        acc_q;     // pass 0: sum of x (two's complement, |sum| < 2^31 for
                                   // 16-bit lengths); pass 1: sum of (x - m)^2 (exact; wraps
                                   // mod 2^64 only beyond 2^32 elements, like the golden
                                   // uint64)
    logic signed [16:0] dev_q;     // x - m, held while the gain is read (pass 2)
    logic signed [15:0] bias_q;    // held for the write (pass 2)
    logic signed [31:0] dg;        // d * gain: |dg| <= 65535 * 32768 < 2^31, exact
    logic signed [31:0] scaled;    // requantize(d * gain, r, 32)
    logic signed [32:0] biased;    // scaled + bias: |scaled| <= 2^15 (1 + 2^-28) (numerics)
    logic signed [7:0]  y;

    assign use_lane = active && rd_valid_q && rd_mask_q[l];
    assign rd       = mem_rdata_i[l*32 +: 16];
    always_comb begin  // read in passes 1 and 2 only
      dev = '0;
      if (active) dev = 17'(rd) - 17'(mean_q);
    end

    // Pass 0 adds x, pass 1 adds (x - m)^2; 0 on lanes outside the row and in other states.
    always_comb begin
      dev_sq  = '0;
      acc_add = '0;
      if (use_lane && state_q == StMeanRead) acc_add = 64'(rd);
      if (use_lane && state_q == StVarRead) begin
        dev_sq  = 34'(dev) * 34'(dev);
        acc_add = 64'(dev_sq[31:0]);
      end
    end

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (active) begin
        if (start_walk)             acc_q  <= '0;
        else if (use_lane)          acc_q  <= acc_q + acc_add;
        if (state_q == StNormReadG) dev_q  <= dev;
        if (state_q == StNormRound) bias_q <= rd;
      end
    end

    // The requantiser takes d * gain in StNormReadB (the gain is on mem_rdata_i); its result
    // arrives two cycles later, in StNormWrite.
    assign dg = (state_q == StNormReadB && use_lane) ? 32'(dev_q) * 32'(rd) : '0;

    psm_requant u_requant (
      .clk_i,
      .en_i      (state_q == StNormReadB),
      .x_i       (dg),
      .bias_i    (26'sd0),  // only the matmul read-out adds a bias
      .mult_i    (rq_mult),
      .shift_i   (rq_shift),
      .out_bits_i(6'd32),
      .y_o       (scaled)
    );

    // The bias is an integer, so adding it after the one rounding adds no second rounding.
    // Only the write uses the result (0 in the other states).
    always_comb begin
      biased = '0;
      y      = '0;
      if (state_q == StNormWrite) begin
        biased = 33'(scaled) + 33'(bias_q);
        if (biased > 33'sd127)       y = 8'sd127;
        else if (biased < -33'sd128) y = -8'sd128;
        else                         y = biased[7:0];
      end
    end

    logic [31:0] out;  // read only in StNormWrite
    always_comb begin
      out = '0;
      if (state_q == StNormWrite) out = {{24{y[7]}}, y};
    end
    assign lane_acc[l*64 +: 64] = acc_q;
    assign lane_out[l*32 +: 32] = out;

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

  psm_divider #(
    .Width(DivWidth)
  ) u_divider (
    .clk_i,
    .rst_i,
    .start_i   (div_start),
    .dividend_i(div_dividend),
    .divisor_i (div_divisor),
    .busy_o    (div_busy),
    .done_o    (div_done),
    .quotient_o(div_quotient)
  );

  // ssd = sum of squared deviations + eps, exact in uint64; 1 if it is 0 (a constant row with
  // eps = 0: every d is 0 and the output is the bias).
  logic [63:0] row_ssd;
  logic [63:0] rsqrt_x;
  logic        rsqrt_start;
  logic        rsqrt_busy;
  logic        rsqrt_done;

  always_comb begin  // only StVarReduce uses it (0 in the other states)
    row_ssd = '0;
    rsqrt_x = '0;
    if (state_q == StVarReduce) begin
      row_ssd = row_acc + eps_q;
      rsqrt_x = (row_ssd == 64'd0) ? 64'd1 : row_ssd;
    end
  end

  psm_rsqrt u_rsqrt (
    .clk_i,
    .rst_i,
    .start_i      (rsqrt_start),
    .x_i          (rsqrt_x),
    .extra_shift_i({2'b00, gain_frac_bits_q}),
    .busy_o       (rsqrt_busy),
    .done_o       (rsqrt_done),
    .mult_o       (rsqrt_mult),
    .shift_o      (rsqrt_shift)
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic done_d;

  always_comb begin
    state_d      = state_q;
    start_cmd    = 1'b0;
    start_walk   = 1'b0;
    advance_walk = 1'b0;
    issue_read   = 1'b0;
    div_start    = 1'b0;
    rsqrt_start  = 1'b0;
    done_d       = 1'b0;
    mem_req_o    = 1'b0;
    mem_we_o     = 1'b0;
    mem_addr_o   = src_q + word_q;
    mem_wdata_o  = '0;
    mem_wmask_o  = '0;
    unique case (state_q)
      // Wait for a command; the datapath latches it. BatchNorm goes straight to pass 2.
      StIdle: begin
        if (start_i) begin
          start_cmd  = 1'b1;
          start_walk = 1'b1;
          state_d    = mode_i ? StNormReadX : StMeanRead;
        end
      end
      // One read per cycle until the row is requested; the cycle after the last request
      // receives the last word.
      StMeanRead: begin
        if (left_q != '0) begin
          issue_read   = 1'b1;
          advance_walk = 1'b1;
        end else begin
          state_d = StMeanReduce;
        end
      end
      // The lane sums are final: start the division.
      StMeanReduce: begin
        div_start = 1'b1;
        state_d   = StMeanDivide;
      end
      // The quotient is ready: m is latched, rewind for pass 1 (which clears the lane sums).
      StMeanDivide: begin
        if (div_done) begin
          start_walk = 1'b1;
          state_d    = StVarRead;
        end
      end
      // As StMeanRead.
      StVarRead: begin
        if (left_q != '0) begin
          issue_read   = 1'b1;
          advance_walk = 1'b1;
        end else begin
          state_d = StVarReduce;
        end
      end
      // The squared deviations are summed: start the reciprocal square root, rewind for pass 2.
      StVarReduce: begin
        rsqrt_start = 1'b1;
        start_walk  = 1'b1;
        state_d     = StRsqrt;
      end
      // Wait for r.
      StRsqrt: begin
        if (rsqrt_done) state_d = StNormReadX;
      end
      StNormReadX: begin
        issue_read = 1'b1;
        state_d    = StNormReadG;
      end
      StNormReadG: begin
        issue_read = 1'b1;
        mem_addr_o = gain_q + word_q;
        state_d    = StNormReadB;
      end
      StNormReadB: begin
        issue_read = 1'b1;
        mem_addr_o = bias_addr_q + word_q;
        state_d    = StNormRound;
      end
      StNormRound: state_d = StNormWrite;
      // Write the int8 results of the row's lanes.
      StNormWrite: begin
        mem_req_o    = 1'b1;
        mem_we_o     = 1'b1;
        mem_addr_o   = dst_q + word_q;
        mem_wdata_o  = lane_out;
        mem_wmask_o  = word_mask;
        advance_walk = 1'b1;
        if (left_after == '0) begin
          done_d  = 1'b1;
          state_d = StIdle;
        end else begin
          state_d = StNormReadX;
        end
      end
      default: state_d = StIdle;
    endcase
    if (issue_read) mem_req_o = 1'b1;
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      state_q    <= StIdle;
      word_q     <= '0;
      left_q     <= '0;
      rd_valid_q <= 1'b0;
      done_o     <= 1'b0;
    end else begin
      state_q    <= state_d;
      rd_valid_q <= issue_read;
      done_o     <= done_d;
      if (start_walk) begin
        word_q <= '0;
        left_q <= start_cmd ? len_i : len_q;
      end else if (advance_walk) begin
        word_q <= word_q + AddrWidth'(1);
        left_q <= left_after;
      end
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start_cmd) begin
      mode_q           <= mode_i;
      src_q            <= src_addr_i;
      gain_q           <= gain_addr_i;
      bias_addr_q      <= gain_addr_i + words_of(len_i);
      dst_q            <= dst_addr_i;
      len_q            <= len_i;
      eps_q            <= eps_i;
      gain_frac_bits_q <= gain_frac_bits_i;
      bn_mult_q        <= rq_mult_i;
      bn_shift_q       <= rq_shift_i;
    end
    if (start_cmd)                                mean_q    <= '0;  // BatchNorm: d = x
    else if (state_q == StMeanDivide && div_done) mean_q    <= mean_full[15:0];
    if (state_q == StMeanReduce)                  num_neg_q <= mean_num[NumWidth-1];
    if (issue_read)                               rd_mask_q <= word_mask;
  end

  assign busy_o = (state_q != StIdle);
  always_comb begin
    unique case (state_q)
      StVarRead, StVarReduce, StRsqrt: pass_o = 2'd1;
      StNormReadX, StNormReadG, StNormReadB, StNormRound, StNormWrite:
        pass_o = mode_q ? 2'd0 : 2'd2;
      default: pass_o = 2'd0;
    endcase
  end

  // The sub-units' busy flags are implied by the states that wait for them; the top of
  // row_acc is the sign extension of the row sum in pass 0.
  logic unused_bits;
  assign unused_bits = ^{div_busy, rsqrt_busy, row_acc[63:SumWidth]};

`ifndef SYNTHESIS
  LenNonZero_A : assert property (@(posedge clk_i) disable iff (rst_i)
      start_cmd |-> len_i != '0)
    else $error("psm_layernorm: len_i must be >= 1");
  FracBitsInRange_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (start_cmd && !mode_i) |-> gain_frac_bits_i <= 4'd13)
    else $error("psm_layernorm: gain_frac_bits_i = %0d > 13", gain_frac_bits_i);
  MeanFitsInt16_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (state_q == StMeanDivide && div_done) |->
          mean_full == DivWidth'($signed(mean_full[15:0])))
    else $error("psm_layernorm: mean %0d outside int16", mean_full);
`endif
endmodule : psm_layernorm
