// SPDX-License-Identifier: Apache-2.0
// SiLU on int16 rows in the vector scratchpad, one word (Lanes elements) at a time.
// Golden model: passim::kernels::silu_i16() and sigmoid_q15() in runtime/src/kernels/silu.cpp,
// as called by passim::CpuDevice::vector_op().
//
// Per element x (the low 16 bits of a lane, int16):
//   t   = requantize(x, to_q10, 32)                      Q.10           (psm_requant)
//   e   = iexp_q10(-min(|t|, 2^30))                      exp(-|t|)      (psm_iexp)
//   pos = floor(kExpOne * 2^15 / (kExpOne + e))          sigmoid(|t|)   (psm_divider)
//   s   = (t >= 0) ? pos : 2^15 - pos                    Q0.15, 1.0 = 2^15
//   out = requantize(x * s, out_rq, 16)                  int16, written sign-extended
// Each lane has its own requantiser (used twice per word), i-exp and divider. The two Requant
// steps are inputs, as the controller reads them from param_addr and param_addr + 1.
//
// Cycles per word (one word in flight at a time):
//   read, load, to_q10 round, sigmoid (divider start), 38 divide, out_rq round, write = 44
// done_o pulses in the cycle after the last write, with busy_o already low.
module psm_silu #(
  parameter int unsigned Lanes     = 2,   // elements per scratchpad word
  parameter int unsigned AddrWidth = 16,  // scratchpad word address
  parameter int unsigned LenWidth  = 16   // row length and row count
) (
  input  logic                 clk_i,
  input  logic                 rst_i,        // synchronous, active high
  // Command: valid with the one-cycle start_i pulse; ignored while busy_o
  input  logic                 start_i,
  input  logic [AddrWidth-1:0] src_addr_i,   // int16 input rows
  input  logic [AddrWidth-1:0] dst_addr_i,   // int16 output rows (may equal src_addr_i)
  input  logic [LenWidth-1:0]  len_i,        // elements per row, >= 1
  input  logic [LenWidth-1:0]  rows_i,       // rows, >= 1
  input  logic [63:0]          to_q10_i,     // Requant entry: mult [30:0], shift [37:32]
  input  logic [63:0]          out_rq_i,     // Requant entry: mult [30:0], shift [37:32]
  output logic                 busy_o,
  output logic                 done_o,       // one-cycle pulse after the last write
  output logic [1:0]           pass_o,       // always 0: one pass per row
  // Vector scratchpad port (docs/accelerator.md): read data arrives one cycle after the request
  output logic                 mem_req_o,
  output logic                 mem_we_o,
  output logic [AddrWidth-1:0] mem_addr_o,
  output logic [Lanes*32-1:0]  mem_wdata_o,  // int16, sign-extended
  output logic [Lanes-1:0]     mem_wmask_o,
  input  logic [Lanes*32-1:0]  mem_rdata_i   // int16 x, sign-extended
);
  localparam logic [22:0] ExpOne = 23'd2924389;  // kExpOne = kExpB^2 + kExpC (fixed_point.hpp)
  localparam int unsigned SigFracBits = psm_pkg::SIGMOID_FRAC_BITS;  // 15
  // The dividend kExpOne * 2^15 < 2^37; the quotient is in [2^14, 2^15].
  localparam int unsigned DivWidth = 37;
  localparam logic [DivWidth-1:0] SigNum = DivWidth'(ExpOne) << SigFracBits;
  localparam logic signed [32:0] MagMax = 33'sd1073741824;  // 2^30: clamp of |t|

  typedef enum logic [2:0] {
    StIdle,     // wait for start_i
    StRead,     // request one word of x
    StLoad,     // x arrives: keep it; the requantisers take x with to_q10
    StToQ10,    // requantiser stage 2
    StSigmoid,  // t arrives: start the dividers with kExpOne + iexp(-min(|t|, 2^30))
    StDivide,   // wait for the quotients; then the requantisers take x * s with out_rq
    StRound,    // requantiser stage 2
    StWrite     // the results arrive: write the word, tail lanes masked
  } silu_state_e;

  silu_state_e state_d, state_q;

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

  logic                div_start;  // StSigmoid: every lane starts its divider
  logic [Lanes-1:0]    div_done;   // the same cycle in every lane
  logic [Lanes*32-1:0] lane_out;   // requantised results, sign-extended

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [15:0]         x;         // this lane of mem_rdata_i, int16
    logic signed [15:0]         x_q;       // kept for x * s
    logic signed [31:0]         t;         // requantize(x, to_q10, 32), Q.10
    logic signed [32:0]         mag;       // |t|, exact in 33 bits
    logic signed [32:0]         mag_clamped;
    logic signed [31:0]         neg;       // -min(|t|, 2^30), in [-2^30, 0]
    logic        [21:0]         e;         // iexp_q10(neg), <= kExpOne
    logic                       t_neg_q;   // t < 0
    logic        [DivWidth-1:0] quotient;  // floor(kExpOne * 2^15 / (kExpOne + e))
    logic signed [16:0]         pos;       // sigmoid(|t|), in [2^14, 2^15]
    logic signed [16:0]         s;         // sigmoid(t), Q0.15, in [0, 2^15]
    logic signed [31:0]         prod;      // x * s: |prod| <= 2^30, exact
    logic signed [31:0]         rq_x;      // requantiser input
    logic        [30:0]         rq_mult;
    logic        [5:0]          rq_shift;
    logic        [5:0]          rq_bits;
    logic signed [31:0]         rq_y;
    logic                       div_busy;  // implied by StDivide
    logic        [DivWidth-1:0] divisor;   // kExpOne + e, sampled in StSigmoid

    assign x = mem_rdata_i[l*32 +: 16];

    // One requantiser, two uses: x with to_q10 (sampled in StLoad, t arrives in StSigmoid) and
    // x * s with out_rq (sampled when the divider finishes, the result arrives in StWrite).
    always_comb begin
      pos      = '0;
      s        = '0;
      prod     = '0;
      rq_x     = '0;
      rq_mult  = '0;
      rq_shift = '0;
      rq_bits  = '0;
      if (busy_o) begin
        pos      = $signed({1'b0, quotient[15:0]});
        s        = t_neg_q ? (17'sd32768 - pos) : pos;
        prod     = 32'(x_q) * 32'(s);
        rq_x     = (state_q == StLoad) ? 32'(x) : prod;
        rq_mult  = (state_q == StLoad) ? to_q10_mult_q : out_mult_q;
        rq_shift = (state_q == StLoad) ? to_q10_shift_q : out_shift_q;
        rq_bits  = (state_q == StLoad) ? 6'd32 : 6'd16;
      end
    end

    psm_requant u_requant (
      .clk_i,
      .en_i      (busy_o),  // idle units do not toggle their requantisers
      .x_i       (rq_x),
      .bias_i    (26'sd0),  // only the matmul read-out adds a bias
      .mult_i    (rq_mult),
      .shift_i   (rq_shift),
      .out_bits_i(rq_bits),
      .y_o       (rq_y)
    );
    assign t = rq_y;

    // Sigmoid of |t| through i-exp, then the sign; evaluated only in StSigmoid, where the
    // dividers sample it.
    always_comb begin
      mag         = '0;
      mag_clamped = '0;
      neg         = '0;
      e           = '0;
      divisor     = '0;
      if (state_q == StSigmoid) begin
        mag         = (t < 32'sd0) ? -(33'(t)) : 33'(t);
        mag_clamped = (mag > MagMax) ? MagMax : mag;
        neg         = -mag_clamped[31:0];
        e           = psm_iexp_pkg::iexp_q10(neg);
        divisor     = DivWidth'(ExpOne) + DivWidth'(e);  // in [kExpOne, 2 kExpOne]
      end
    end

    psm_divider #(
      .Width(DivWidth)
    ) u_divider (
      .clk_i,
      .rst_i,
      .start_i   (div_start),
      .dividend_i(SigNum),
      .divisor_i (divisor),
      .busy_o    (div_busy),
      .done_o    (div_done[l]),
      .quotient_o(quotient)
    );

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (busy_o) begin
        if (state_q == StLoad)    x_q     <= x;
        if (state_q == StSigmoid) t_neg_q <= (t < 32'sd0);
      end
    end

    assign lane_out[l*32 +: 32] = rq_y;

    // The quotient is at most 2^15 (asserted); mag_clamped <= 2^30 leaves bit 32 a copy of 31;
    // the upper bits of a lane are the sign extension of x.
    logic unused_bits;
    assign unused_bits = ^{quotient[DivWidth-1:16], mag_clamped[32], div_busy,
                           mem_rdata_i[l*32+16 +: 16]};

`ifndef SYNTHESIS
    QuotientFits_A : assert property (@(posedge clk_i) disable iff (rst_i)
        div_done[l] |-> quotient <= DivWidth'(32768))
      else $error("psm_silu: lane %0d: sigmoid quotient %0d above 2^15", l, quotient);
`endif
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
    div_start   = 1'b0;
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
      StLoad: state_d = StToQ10;
      StToQ10: state_d = StSigmoid;
      StSigmoid: begin
        div_start = 1'b1;
        state_d   = StDivide;
      end
      // Every lane's divider finishes in the same cycle.
      StDivide: begin
        if (div_done[0]) state_d = StRound;
      end
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
      to_q10_mult_q  <= to_q10_i[psm_pkg::PARAM_RQ_MULT_LSB +: 31];
      to_q10_shift_q <= to_q10_i[psm_pkg::PARAM_RQ_SHIFT_LSB +: 6];
      out_mult_q     <= out_rq_i[psm_pkg::PARAM_RQ_MULT_LSB +: 31];
      out_shift_q    <= out_rq_i[psm_pkg::PARAM_RQ_SHIFT_LSB +: 6];
    end
  end

  assign busy_o = (state_q != StIdle);
  assign pass_o = 2'd0;

  // Every lane's divider runs in lock step with lane 0's; only the Requant fields of the two
  // parameter entries are used (bit 31 and [63:38] are zero).
  logic unused_inputs;
  assign unused_inputs = ^{div_done, to_q10_i[63:38], to_q10_i[31], out_rq_i[63:38],
                           out_rq_i[31]};

`ifndef SYNTHESIS
  CmdSizes_A : assert property (@(posedge clk_i) disable iff (rst_i)
      start_cmd |-> (len_i != '0 && rows_i != '0))
    else $error("psm_silu: len_i and rows_i must be >= 1");
  RqMultBit31_A : assert property (@(posedge clk_i) disable iff (rst_i)
      start_cmd |-> (!to_q10_i[31] && !out_rq_i[31]))
    else $error("psm_silu: Requant entry with bit 31 set");
`endif
endmodule : psm_silu
