// SPDX-License-Identifier: Apache-2.0
// Softmax over one row of Q.10 int32 logits in the vector scratchpad, in three passes, or in
// two with online_i (online max and sum, Milakov & Gimelshein 2018, Alg. 3).
// Golden model: passim::kernels::softmax_i16() (three passes) and
// passim::kernels::softmax_online_i16() with lanes = Lanes (online) in
// runtime/src/kernels/softmax.cpp.
//
// Three passes (online_i = 0):
// Pass 0 reads the row: per-lane maxima, then m = max over the lanes.
// Pass 1 reads the row: e = iexp_q10(max(x - m, -2^20)), per-lane uint64 sums, then
//        sum = the lane sums added, and recip = floor(kProbOne * 2^32 / sum) (psm_divider).
// Pass 2 reads the row again, recomputes e and writes min(kProbOne, (e * recip + 2^31) >> 32)
//        as int16 values, sign-extended to 32 bits, to the destination row.
// Online (online_i = 1):
// Pass 0 reads the row once: each lane keeps a running maximum m_l and sum s_l; an element
//        above m_l rescales the sum, s_l = exp_rescale(s_l, iexp_q10(m_l - x)) + kExpOne, any
//        other adds iexp_q10(x - m_l). Then m = max over the lanes, and the lane sums, each
//        rescaled to m, are added: sum = sum_l exp_rescale(s_l, iexp_q10(m_l - m)); recip.
// Pass 1 is pass 2 of the three-pass mode.
// The row never leaves the scratchpad: the exponentials are recomputed instead of stored.
//
// Cycles for W = ceil(len / Lanes) words, from the cycle after start_i:
//   three passes: pass 0: W reads + 1 (last data) + 1 (reduce)          = W + 2
//                 pass 1: W reads + 1 (last data) + 1 (reduce) + 33 (divide) = W + 35
//                 pass 2: (read, write) per word                         = 2 * W
//   online:       pass 0: W reads + 1 (last data) + 1 (max) + 1 (sum) + 33 (divide) = W + 36
//                 pass 1: (read, write) per word                         = 2 * W
// done_o pulses in the cycle after the last write, with busy_o already low.
// Ports: the vector-unit groups `PSM_VEC_* of rtl/common/psm_vector_port.svh; scratchpad
// data: int32 Q.10 logits in, int16 Q0.15 probabilities out, each sign-extended to 32 bits.
`include "psm_vector_port.svh"
module psm_softmax #(
  `PSM_VEC_PARAMS
) (
  `PSM_VEC_START_PORTS,
  input  logic [AddrWidth-1:0] src_addr_i,  // first word of the input row (int32 Q.10)
  input  logic [AddrWidth-1:0] dst_addr_i,  // first word of the output row (may equal src)
  input  logic [LenWidth-1:0]  len_i,       // elements in the row, >= 1 (online: < 2^16)
  input  logic                 online_i,    // 1: online max and sum (two passes)
  `PSM_VEC_DONE_PORTS,
  output logic [1:0]           pass_o,      // current pass 0, 1, 2 (online 0, 1; 0 when idle)
  `PSM_VEC_MEM_PORTS
);
  localparam logic [31:0] ProbOne     = 32'd32767;  // kProbOne
  localparam int unsigned RecipBits   = 32;         // kSoftmaxRecipBits
  // recip < 2^26 because sum >= kExpOne > 2^21 (the row maximum contributes exp(0)).
  localparam int unsigned RecipWidth  = 26;
  localparam int unsigned DivWidth    = 64;
  localparam logic signed [32:0] DiffMin = -33'sd1048576;  // -2^20: exp below it is 0
  localparam logic [21:0] ExpOne      = 22'd2924389;  // kExpOne = iexp_q10(0)
  localparam int unsigned SumWidth    = 38;  // kExpSumBits: a row sum is below 65535 * kExpOne

  // Online mode: StOnlineRead, StMaxReduce, StSumReduce, StRecip are its pass 0.
  typedef enum logic [3:0] {
    StIdle,        // wait for start_i
    StMaxRead,     // pass 0: read every word, track per-lane maxima
    StMaxReduce,   // pass 0: m = max of the lane maxima
    StSumRead,     // pass 1: read every word, add exponentials into per-lane sums
    StSumReduce,   // pass 1: sum = lane sums (online: rescaled to m) added; start the divider
    StRecip,       // pass 1: wait for recip = kProbOne * 2^32 / sum
    StNormRead,    // pass 2: read one word
    StNormWrite,   // pass 2: its data is here; write the probabilities
    StOnlineRead   // online pass 0: read every word, per-lane running maxima and sums
  } softmax_state_e;

  softmax_state_e state_d, state_q;

  always_ff @(posedge clk_i) state_q <= rst_i ? StIdle : state_d;  // control: reset

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and row walk                                                                    //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The datapath below is evaluated only while the unit runs (active, or a command starts):
  // an idle unit costs the simulator one test per block instead of its whole datapath.
  logic active;
  assign active = (state_q != StIdle) || start_i;

  // The command, sampled when it starts.
  logic [AddrWidth-1:0] src_q, dst_q;
  logic                 online_q;  // this row runs in online mode

  // Every pass walks the row from word 0: one word per read (passes 0, 1) or per write
  // (pass 2); rd_mask: the lanes of the word read last cycle inside the row (0 without one).
  logic                 start, walk_next, walk_rewind, issue_read;
  logic [AddrWidth-1:0] word, row_words;     // a command is one row, and the mask of the word
  logic [Lanes-1:0]     word_mask, rd_mask;  // written is rd_mask: row_words, word_mask unused
  logic                 last_word, row_end;

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start) {src_q, dst_q, online_q} <= {src_addr_i, dst_addr_i, online_i};
  end

  psm_row_walk_one #(.Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth)) u_walk (
    .clk_i, .rst_i, .start_i, .busy_i(busy_o), .len_i, .start_o(start), .next_i(walk_next),
    .rewind_i(walk_rewind), .read_i(issue_read), .step_o(word), .row_words_o(row_words),
    .mask_o(word_mask), .last_step_o(last_word), .row_end_o(row_end), .rd_mask_o(rd_mask)
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Lanes: maxima, exponentials, sums, probabilities                                        //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic signed [31:0]     max_q;   // row maximum m, valid from pass 1
  logic [RecipWidth-1:0]  recip;   // from the divider, valid in pass 2
  logic [Lanes*32-1:0]    lane_max;
  logic [Lanes*64-1:0]    lane_sum;
  logic [Lanes*32-1:0]    lane_prob;

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic               use_lane;  // this lane of mem_rdata_i is a row element
    logic signed [31:0] x;
    logic               x_above;   // online pass 0: x is a new maximum of this lane
    logic               use_exp;   // this state and lane need e
    logic signed [32:0] diff;      // x - m (online: see below), exact in 33 bits, <= 0
    logic signed [32:0] diff_clamped;
    logic [21:0]        e;         // iexp_q10(max(diff, -2^20)), <= kExpOne
    logic [SumWidth-1:0] rescaled; // online: lsum_q * exp(diff), exp_rescale
    logic [47:0]        prod;      // e * recip < 2^22 * 2^26
    logic [47:0]        rounded;   // (prod + 2^31) >> 32
    logic [15:0]        prob;      // min(kProbOne, rounded), Q0.15
    logic signed [31:0] lmax_q;    // this lane's maximum so far (pass 0)
    logic [63:0]        lsum_q;    // this lane's sum of exponentials (pass 1, online pass 0);
                                   // exact, no wrap (< 2^SumWidth)

    assign x = mem_rdata_i[l*32 +: 32];

    // The difference fed to i-exp: x - m in three-pass pass 1 and in every normalising pass;
    // online pass 0: -|x - m_l| (m_l - x rescales the sum when x is a new maximum); online
    // lane combine: m_l - m.
    always_comb begin
      use_lane     = 1'b0;
      x_above      = 1'b0;
      use_exp      = 1'b0;
      diff         = '0;
      diff_clamped = '0;
      if (active) begin
        use_lane = rd_mask[l];
        x_above  = x > lmax_q;
        use_exp  = (use_lane && (state_q == StSumRead || state_q == StNormWrite ||
                                 state_q == StOnlineRead)) ||
                   (state_q == StSumReduce && online_q);
        diff = 33'(x) - 33'(max_q);
        if (state_q == StOnlineRead) begin
          diff = x_above ? 33'(lmax_q) - 33'(x) : 33'(x) - 33'(lmax_q);
        end else if (state_q == StSumReduce) begin
          diff = 33'(lmax_q) - 33'(max_q);
        end
        diff_clamped = (diff < DiffMin) ? DiffMin : diff;
      end
    end

    // The exponential, the rescaled sum and the probability are evaluated only on the lanes
    // and in the states that use them; elsewhere they are 0.
    always_comb begin
      {e, rescaled, prod, rounded, prob} = '0;
      if (use_exp) begin
        e = psm_iexp_pkg::iexp_q10(diff_clamped[31:0]);
        if (state_q == StOnlineRead || state_q == StSumReduce) begin
          rescaled = psm_iexp_pkg::exp_rescale(lsum_q[SumWidth-1:0], e);
        end
        if (state_q == StNormWrite) begin
          prod    = 48'(e) * 48'(recip);
          rounded = (prod + (48'd1 << (RecipBits - 1))) >> RecipBits;
          prob    = (rounded > 48'(ProbOne)) ? ProbOne[15:0] : rounded[15:0];
        end
      end
    end

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (active) begin
        if (state_q == StIdle) lmax_q <= 32'sh8000_0000;  // INT32_MIN (start_i)
        else if ((state_q == StMaxRead || state_q == StOnlineRead) && use_lane && x_above) begin
          lmax_q <= x;
        end
        if (state_q == StIdle)                           lsum_q <= '0;  // online pass 0
        else if (state_q == StMaxReduce && !online_q)    lsum_q <= '0;
        else if (state_q == StSumRead && use_lane)       lsum_q <= lsum_q + 64'(e);
        else if (state_q == StOnlineRead && use_lane) begin
          lsum_q <= x_above ? 64'(rescaled) + 64'(ExpOne) : lsum_q + 64'(e);
        end
      end
    end

    assign lane_max[l*32 +: 32] = lmax_q;
    // The combine adds the lane sums as they are (three passes) or rescaled to m (online);
    // both are read only in StSumReduce.
    logic [63:0] sum_out;
    logic [31:0] prob_out;
    always_comb begin
      sum_out  = '0;
      prob_out = '0;
      if (state_q == StSumReduce) sum_out = online_q ? 64'(rescaled) : lsum_q;
      if (state_q == StNormWrite) prob_out = {{16{prob[15]}}, prob};
    end
    assign lane_sum[l*64 +: 64]  = sum_out;
    assign lane_prob[l*32 +: 32] = prob_out;

    // diff_clamped is in [-2^20, 0] on every lane that is used, so bit 32 is a copy of bit 31.
    logic unused_diff;
    assign unused_diff = diff_clamped[32];

`ifndef SYNTHESIS
    DiffNonPositive_A : assert property (@(posedge clk_i) disable iff (rst_i)
        use_exp |-> diff <= 33'sd0)
      else $error("psm_softmax: lane %0d: x %0d above the row maximum %0d", l, x, max_q);
    SumFitsRescale_A : assert property (@(posedge clk_i) disable iff (rst_i)
        (use_exp && online_q) |-> lsum_q[63:SumWidth] == '0)
      else $error("psm_softmax: lane %0d: sum %0d too wide to rescale", l, lsum_q);
`endif
  end : g_lane

  // Reductions over the lanes (combinational; registered by the FSM states that use them).
  logic signed [31:0] row_max;
  logic [63:0]        row_sum;  // exact: a row sum is below 2^LenWidth * 2^22
  // Only evaluated in the state that registers each of them.
  always_comb begin
    row_max = lane_max[31:0];
    row_sum = '0;
    if (state_q == StMaxReduce) begin
      for (int l = 0; l < Lanes; l++) begin
        if ($signed(lane_max[l*32 +: 32]) > row_max) row_max = lane_max[l*32 +: 32];
      end
    end
    if (state_q == StSumReduce) begin
      for (int l = 0; l < Lanes; l++) row_sum = row_sum + lane_sum[l*64 +: 64];
    end
  end

  // recip = floor(kProbOne * 2^32 / sum).
  logic                div_start;
  logic                div_busy;
  logic                div_done;
  logic [DivWidth-1:0] div_quotient;

  psm_divider #(.Width(DivWidth)) u_divider (
    .clk_i, .rst_i, .start_i(div_start), .dividend_i(DivWidth'(ProbOne) << RecipBits),
    .divisor_i(row_sum), .busy_o(div_busy), .done_o(div_done), .quotient_o(div_quotient)
  );
  assign recip = div_quotient[RecipWidth-1:0];

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Passes 0 and 1 (online: pass 0) request one word per cycle until the row is requested; the
  // cycle after the last request receives the last word. The normalising pass reads a word and
  // writes it back.
  logic row_read;    // a read pass that still has words to request
  logic norm_write;  // StNormWrite: the probabilities of the word read in StNormRead
  assign row_read   = (state_q == StMaxRead || state_q == StSumRead || state_q == StOnlineRead)
                      && !row_end;
  assign norm_write = (state_q == StNormWrite);

  always_comb begin
    state_d = state_q;
    unique case (state_q)
      StIdle:       if (start_i) state_d = online_i ? StOnlineRead : StMaxRead;
      StMaxRead:    if (row_end) state_d = StMaxReduce;
      StOnlineRead: if (row_end) state_d = StMaxReduce;
      StMaxReduce:  state_d = online_q ? StSumReduce : StSumRead;
      StSumRead:    if (row_end) state_d = StSumReduce;
      StSumReduce:  state_d = StRecip;
      StRecip:      if (div_done) state_d = StNormRead;
      StNormRead:   state_d = StNormWrite;
      StNormWrite:  state_d = last_word ? StIdle : StNormRead;
      default:      state_d = StIdle;
    endcase
  end

  // Each pass starts at word 0: rewind when m is registered (not online) and when the divider
  // starts.
  assign walk_rewind = (state_q == StMaxReduce && !online_q) || (state_q == StSumReduce);
  assign walk_next   = row_read || norm_write;
  assign issue_read  = row_read || (state_q == StNormRead);
  assign div_start   = (state_q == StSumReduce);

  // The scratchpad port (lane_prob is 0 but in StNormWrite).
  assign mem_req_o   = issue_read || norm_write;
  assign mem_we_o    = norm_write;
  assign mem_addr_o  = (norm_write ? dst_q : src_q) + word;
  assign mem_wdata_o = lane_prob;
  assign mem_wmask_o = norm_write ? rd_mask : '0;
  assign mem_wsat_o  = '0;  // p <= 1.0 by construction: nothing to clamp

  always_ff @(posedge clk_i) begin  // control: reset
    done_o <= !rst_i && norm_write && last_word;
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (state_q == StMaxReduce) max_q <= row_max;
  end

  assign busy_o = (state_q != StIdle);
  always_comb begin
    unique case (state_q)
      StSumRead, StSumReduce, StRecip: pass_o = online_q ? 2'd0 : 2'd1;
      StNormRead, StNormWrite:         pass_o = online_q ? 2'd1 : 2'd2;
      default:                         pass_o = 2'd0;
    endcase
  end

  // The quotient is below 2^RecipWidth (asserted); busy is implied by StRecip; a command is
  // one row.
  logic unused_bits;
  assign unused_bits = ^{div_quotient[DivWidth-1:RecipWidth], div_busy, row_words, word_mask};

`ifndef SYNTHESIS
  OnlineLenFits_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (state_q == StIdle && start_i && online_i) |-> 32'(len_i) < 32'd65536)
    else $error("psm_softmax: online rows hold at most 65535 elements");
  RecipFits_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (state_q == StRecip && div_done) |-> div_quotient[DivWidth-1:RecipWidth] == '0)
    else $error("psm_softmax: recip %0d does not fit %0d bits", div_quotient, RecipWidth);
`endif
endmodule : psm_softmax
