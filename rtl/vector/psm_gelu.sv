// SPDX-License-Identifier: Apache-2.0
// GELU on int8 rows in the vector scratchpad (I-BERT's i-GELU), one word (Lanes elements) at a
// time.
// Golden model: passim::kernels::gelu_i8() and gelu_phi_q16() in runtime/src/kernels/gelu.cpp.
//
// Per element x (the low 8 bits of a lane, int8):
//   t   = requantize(x, to_q10, 32)                      Q.10             (psm_requant)
//   phi = gelu_phi_q16(t)                                Phi(t), Q0.16    (psm_gelu_phi_pkg)
//   out = requantize(x * phi, out_rq, 8)                 int8, written sign-extended
// Each lane has one requantiser, used twice per word, and evaluates gelu_phi_q16() into a
// register in StPhi only (an idle unit computes nothing). The two Requant steps are inputs.
//
// Cycles per word (one word in flight at a time):
//   read, load (to_q10 round), round, phi, scale (out_rq round), round, write = 7
// done_o pulses in the cycle after the last write, with busy_o already low.
module psm_gelu #(
  parameter int unsigned Lanes     = 2,   // elements per scratchpad word
  parameter int unsigned AddrWidth = 16,  // scratchpad word address
  parameter int unsigned LenWidth  = 16   // row length and row count
) (
  input  logic                 clk_i,
  input  logic                 rst_i,           // synchronous, active high
  // Command: valid with the one-cycle start_i pulse; ignored while busy_o
  input  logic                 start_i,
  input  logic [AddrWidth-1:0] src_addr_i,      // int8 input rows
  input  logic [AddrWidth-1:0] dst_addr_i,      // int8 output rows (may equal src_addr_i)
  input  logic [LenWidth-1:0]  len_i,           // elements per row, >= 1
  input  logic [LenWidth-1:0]  rows_i,          // rows, >= 1
  input  logic [30:0]          to_q10_mult_i,   // x -> Q.10 step: multiplier
  input  logic [5:0]           to_q10_shift_i,  //                 shift, 0..63
  input  logic [30:0]          out_rq_mult_i,   // x * phi -> int8 step: multiplier
  input  logic [5:0]           out_rq_shift_i,  //                       shift, 0..63
  output logic                 busy_o,
  output logic                 done_o,          // one-cycle pulse after the last write
  output logic [1:0]           pass_o,          // always 0: one pass per row
  // Vector scratchpad port (docs/accelerator.md): read data arrives one cycle after the request
  output logic                 mem_req_o,
  output logic                 mem_we_o,
  output logic [AddrWidth-1:0] mem_addr_o,
  output logic [Lanes*32-1:0]  mem_wdata_o,     // int8, sign-extended
  output logic [Lanes-1:0]     mem_wmask_o,
  input  logic [Lanes*32-1:0]  mem_rdata_i      // int8 x in the low 8 bits of each lane
);
  localparam int unsigned GeluPhiFracBits = 16;  // kGeluPhiFracBits (fixed_point.hpp): Q0.16

  typedef enum logic [2:0] {
    StIdle,   // wait for start_i
    StRead,   // request one word of x
    StLoad,   // x arrives: keep it; the requantisers take x with to_q10
    StToQ10,  // requantiser stage 2
    StPhi,    // t arrives: phi = Phi(t), registered
    StScale,  // the requantisers take x * phi with out_rq
    StRound,  // requantiser stage 2
    StWrite   // the results arrive: write the word, tail lanes masked
  } gelu_state_e;

  gelu_state_e state_d, state_q;

  // Ceil(n / Lanes): the words of an n-element row (a shift when Lanes is a power of two).
  function automatic logic [AddrWidth-1:0] words_of(input logic [LenWidth-1:0] n);
    logic [LenWidth:0] sum;
    sum      = {1'b0, n} + (LenWidth + 1)'(Lanes - 1);
    words_of = AddrWidth'(sum / (LenWidth + 1)'(Lanes));
  endfunction

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and row walk                                                                     //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [AddrWidth-1:0] src_q, dst_q;
  logic [LenWidth-1:0]  len_q;
  logic [30:0]          to_q10_mult_q, out_mult_q;
  logic [5:0]           to_q10_shift_q, out_shift_q;
  logic [AddrWidth-1:0] row_words_q;  // ceil(len / Lanes): the stride between rows
  logic [AddrWidth-1:0] row_off_q;    // r * row_words: offset of row r from each base
  logic [LenWidth-1:0]  rows_left_q;  // rows not finished, including the current one
  logic [AddrWidth-1:0] word_q;       // word of the row being worked on
  logic [LenWidth-1:0]  left_q;       // elements of the row from word_q on

  // Lanes of word_q that belong to the row (the last word may be partial).
  // The datapath below is evaluated only while the unit is busy: an idle unit costs the
  // simulator one test per block instead of its whole datapath.
  logic [Lanes-1:0] word_mask;
  always_comb begin
    word_mask = '0;
    if (busy_o) begin
      for (int l = 0; l < Lanes; l++) word_mask[l] = (LenWidth'(l) < left_q);
    end
  end

  logic last_word;  // word_q is the last word of the row
  assign last_word = (left_q <= LenWidth'(Lanes));

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Lanes                                                                                    //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic                rq_en;     // StLoad and StScale: the requantisers sample their inputs
  logic [Lanes*32-1:0] lane_out;  // requantised results, sign-extended

  assign rq_en = (state_q == StLoad) || (state_q == StScale);

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [7:0]               x;         // this lane of mem_rdata_i, int8
    logic signed [7:0]               x_q;       // kept for x * phi
    logic signed [31:0]              t;         // requantize(x, to_q10, 32), Q.10
    logic        [GeluPhiFracBits:0] phi_q;     // Phi(t), Q0.16, in [0, 2^16]
    logic signed [31:0]              prod;      // x * phi: |prod| <= 2^23, exact (StScale)
    logic signed [31:0]              rq_x;      // requantiser input
    logic        [30:0]              rq_mult;
    logic        [5:0]               rq_shift;
    logic        [5:0]               rq_bits;
    logic signed [31:0]              rq_y;

    assign x = mem_rdata_i[l*32 +: 8];

    // One requantiser, two uses: x with to_q10 (sampled in StLoad, t arrives in StPhi) and
    // x * phi with out_rq (sampled in StScale, the result arrives in StWrite). It samples only
    // in those two states, so the product is formed only in StScale.
    always_comb begin
      prod     = '0;
      rq_x     = '0;
      rq_mult  = '0;
      rq_shift = '0;
      rq_bits  = '0;
      if (state_q == StScale) begin
        prod     = 32'(x_q) * $signed({15'd0, phi_q});
        rq_x     = prod;
        rq_mult  = out_mult_q;
        rq_shift = out_shift_q;
        rq_bits  = 6'd8;
      end else if (state_q == StLoad) begin
        rq_x     = 32'(x);
        rq_mult  = to_q10_mult_q;
        rq_shift = to_q10_shift_q;
        rq_bits  = 6'd32;
      end
    end

    psm_requant u_requant (
      .clk_i,
      .en_i      (rq_en),
      .x_i       (rq_x),
      .bias_i    (26'sd0),  // only the matmul read-out adds a bias
      .mult_i    (rq_mult),
      .shift_i   (rq_shift),
      .out_bits_i(rq_bits),
      .y_o       (rq_y)
    );
    assign t = rq_y;

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (busy_o) begin
        if (state_q == StLoad) x_q   <= x;
        if (state_q == StPhi)  phi_q <= psm_gelu_phi_pkg::gelu_phi_q16(t);
      end
    end

    assign lane_out[l*32 +: 32] = rq_y;

    // The upper bits of a lane are ignored: x is its low 8 bits (a sign-extended int8).
    logic unused_bits;
    assign unused_bits = ^mem_rdata_i[l*32+8 +: 24];
  end : g_lane

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic start_cmd;  // accept a command this cycle
  logic next_row;   // the last word of a row is written and another row follows
  logic next_word;  // a word that is not the last of its row is written
  logic done_d;

  always_comb begin
    state_d     = state_q;
    start_cmd   = 1'b0;
    next_row    = 1'b0;
    next_word   = 1'b0;
    done_d      = 1'b0;
    mem_req_o   = 1'b0;
    mem_we_o    = 1'b0;
    mem_addr_o  = src_q + row_off_q + word_q;
    mem_wdata_o = lane_out;
    mem_wmask_o = '0;
    unique case (state_q)
      // Wait for a command.
      StIdle: begin
        if (start_i) begin
          start_cmd = 1'b1;
          state_d   = StRead;
        end
      end
      StRead: begin
        mem_req_o = 1'b1;
        state_d   = StLoad;
      end
      StLoad:  state_d = StToQ10;
      StToQ10: state_d = StPhi;
      StPhi:   state_d = StScale;
      StScale: state_d = StRound;
      StRound: state_d = StWrite;
      StWrite: begin
        mem_req_o   = 1'b1;
        mem_we_o    = 1'b1;
        mem_addr_o  = dst_q + row_off_q + word_q;
        mem_wmask_o = word_mask;
        if (!last_word) begin
          next_word = 1'b1;
          state_d   = StRead;
        end else if (rows_left_q != LenWidth'(1)) begin
          next_row = 1'b1;
          state_d  = StRead;
        end else begin
          done_d  = 1'b1;
          state_d = StIdle;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      state_q     <= StIdle;
      done_o      <= 1'b0;
      row_off_q   <= '0;
      rows_left_q <= '0;
      word_q      <= '0;
      left_q      <= '0;
    end else begin
      state_q <= state_d;
      done_o  <= done_d;
      if (start_cmd || next_row) begin
        row_off_q   <= start_cmd ? '0 : row_off_q + row_words_q;
        rows_left_q <= start_cmd ? rows_i : rows_left_q - LenWidth'(1);
        word_q      <= '0;
        left_q      <= start_cmd ? len_i : len_q;
      end else if (next_word) begin
        word_q <= word_q + AddrWidth'(1);
        left_q <= left_q - LenWidth'(Lanes);
      end
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start_cmd) begin
      src_q          <= src_addr_i;
      dst_q          <= dst_addr_i;
      len_q          <= len_i;
      row_words_q    <= words_of(len_i);
      to_q10_mult_q  <= to_q10_mult_i;
      to_q10_shift_q <= to_q10_shift_i;
      out_mult_q     <= out_rq_mult_i;
      out_shift_q    <= out_rq_shift_i;
    end
  end

  assign busy_o = (state_q != StIdle);
  assign pass_o = 2'd0;

`ifndef SYNTHESIS
  CmdSizes_A : assert property (@(posedge clk_i) disable iff (rst_i)
      start_cmd |-> (len_i != '0 && rows_i != '0))
    else $error("psm_gelu: len_i and rows_i must be >= 1");
`endif
endmodule : psm_gelu
