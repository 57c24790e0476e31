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
// ATTN_SCORE walks position t, then the words w of q and k_t, and collects Lanes scores into
// one output word. ATTN_VALUE walks output word w, then position t: each lane accumulates
// p[t] * v_t[i]; the p row is read once per output word, every V word exactly once.
//
// Cycles, W = ceil(len / Lanes), P = ceil(rows / Lanes), from the cycle after start_i:
//   ATTN_SCORE  1 (param) + rows * (2 W + 4) + P              (2 reads per word, sum, round x2,
//                                                             store; one write per Lanes scores)
//   ATTN_VALUE  1 (param) + W * (rows + P + 4)                (one read per position, one per
//                                                             p word, sum, round x2, write)
// done_o pulses in the cycle after the last write, with busy_o already low.
module psm_attn #(
  parameter int unsigned Lanes          = 2,   // elements per scratchpad word
  parameter int unsigned AddrWidth      = 16,  // scratchpad word address
  parameter int unsigned LenWidth       = 16,  // len and rows (cached positions)
  parameter int unsigned ParamAddrWidth = 12   // parameter memory entry address
) (
  input  logic                      clk_i,
  input  logic                      rst_i,         // synchronous, active high
  // Command: valid with the one-cycle start_i pulse; ignored while busy_o
  input  logic                      start_i,
  input  psm_pkg::opcode_e          op_i,          // OpAttnScore or OpAttnValue
  input  logic [AddrWidth-1:0]      src_addr_i,    // q (12-bit, len) or p (Q0.15, rows)
  input  logic [AddrWidth-1:0]      src2_addr_i,   // K or V cache: rows rows of len
  input  logic [AddrWidth-1:0]      dst_addr_i,    // scores (int32, rows) or out (int8, len)
  input  logic [ParamAddrWidth-1:0] param_addr_i,  // the Requant step of this head
  input  logic [LenWidth-1:0]       len_i,         // head_size, >= 1
  input  logic [LenWidth-1:0]       rows_i,        // cached positions t_len, >= 1
  output logic                      busy_o,
  output logic                      done_o,        // one-cycle pulse after the last write
  output logic [1:0]                pass_o,        // always 0: one pass per cached position
  // Parameter memory port: prm_rdata_i holds the entry requested in the previous cycle
  output logic                      prm_req_o,
  output logic [ParamAddrWidth-1:0] prm_addr_o,
  input  logic [63:0]               prm_rdata_i,   // Requant: mult [30:0], shift [37:32]
  // Vector scratchpad port (docs/accelerator.md): read data arrives one cycle after the request
  output logic                      mem_req_o,
  output logic                      mem_we_o,
  output logic [AddrWidth-1:0]      mem_addr_o,
  output logic [Lanes*32-1:0]       mem_wdata_o,   // int32 scores or int8 out, sign-extended
  output logic [Lanes-1:0]          mem_wmask_o,
  input  logic [Lanes*32-1:0]       mem_rdata_i
);
  localparam int unsigned LaneIdxWidth = (Lanes > 1) ? $clog2(Lanes) : 1;

  typedef enum logic [3:0] {
    StIdle,      // wait for start_i
    StParam,     // request the Requant step (it arrives during the next state)
    StScoreQ,    // SCORE: request word w of q; word w-1 of k_t arrives and is accumulated
    StScoreK,    // SCORE: request word w of k_t; word w of q arrives
    StValueP,    // VALUE: request the p word holding p[t] (when t % Lanes == 0)
    StValueV,    // VALUE: request word w of v_t; the p word or v_(t-1) arrives
    StSum,       // the last k / v word arrives and is accumulated
    StRound,     // the requantisers take the sums
    StRound2,    // requantiser stage 2
    StScore,     // SCORE: s[t] arrives; keep it in lane t % Lanes of the output word
    StScoreWrite,  // SCORE: write the output word (full, or the last one)
    StValueWrite   // VALUE: out[w] arrives: write it, tail lanes masked
  } attn_state_e;

  attn_state_e state_d, state_q;
  attn_state_e read_state_q;  // the state of the previous cycle: names the read data arriving

  // Ceil(n / Lanes): the words of an n-element row (a shift when Lanes is a power of two).
  function automatic logic [AddrWidth-1:0] words_of(input logic [LenWidth-1:0] n);
    logic [LenWidth:0] sum;
    sum      = {1'b0, n} + (LenWidth + 1)'(Lanes - 1);
    words_of = AddrWidth'(sum / (LenWidth + 1)'(Lanes));
  endfunction

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and walks                                                                        //
  //////////////////////////////////////////////////////////////////////////////////////////////

  psm_pkg::opcode_e          op_q;
  logic [AddrWidth-1:0]      src_q, src2_q, dst_q;
  logic [ParamAddrWidth-1:0] prm_base_q;
  logic [LenWidth-1:0]       len_q, rows_q;
  logic [AddrWidth-1:0]      row_words_q;  // W = ceil(len / Lanes): the stride of the cache

  // Position walk: t, where it sits in a row of rows elements (p or the scores) and where its
  // cache row starts.
  logic [LenWidth-1:0]     pos_q;       // t
  logic [LaneIdxWidth-1:0] pos_lane_q;  // t % Lanes
  logic [AddrWidth-1:0]    pos_word_q;  // t / Lanes
  logic [AddrWidth-1:0]    pos_off_q;   // t * W: offset of k_t / v_t from src2
  // Word walk over a row of len elements (q and k_t, or v_t and out).
  logic [AddrWidth-1:0]    word_q;      // w
  logic [LenWidth-1:0]     left_q;      // elements of the row from word w on

  logic is_score;
  assign is_score = (op_q == psm_pkg::OpAttnScore);

  logic last_pos, last_word, last_lane;
  assign last_pos  = (pos_q == rows_q - LenWidth'(1));
  assign last_word = (left_q <= LenWidth'(Lanes));
  assign last_lane = (32'(pos_lane_q) == Lanes - 1);

  // Lanes of word w that belong to the row.
  // The datapath below is evaluated only while the unit is busy: an idle unit costs the
  // simulator one test per block instead of its whole datapath.
  logic [Lanes-1:0] word_mask;
  always_comb begin
    word_mask = '0;
    if (busy_o) begin
      for (int l = 0; l < Lanes; l++) word_mask[l] = (LenWidth'(l) < left_q);
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Lanes: products, sums, requantisers                                                      //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [Lanes*16-1:0]     rd16;        // the low 16 bits of each lane of mem_rdata_i
  logic [Lanes*16-1:0]     q_q;         // SCORE: word w of q
  logic [Lanes*16-1:0]     p_q;         // VALUE: the p word holding p[t]
  logic [Lanes-1:0]        k_mask_q;    // SCORE: lanes of the arriving k word inside len
  logic [LaneIdxWidth-1:0] v_lane_q;    // VALUE: lane of p[t] for the arriving v_t word
  logic [30:0]             rq_mult_q;   // the Requant step of the command
  logic [5:0]              rq_shift_q;
  logic [Lanes*32-1:0]     prod;        // per lane: q * k or p[t] * v, exact int32
  logic signed [31:0]      dot;         // SCORE: sum of the products of one word, wraps
  logic signed [31:0]      score_acc_q; // SCORE: q . k_t so far, wraps like the golden uint32
  logic [Lanes*32-1:0]     lane_out;    // requantiser outputs, sign-extended
  logic                    acc_clear;   // zero the accumulators (start of a dot product)

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

    // Inputs are sampled in StRound; the result arrives in StScore / StValueWrite.
    psm_requant u_requant (
      .clk_i,
      .en_i      (busy_o),  // idle units do not toggle their requantisers
      .x_i       (rq_x),
      .bias_i    (26'sd0),  // only the matmul read-out adds a bias
      .mult_i    (rq_mult_q),
      .shift_i   (rq_shift_q),
      .out_bits_i(is_score ? 6'd32 : 6'd8),
      .y_o       (rq_y)
    );
    assign lane_out[l*32 +: 32] = rq_y;

    // The upper bits of each lane are the sign extension of a 16-bit value.
    logic unused_rdata;
    assign unused_rdata = ^mem_rdata_i[l*32+16 +: 16];
  end : g_lane

  // Sum of one word's products, lanes outside len left out (their data is not the row's).
  always_comb begin
    dot = '0;
    if (read_state_q == StScoreK) begin
      for (int l = 0; l < Lanes; l++) begin
        if (k_mask_q[l]) dot = dot + $signed(prod[l*32 +: 32]);
      end
    end
  end

  // The output word of ATTN_SCORE: lane t % Lanes takes s[t] in StScore.
  logic [Lanes*32-1:0] scores_q;

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (busy_o) begin
      if (acc_clear)                     score_acc_q <= '0;
      else if (read_state_q == StScoreK) score_acc_q <= score_acc_q + dot;
      if (read_state_q == StScoreQ) q_q <= rd16;
      if (read_state_q == StValueP) p_q <= rd16;
      if (read_state_q == StParam) begin
        rq_mult_q  <= prm_rdata_i[psm_pkg::PARAM_RQ_MULT_LSB +: 31];
        rq_shift_q <= prm_rdata_i[psm_pkg::PARAM_RQ_SHIFT_LSB +: 6];
      end
      if (state_q == StScoreK) k_mask_q <= word_mask;
      if (state_q == StValueV) v_lane_q <= pos_lane_q;
      if (state_q == StScore)  scores_q[pos_lane_q*32 +: 32] <= lane_out[31:0];
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic start_cmd;   // accept a command this cycle
  logic pos_reset;   // t = 0
  logic pos_next;    // t = t + 1
  logic word_reset;  // w = 0
  logic word_next;   // w = w + 1
  logic done_d;

  // Lanes 0 .. t % Lanes of the scores word are filled.
  logic [Lanes-1:0] score_mask;
  always_comb begin
    score_mask = '0;
    if (busy_o) begin
      for (int l = 0; l < Lanes; l++) score_mask[l] = (LaneIdxWidth'(l) <= pos_lane_q);
    end
  end

  always_comb begin
    state_d     = state_q;
    start_cmd   = 1'b0;
    pos_reset   = 1'b0;
    pos_next    = 1'b0;
    word_reset  = 1'b0;
    word_next   = 1'b0;
    acc_clear   = 1'b0;
    done_d      = 1'b0;
    prm_req_o   = 1'b0;
    mem_req_o   = 1'b0;
    mem_we_o    = 1'b0;
    mem_addr_o  = src2_q + pos_off_q + word_q;  // k_t / v_t word w
    mem_wdata_o = lane_out;
    mem_wmask_o = '0;
    unique case (state_q)
      // Wait for a command; both walks start at 0.
      StIdle: begin
        if (start_i) begin
          start_cmd  = 1'b1;
          pos_reset  = 1'b1;
          word_reset = 1'b1;
          state_d    = StParam;
        end
      end
      StParam: begin
        prm_req_o = 1'b1;
        acc_clear = 1'b1;
        state_d   = is_score ? StScoreQ : StValueP;
      end
      // SCORE: q and k_t word by word; the dot product accumulates as the k words arrive.
      StScoreQ: begin
        mem_req_o  = 1'b1;
        mem_addr_o = src_q + word_q;
        state_d    = StScoreK;
      end
      StScoreK: begin
        mem_req_o = 1'b1;
        if (last_word) begin
          state_d = StSum;
        end else begin
          word_next = 1'b1;
          state_d   = StScoreQ;
        end
      end
      // VALUE: p[t] and v_t for every position t, for output word w.
      StValueP: begin
        mem_req_o  = 1'b1;
        mem_addr_o = src_q + pos_word_q;
        state_d    = StValueV;
      end
      StValueV: begin
        mem_req_o = 1'b1;
        if (last_pos) begin
          state_d = StSum;
        end else begin
          pos_next = 1'b1;
          state_d  = last_lane ? StValueP : StValueV;  // p[t + 1] is in the next p word
        end
      end
      StSum: state_d = StRound;
      StRound: state_d = StRound2;
      StRound2: state_d = is_score ? StScore : StValueWrite;
      // SCORE: the sums are sampled; keep s[t], then write a full word or go on with t + 1.
      StScore: begin
        acc_clear = 1'b1;
        if (last_lane || last_pos) begin
          state_d = StScoreWrite;
        end else begin
          pos_next   = 1'b1;
          word_reset = 1'b1;
          state_d    = StScoreQ;
        end
      end
      StScoreWrite: begin
        mem_req_o   = 1'b1;
        mem_we_o    = 1'b1;
        mem_addr_o  = dst_q + pos_word_q;
        mem_wdata_o = scores_q;
        mem_wmask_o = score_mask;
        if (last_pos) begin
          done_d  = 1'b1;
          state_d = StIdle;
        end else begin
          pos_next   = 1'b1;
          word_reset = 1'b1;
          state_d    = StScoreQ;
        end
      end
      // VALUE: out[w] arrives; write it and start the next output word at t = 0.
      StValueWrite: begin
        mem_req_o   = 1'b1;
        mem_we_o    = 1'b1;
        mem_addr_o  = dst_q + word_q;
        mem_wmask_o = word_mask;
        acc_clear   = 1'b1;
        if (last_word) begin
          done_d  = 1'b1;
          state_d = StIdle;
        end else begin
          word_next = 1'b1;
          pos_reset = 1'b1;
          state_d   = StValueP;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  assign prm_addr_o = prm_base_q;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      state_q      <= StIdle;
      read_state_q <= StIdle;
      done_o       <= 1'b0;
      pos_q        <= '0;
      pos_lane_q   <= '0;
      pos_word_q   <= '0;
      pos_off_q    <= '0;
      word_q       <= '0;
      left_q       <= '0;
    end else begin
      state_q      <= state_d;
      read_state_q <= state_q;
      done_o       <= done_d;
      if (pos_reset) begin
        pos_q      <= '0;
        pos_lane_q <= '0;
        pos_word_q <= '0;
        pos_off_q  <= '0;
      end else if (pos_next) begin
        pos_q      <= pos_q + LenWidth'(1);
        pos_lane_q <= last_lane ? '0 : pos_lane_q + LaneIdxWidth'(1);
        pos_word_q <= last_lane ? pos_word_q + AddrWidth'(1) : pos_word_q;
        pos_off_q  <= pos_off_q + row_words_q;
      end
      if (word_reset) begin
        word_q <= '0;
        left_q <= start_cmd ? len_i : len_q;
      end else if (word_next) begin
        word_q <= word_q + AddrWidth'(1);
        left_q <= left_q - LenWidth'(Lanes);
      end
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start_cmd) begin
      op_q        <= op_i;
      src_q       <= src_addr_i;
      src2_q      <= src2_addr_i;
      dst_q       <= dst_addr_i;
      prm_base_q  <= param_addr_i;
      len_q       <= len_i;
      rows_q      <= rows_i;
      row_words_q <= words_of(len_i);
    end
  end

  assign busy_o = (state_q != StIdle);
  assign pass_o = 2'd0;

  // Only the Requant fields of the parameter entry are used (bit 31 and [63:38] are zero).
  logic unused_prm;
  assign unused_prm = ^{prm_rdata_i[63:38], prm_rdata_i[31]};

`ifndef SYNTHESIS
  CmdSizes_A : assert property (@(posedge clk_i) disable iff (rst_i)
      start_cmd |-> (len_i != '0 && rows_i != '0))
    else $error("psm_attn: len_i and rows_i must be >= 1");
  CmdOp_A : assert property (@(posedge clk_i) disable iff (rst_i)
      start_cmd |-> (op_i == psm_pkg::OpAttnScore || op_i == psm_pkg::OpAttnValue))
    else $error("psm_attn: op_i %0d is not ATTN_SCORE or ATTN_VALUE", op_i);
  PrmMultBit31_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (read_state_q == StParam) |-> !prm_rdata_i[31])
    else $error("psm_attn: parameter entry with bit 31 set");
`endif
endmodule : psm_attn
