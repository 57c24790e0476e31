// SPDX-License-Identifier: Apache-2.0
// Attention scores (ATTN_SCORE) and the weighted sum of values (ATTN_VALUE) for one head,
// from the KV cache rows in the vector scratchpad.
// Golden model: the ATTN_SCORE / ATTN_VALUE cases of passim::CpuDevice::vector_op() in
// runtime/src/device/cpu_device.cpp (the two halves of passim::kernels::attention_i8() in
// runtime/src/kernels/attn.cpp).
//
//   ATTN_SCORE s[t]   = requantize(sum_i q[i] * k_t[i], rq, 32)   for t < rows, i < len
//   ATTN_VALUE out[i] = requantize(sum_t p[t] * v_t[i], rq, 8)    for i < len, t < rows
// q (one row of len) and p (one row of rows) are at src_addr; the cache rows k_t / v_t (rows
// rows of len) at src2_addr + t * ceil(len / Lanes). Every operand is the low 16 bits of its
// lane (12-bit q, k; int16 Q0.15 p; int8 v); the products are exact int32 and the sums wrap
// like the golden uint32 accumulators. The single Requant step rq is read through the
// parameter port from param_addr at the start of the command.
//
// ATTN_SCORE walks position t, then the words w of q and k_t, and streams: one read per
// cycle, a score leaves the requantiser 4 cycles after the read of its last k word, and Lanes
// scores make one output word, written in the cycle the word's last score leaves (the reads
// wait that cycle). A q row of one word (len <= Lanes) is read once and kept. ATTN_VALUE walks
// output word w, then position t: each lane accumulates p[t] * v_t[i]; the p row is read once
// per output word, every V word exactly once.
//
// Cycles, W = ceil(len / Lanes), P = ceil(rows / Lanes), from the cycle after start_i:
//   ATTN_SCORE  5 + [W = 1] + rows * c + N     c = 1 if W = 1 (q kept), else 2 W (q and k
//                                              words); N = the output words but the last
//                                              whose write takes the port before the last
//                                              read (each delays the reads by one cycle):
//                                              P - 1 when W > 1 (rtl/attn/README.md)
//   ATTN_VALUE  1 (param) + W * (rows + P + 4)  (one read per position, one per p word, sum,
//                                              round x2, write)
// done_o pulses in the cycle after the last write, with busy_o already low.
// Ports: the vector-unit groups `PSM_VEC_* of rtl/common/psm_vector_port.svh; scratchpad
// data: 16-bit operands in, int32 scores or int8 out, each sign-extended to 32 bits.
`include "psm_vector_port.svh"
module psm_attn #(
  `PSM_VEC_PARAMS,
  parameter int unsigned ParamAddrWidth = 12  // parameter memory entry address
) (
  `PSM_VEC_START_PORTS,
  input  psm_pkg::opcode_e          op_i,          // OpAttnScore or OpAttnValue
  input  logic [AddrWidth-1:0]      src_addr_i,    // q (12-bit, len) or p (Q0.15, rows)
  input  logic [AddrWidth-1:0]      src2_addr_i,   // K or V cache: rows rows of len
  input  logic [AddrWidth-1:0]      dst_addr_i,    // scores (int32, rows) or out (int8, len)
  input  logic [ParamAddrWidth-1:0] param_addr_i,  // the Requant step of this head
  input  logic [LenWidth-1:0]       len_i,         // head_size, >= 1
  input  logic [LenWidth-1:0]       rows_i,        // cached positions t_len, >= 1
  `PSM_VEC_DONE_PORTS,
  output logic [1:0]                pass_o,        // always 0: one pass per cached position
  `PSM_VEC_PRM_PORTS,
  `PSM_VEC_MEM_PORTS
);
  localparam int unsigned LaneIdxWidth = (Lanes > 1) ? $clog2(Lanes) : 1;

  typedef enum logic [3:0] {
    StIdle,      // wait for start_i
    StParam,     // request the Requant step (it arrives during the next state)
    StScoreQ,    // SCORE: request word w of q (W > 1, or the first position)
    StScoreK,    // SCORE: request word w of k_t
    StScoreTail, // SCORE: every k word is read; the last scores leave the pipeline
    StValueP,    // VALUE: request the p word holding p[t] (when t % Lanes == 0)
    StValueV,    // VALUE: request word w of v_t; the p word or v_(t-1) arrives
    StSum,       // VALUE: the last v word arrives and is accumulated
    StRound,     // VALUE: the requantisers take the sums
    StRound2,    // VALUE: requantiser stage 2
    StValueWrite // VALUE: out[w] arrives: write it, tail lanes masked
  } attn_state_e;

  attn_state_e state_d, state_q;

  always_ff @(posedge clk_i) state_q <= rst_i ? StIdle : state_d;  // control: reset
  attn_state_e read_state_q;  // the state of the previous cycle: names the read data arriving

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and walks                                                                        //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The command, sampled when it starts.
  logic                      is_score;  // ATTN_SCORE (else ATTN_VALUE)
  logic [AddrWidth-1:0]      src_q, src2_q, dst_q;
  logic [ParamAddrWidth-1:0] prm_base_q;

  // The walk's rows are the positions t (the cache rows k_t / v_t), its words the words w of a
  // row of len (q and k_t, or v_t and out). ATTN_SCORE walks row by row; ATTN_VALUE walks word
  // by word, and down the column of V for each word. The masks are evaluated only while busy.
  logic                 start_cmd, walk_next, walk_rewind, walk_row_next, walk_row_rewind;
  logic                 k_read;     // SCORE: a word of k_t is requested
  logic [AddrWidth-1:0] word;       // w
  logic [AddrWidth-1:0] pos_off;    // t * W: offset of k_t / v_t from src2
  logic [Lanes-1:0]     word_mask;  // lanes of word w inside len
  logic                 last_word, last_pos;
  logic [Lanes-1:0]     k_mask;     // SCORE: lanes of the arriving k word inside len
  logic [AddrWidth-1:0] row_words;  // not needed: pos_off is the row's offset
  logic                 row_end;

  psm_row_walk #(.Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth), .Reads(1'b1)) u_walk (
    .clk_i, .rst_i, .busy_i(busy_o), .start_i, .len_i, .rows_i, .start_o(start_cmd),
    .next_i(walk_next), .rewind_i(walk_rewind), .row_next_i(walk_row_next),
    .row_rewind_i(walk_row_rewind), .read_i(k_read), .step_o(word), .row_off_o(pos_off),
    .row_words_o(row_words), .mask_o(word_mask), .last_step_o(last_word), .last_row_o(last_pos),
    .row_end_o(row_end), .rd_mask_o(k_mask)
  );

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start_cmd) begin
      {src_q, src2_q, dst_q, prm_base_q} <= {src_addr_i, src2_addr_i, dst_addr_i, param_addr_i};
      is_score <= op_i == psm_pkg::OpAttnScore;
    end
  end

  // Where t sits in a row of rows elements (p, or the scores).
  logic [LaneIdxWidth-1:0] pos_lane_q;  // t % Lanes
  logic [AddrWidth-1:0]    pos_word_q;  // t / Lanes

  logic last_lane;
  assign last_lane = (32'(pos_lane_q) == Lanes - 1);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Lanes: products, sums, requantisers                                                      //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [Lanes*16-1:0]     rd16;        // the low 16 bits of each lane of mem_rdata_i
  logic [Lanes*16-1:0]     q_q;         // SCORE: word w of q
  logic [Lanes*16-1:0]     p_q;         // VALUE: the p word holding p[t]
  logic [LaneIdxWidth-1:0] v_lane_q;    // VALUE: lane of p[t] for the arriving v_t word
  logic [30:0]             rq_mult_q;   // the Requant step of the command
  logic [5:0]              rq_shift_q;
  logic [Lanes*32-1:0]     prod;        // per lane: q * k or p[t] * v, exact int32
  logic signed [31:0]      dot;         // SCORE: sum of the products of one word, wraps
  logic signed [31:0]      score_acc_q; // SCORE: q . k_t so far, wraps like the golden uint32
  logic [Lanes*32-1:0]     lane_out;    // requantiser outputs, sign-extended
  logic [Lanes-1:0]        lane_sat;    // ... clamped (to 32 bits for a score, else 8)
  logic                    acc_clear;   // VALUE: zero the accumulators (start of a word)

  // The SCORE pipeline, stage by stage: a k word arrives (with its flags: the first and last
  // word of k_t, the last position), q . k_t is complete, requantiser stages 1 and 2 (s[t] on
  // lane 0's output). A write takes the port in the cycle the last score of an output word
  // leaves; the reads wait that cycle.
  logic k_rd_q, k_first_q, k_last_q, k_end_q;    // a k word arrives: first / last of k_t; last t
  logic q_rd_q;                                   // a q word arrives
  logic score_done_q, score_end_q;                // score_acc_q holds q . k_t (end: last t)
  logic score_v1_q, score_end1_q, score_v2_q, score_end2_q;
  logic score_wr;                                 // write the output word this cycle

  logic signed [15:0] p_t;  // p[t] for the arriving v_t word
  assign p_t = p_q[v_lane_q*16 +: 16];

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [15:0] a;              // q[i] (SCORE) or p[t] (VALUE)
    logic signed [15:0] b;              // k_t[i] or v_t[i], arriving on mem_rdata_i
    logic signed [31:0] acc_q;          // VALUE: sum_t p[t] * v_t[i], wraps like the golden
    logic signed [31:0] rq_x;
    logic signed [31:0] rq_y;

    logic signed [31:0] p;              // a * b, |a * b| <= 2^30
    assign rd16[l*16 +: 16] = mem_rdata_i[l*32 +: 16];
    assign b                = mem_rdata_i[l*32 +: 16];
    always_comb begin
      a = '0;
      p = '0;
      if (busy_o) begin
        a = is_score ? q_q[l*16 +: 16] : p_t;
        p = 32'(a) * 32'(b);
      end
    end
    assign prod[l*32 +: 32] = p;

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (busy_o) begin
        if (acc_clear)                     acc_q <= '0;
        else if (read_state_q == StValueV) acc_q <= acc_q + p;
      end
    end

    // SCORE uses lane 0 for the one score per position.
    if (l == 0) begin : g_score
      assign rq_x = is_score ? score_acc_q : acc_q;
    end else begin : g_value
      assign rq_x = acc_q;
    end

    // VALUE: inputs are sampled in StRound, the result arrives in StValueWrite. SCORE (lane
    // 0): a finished dot product is sampled with score_done_q, two cycles before score_v2_q.
    logic rq_en;
    if (l == 0) begin : g_en_score
      assign rq_en = (state_q == StRound) || score_done_q;
    end else begin : g_en_value
      assign rq_en = (state_q == StRound);
    end
    psm_requant u_requant (.clk_i, .en_i(rq_en), .x_i(rq_x), .bias_i(26'sd0),
                           .mult_i(rq_mult_q), .shift_i(rq_shift_q),
                           .out_bits_i(is_score ? 6'd32 : 6'd8), .y_o(rq_y),
                           .sat_o(lane_sat[l]));
    assign lane_out[l*32 +: 32] = rq_y;

    // The upper bits of each lane are the sign extension of a 16-bit value.
    logic unused_rdata;
    assign unused_rdata = ^mem_rdata_i[l*32+16 +: 16];
  end : g_lane

  // Sum of one word's products, lanes outside len left out (their data is not the row's).
  always_comb begin
    dot = '0;
    if (k_rd_q) begin
      for (int l = 0; l < Lanes; l++) begin
        if (k_mask[l]) dot = dot + $signed(prod[l*32 +: 32]);
      end
    end
  end

  // The output word of ATTN_SCORE: lane t % Lanes takes s[t] as it leaves the requantiser
  // (pos_lane_q counts the scores out); the write merges the arriving one.
  logic [Lanes*32-1:0] scores_q, scores_wdata;
  logic [Lanes-1:0]    scores_sat_q, scores_wsat;  // lane t % Lanes: s[t] was clamped

  always_comb begin
    scores_wdata = scores_q;
    scores_wsat  = scores_sat_q;
    if (score_v2_q) begin
      scores_wdata[pos_lane_q*32 +: 32] = lane_out[31:0];
      scores_wsat[pos_lane_q]           = lane_sat[0];
    end
  end
  assign score_wr = score_v2_q && (last_lane || score_end2_q);

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (busy_o) begin
      if (k_rd_q) score_acc_q <= (k_first_q ? '0 : score_acc_q) + dot;
      if (q_rd_q) q_q <= rd16;
      if (read_state_q == StValueP) p_q <= rd16;
      if (read_state_q == StParam) begin
        rq_mult_q  <= prm_rdata_i[psm_pkg::PARAM_RQ_MULT_LSB +: 31];
        rq_shift_q <= prm_rdata_i[psm_pkg::PARAM_RQ_SHIFT_LSB +: 6];
      end
      if (state_q == StValueV) v_lane_q <= pos_lane_q;
      if (score_v2_q) begin
        scores_q     <= scores_wdata;
        scores_sat_q <= scores_wsat;
      end
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  always_comb begin
    state_d = state_q;
    unique case (state_q)
      StIdle:  if (start_i) state_d = StParam;
      StParam: state_d = is_score ? StScoreQ : StValueP;
      // SCORE: q and k_t word by word (the dot product accumulates as the k words arrive),
      // then k_(t+1); a one-word q is kept, so then only k words are read. Every state waits
      // while a score word is written; the command ends with the last one.
      StScoreQ: if (!score_wr) state_d = StScoreK;
      StScoreK: begin
        if (!score_wr && last_word) begin
          if (last_pos)          state_d = StScoreTail;
          else if (word != '0)   state_d = StScoreQ;
        end else if (!score_wr) begin
          state_d = StScoreQ;
        end
      end
      StScoreTail: if (score_wr && score_end2_q) state_d = StIdle;
      // VALUE: p[t] and v_t for every position t, for output word w; p[t + 1] is in the next
      // p word after the last lane.
      StValueP: state_d = StValueV;
      StValueV: begin
        if (last_pos)       state_d = StSum;
        else if (last_lane) state_d = StValueP;
      end
      StSum:    state_d = StRound;
      StRound:  state_d = StRound2;
      StRound2: state_d = StValueWrite;
      // VALUE: out[w] arrives; write it and start the next output word at t = 0.
      StValueWrite: state_d = last_word ? StIdle : StValueP;
      default:      state_d = StIdle;
    endcase
  end

  // Lanes 0 .. t % Lanes of the scores word are filled.
  logic [Lanes-1:0] score_mask;
  always_comb begin
    score_mask = '0;
    if (busy_o) begin
      for (int l = 0; l < Lanes; l++) score_mask[l] = (LaneIdxWidth'(l) <= pos_lane_q);
    end
  end

  // The walks, the accumulators and the ports, state by state. SCORE moves to word w + 1 of
  // the same t, or after its last word to word 0 of t + 1; VALUE moves down to t + 1 for the
  // same w, or (after out[w] is written) to word w + 1 at t = 0. The scratchpad port: q or p,
  // k_t or v_t words (the default address: k_t / v_t word w), and the output words (scores: a
  // full word or the last one, taking the port from the reads; out: tail lanes masked).
  logic done_d;
  always_comb begin
    walk_next       = 1'b0;
    walk_rewind     = 1'b0;
    walk_row_next   = 1'b0;
    walk_row_rewind = 1'b0;
    k_read          = 1'b0;
    acc_clear       = 1'b0;
    done_d          = 1'b0;
    mem_req_o       = 1'b0;
    mem_we_o        = 1'b0;
    mem_addr_o      = src2_q + pos_off + word;
    mem_wmask_o     = '0;
    unique case (state_q)
      StParam: acc_clear = 1'b1;
      StScoreQ: begin
        mem_req_o  = !score_wr;
        mem_addr_o = src_q + word;
      end
      StScoreK: if (!score_wr) begin
        mem_req_o     = 1'b1;
        k_read        = 1'b1;
        walk_next     = !last_word;
        walk_rewind   = last_word && !last_pos;
        walk_row_next = last_word && !last_pos;
      end
      StValueP: begin
        mem_addr_o = src_q + pos_word_q;
        mem_req_o  = 1'b1;
      end
      StValueV: begin
        mem_req_o     = 1'b1;
        walk_row_next = !last_pos;
      end
      StValueWrite: begin
        mem_req_o       = 1'b1;
        mem_we_o        = 1'b1;
        mem_addr_o      = dst_q + word;
        mem_wmask_o     = word_mask;
        acc_clear       = 1'b1;
        done_d          = last_word;
        walk_next       = !last_word;
        walk_row_rewind = !last_word;
      end
      default: ;
    endcase
    if (score_wr) begin
      mem_req_o   = 1'b1;
      mem_we_o    = 1'b1;
      mem_addr_o  = dst_q + pos_word_q;
      mem_wmask_o = score_mask;
      done_d      = score_end2_q;
    end
  end

  assign prm_req_o   = (state_q == StParam);
  assign prm_addr_o  = prm_base_q;
  assign mem_wdata_o = score_wr ? scores_wdata : lane_out;
  assign mem_wsat_o  = score_wr ? scores_wsat : lane_sat;

  // The SCORE pipeline's valid bits and flags (the k flags matter only with k_rd_q).
  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      {k_rd_q, q_rd_q, score_done_q, score_v1_q, score_v2_q} <= '0;
    end else begin
      k_rd_q       <= k_read;
      q_rd_q       <= (state_q == StScoreQ) && !score_wr;
      score_done_q <= k_rd_q && k_last_q;
      score_v1_q   <= score_done_q;
      score_v2_q   <= score_v1_q;
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (busy_o) begin
      k_first_q    <= (word == '0);
      k_last_q     <= last_word;
      k_end_q      <= last_word && last_pos;
      score_end_q  <= k_end_q;
      score_end1_q <= score_end_q;
      score_end2_q <= score_end1_q;
    end
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      read_state_q <= StIdle;
      done_o       <= 1'b0;
      pos_lane_q   <= '0;
      pos_word_q   <= '0;
    end else begin
      read_state_q <= state_q;
      done_o       <= done_d;
      if (start_cmd || walk_row_rewind) begin
        pos_lane_q <= '0;
        pos_word_q <= '0;
      end else if (is_score ? score_v2_q : walk_row_next) begin
        pos_lane_q <= last_lane ? '0 : pos_lane_q + LaneIdxWidth'(1);
        pos_word_q <= last_lane ? pos_word_q + AddrWidth'(1) : pos_word_q;
      end
    end
  end

  assign busy_o = (state_q != StIdle);
  assign pass_o = 2'd0;

  // Only the Requant fields of the parameter entry are used (bit 31 and [63:38] are zero); the
  // walk's row_words and row_end are not needed.
  logic unused_bits;
  assign unused_bits = ^{prm_rdata_i[63:38], prm_rdata_i[31], row_words, row_end};

`ifndef SYNTHESIS
  CmdOp_A : assert property (@(posedge clk_i) disable iff (rst_i)
      start_cmd |-> (op_i == psm_pkg::OpAttnScore || op_i == psm_pkg::OpAttnValue))
    else $error("psm_attn: op_i %0d is not ATTN_SCORE or ATTN_VALUE", op_i);
  PrmMultBit31_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (read_state_q == StParam) |-> !prm_rdata_i[31])
    else $error("psm_attn: parameter entry with bit 31 set");
`endif
endmodule : psm_attn
