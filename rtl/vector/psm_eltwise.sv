// SPDX-License-Identifier: Apache-2.0
// Elementwise vector ops ADD, MUL and EMBED on rows in the vector scratchpad, one word at a time.
// Golden model: passim::kernels::add_i16(), mul_i8() and embed_i16() in
// runtime/src/kernels/eltwise.cpp, as called by passim::CpuDevice::vector_op().
//
//   ADD   out[i] = saturate(a[i] + b[i], 16)                 computed as
//                = requantize(a[i] + b[i], {1, 0}, 16)       (mult 1, shift 0: no rounding)
//   MUL   out[i] = requantize(a[i] * b[i], rq[param_addr + i], 8)    one step per channel i
//   EMBED out[i] = requantize(x[i], rq[param_addr + r], 16)          one step per row r
//
// a and b are the low 16 bits of each lane (int16) and x the low 8 bits (int8), like the
// to16()/to8() conversions of CpuDevice; results are written sign-extended to 32 bits. Row r
// of every operand starts at its base + r * ceil(len / Lanes) words. All three ops round and
// saturate through one psm_requant per lane.
//
// The unit fetches its Requant steps itself from the parameter memory (prm_* port, data one
// cycle after the request): MUL reads the steps of the word's channels, one per cycle, before
// each word; EMBED reads one step at the start of each row; ADD reads none.
//
// Cycles per word of a row (one word in flight at a time; nl = lanes of the word in the row):
//   ADD   read a, read b, calc, round, write                    = 5
//   MUL   nl parameter reads + read a, read b, calc, round, write = nl + 5
//   EMBED read x, calc, round, write                            = 4, plus 1 per row
// done_o pulses in the cycle after the last write, with busy_o already low.
module psm_eltwise #(
  parameter int unsigned Lanes          = 2,   // elements per scratchpad word
  parameter int unsigned AddrWidth      = 16,  // scratchpad word address
  parameter int unsigned LenWidth       = 16,  // row length and row count
  parameter int unsigned ParamAddrWidth = 12   // parameter memory entry address
) (
  input  logic                      clk_i,
  input  logic                      rst_i,         // synchronous, active high
  // Command: valid with the one-cycle start_i pulse; ignored while busy_o
  input  logic                      start_i,
  input  psm_pkg::opcode_e          op_i,          // OpAdd, OpMul or OpEmbed
  input  logic [AddrWidth-1:0]      src_addr_i,    // a (int16), or x (int8) for EMBED
  input  logic [AddrWidth-1:0]      src2_addr_i,   // b (int16); unused by EMBED
  input  logic [AddrWidth-1:0]      dst_addr_i,    // output rows (may equal src_addr_i)
  input  logic [ParamAddrWidth-1:0] param_addr_i,  // MUL: step of channel 0; EMBED: of row 0
  input  logic [LenWidth-1:0]       len_i,         // elements per row, >= 1
  input  logic [LenWidth-1:0]       rows_i,        // rows, >= 1
  output logic                      busy_o,
  output logic                      done_o,        // one-cycle pulse after the last write
  output logic [1:0]                pass_o,        // always 0: one pass per row
  // Parameter memory port: prm_rdata_i holds the entry requested in the previous cycle
  output logic                      prm_req_o,
  output logic [ParamAddrWidth-1:0] prm_addr_o,
  input  logic [63:0]               prm_rdata_i,   // Requant: mult [30:0], shift [37:32]
  // Vector scratchpad port (docs/accelerator.md): read data arrives one cycle after the request
  output logic                      mem_req_o,
  output logic                      mem_we_o,
  output logic [AddrWidth-1:0]      mem_addr_o,
  output logic [Lanes*32-1:0]       mem_wdata_o,   // int16 (ADD, EMBED) or int8 (MUL)
  output logic [Lanes-1:0]          mem_wmask_o,
  input  logic [Lanes*32-1:0]       mem_rdata_i
);
  localparam int unsigned LaneIdxWidth = (Lanes > 1) ? $clog2(Lanes) : 1;

  typedef enum logic [2:0] {
    StIdle,       // wait for start_i
    StRowParam,   // EMBED: request the Requant step of this row
    StChanParam,  // MUL: request the step of one channel of this word per cycle
    StReadA,      // request the word of a (x for EMBED)
    StReadB,      // request the word of b; a arrives
    StCalc,       // the last operand arrives: the requantisers take a + b, a * b or x
    StRound,      // requantiser stage 2
    StWrite       // the results arrive: write the word, tail lanes masked
  } eltwise_state_e;

  eltwise_state_e state_d, state_q;

  // Ceil(n / Lanes): the words of an n-element row (a shift when Lanes is a power of two).
  function automatic logic [AddrWidth-1:0] words_of(input logic [LenWidth-1:0] n);
    logic [LenWidth:0] sum;
    sum      = {1'b0, n} + (LenWidth + 1)'(Lanes - 1);
    words_of = AddrWidth'(sum / (LenWidth + 1)'(Lanes));
  endfunction

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and row walk                                                                     //
  //////////////////////////////////////////////////////////////////////////////////////////////

  psm_pkg::opcode_e          op_q;
  logic [AddrWidth-1:0]      src_q, src2_q, dst_q;
  logic [ParamAddrWidth-1:0] prm_base_q;
  logic [LenWidth-1:0]       len_q;
  logic [AddrWidth-1:0]      row_words_q;  // ceil(len / Lanes): the stride between rows
  logic [AddrWidth-1:0]      row_off_q;    // r * row_words: offset of row r from each base
  logic [LenWidth-1:0]       rows_left_q;  // rows not finished, including the current one
  logic [ParamAddrWidth-1:0] row_idx_q;    // r, for EMBED's step at param_addr + r
  logic [AddrWidth-1:0]      word_q;       // word of the row being worked on
  logic [LenWidth-1:0]       left_q;       // elements of the row from word_q on
  logic [ParamAddrWidth-1:0] chan_q;       // MUL: channel whose step is requested next
  logic [LaneIdxWidth-1:0]   prm_lane_q;   // MUL: its lane in the word

  logic is_add, is_mul, is_embed;
  assign is_add   = (op_q == psm_pkg::OpAdd);
  assign is_mul   = (op_q == psm_pkg::OpMul);
  assign is_embed = (op_q == psm_pkg::OpEmbed);

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

  logic last_chan;  // MUL: prm_lane_q is the last lane of this word in the row
  assign last_chan = (32'(prm_lane_q) == Lanes - 1) ||
                     (LenWidth'(prm_lane_q) + LenWidth'(1) >= left_q);

  // Parameter responses: prm_rdata_i holds the entry requested last cycle, for one lane (MUL)
  // or for every lane (EMBED).
  logic                    prm_valid_q;
  logic                    prm_bcast_q;
  logic [LaneIdxWidth-1:0] prm_lane_q2;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Lanes                                                                                    //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [5:0]          out_bits;  // saturation width of the op
  logic [Lanes*32-1:0] lane_out;  // requantised results, sign-extended

  assign out_bits = is_mul ? 6'd8 : 6'd16;

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [15:0] rd16;      // low 16 bits of this lane of mem_rdata_i (a, b)
    logic signed [7:0]  rd8;       // low 8 bits (EMBED's x)
    logic signed [15:0] a_q;       // a, kept while b is read
    logic        [30:0] mult_q;    // this lane's Requant step (MUL, EMBED)
    logic        [5:0]  shift_q;
    logic signed [31:0] sum;       // a + b: 17 bits, exact
    logic signed [31:0] prod;      // a * b: |prod| <= 2^30, exact
    logic signed [31:0] rq_x;      // requantiser input
    logic        [30:0] rq_mult;
    logic        [5:0]  rq_shift;
    logic signed [31:0] rq_y;

    assign rd16 = mem_rdata_i[l*32 +: 16];
    assign rd8  = mem_rdata_i[l*32 +: 8];
    always_comb begin
      sum      = '0;
      prod     = '0;
      rq_x     = '0;
      rq_mult  = '0;
      rq_shift = '0;
      if (busy_o) begin
        unique case (op_q)
          psm_pkg::OpMul: begin
            prod = 32'(a_q) * 32'(rd16);
            rq_x = prod;
          end
          psm_pkg::OpEmbed: rq_x = 32'(rd8);
          default: begin  // OpAdd
            sum  = 32'(a_q) + 32'(rd16);
            rq_x = sum;
          end
        endcase
        rq_mult  = is_add ? 31'd1 : mult_q;  // ADD: saturation only
        rq_shift = is_add ? 6'd0 : shift_q;
      end
    end

    // Inputs are sampled in StCalc; the result is on rq_y in StWrite, two cycles later.
    psm_requant u_requant (
      .clk_i,
      .en_i      (busy_o),  // idle units do not toggle their requantisers
      .x_i       (rq_x),
      .bias_i    (26'sd0),  // only the matmul read-out adds a bias
      .mult_i    (rq_mult),
      .shift_i   (rq_shift),
      .out_bits_i(out_bits),
      .y_o       (rq_y)
    );
    assign lane_out[l*32 +: 32] = rq_y;

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (busy_o) begin
        if (state_q == StReadB) a_q <= rd16;
        if (prm_valid_q && (prm_bcast_q || prm_lane_q2 == LaneIdxWidth'(l))) begin
          mult_q  <= prm_rdata_i[psm_pkg::PARAM_RQ_MULT_LSB +: 31];
          shift_q <= prm_rdata_i[psm_pkg::PARAM_RQ_SHIFT_LSB +: 6];
        end
      end
    end

    // The upper bits of each lane are the sign extension of a narrower value.
    logic unused_rdata;
    assign unused_rdata = ^mem_rdata_i[l*32+16 +: 16];
  end : g_lane

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic start_cmd;   // accept a command this cycle
  logic next_row;    // the last word of a row is written and another row follows
  logic next_word;   // a word that is not the last of its row is written
  logic prm_issue;   // a parameter request goes out this cycle
  logic prm_bcast;   // ... and its entry is for every lane (EMBED)
  logic done_d;

  always_comb begin
    state_d     = state_q;
    start_cmd   = 1'b0;
    next_row    = 1'b0;
    next_word   = 1'b0;
    prm_issue   = 1'b0;
    prm_bcast   = 1'b0;
    prm_addr_o  = prm_base_q + chan_q;
    done_d      = 1'b0;
    mem_req_o   = 1'b0;
    mem_we_o    = 1'b0;
    mem_addr_o  = src_q + row_off_q + word_q;
    mem_wdata_o = lane_out;
    mem_wmask_o = '0;
    unique case (state_q)
      // Wait for a command; the first row starts with its parameters (MUL, EMBED).
      StIdle: begin
        if (start_i) begin
          start_cmd = 1'b1;
          unique case (op_i)
            psm_pkg::OpMul:   state_d = StChanParam;
            psm_pkg::OpEmbed: state_d = StRowParam;
            default:          state_d = StReadA;
          endcase
        end
      end
      // EMBED: one step for the whole row, at param_addr + r.
      StRowParam: begin
        prm_issue  = 1'b1;
        prm_bcast  = 1'b1;
        prm_addr_o = prm_base_q + row_idx_q;
        state_d    = StReadA;
      end
      // MUL: the steps of the word's channels, lane by lane; the last one arrives in StReadA.
      StChanParam: begin
        prm_issue = 1'b1;
        if (last_chan) state_d = StReadA;
      end
      StReadA: begin
        mem_req_o = 1'b1;
        state_d   = is_embed ? StCalc : StReadB;
      end
      StReadB: begin
        mem_req_o  = 1'b1;
        mem_addr_o = src2_q + row_off_q + word_q;
        state_d    = StCalc;
      end
      StCalc: state_d = StRound;
      StRound: state_d = StWrite;
      StWrite: begin
        mem_req_o   = 1'b1;
        mem_we_o    = 1'b1;
        mem_addr_o  = dst_q + row_off_q + word_q;
        mem_wmask_o = word_mask;
        if (!last_word) begin
          next_word = 1'b1;
          state_d   = is_mul ? StChanParam : StReadA;
        end else if (rows_left_q != LenWidth'(1)) begin
          next_row = 1'b1;
          state_d  = is_mul ? StChanParam : (is_embed ? StRowParam : StReadA);
        end else begin
          done_d  = 1'b1;
          state_d = StIdle;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  assign prm_req_o = prm_issue;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      state_q     <= StIdle;
      prm_valid_q <= 1'b0;
      done_o      <= 1'b0;
      row_off_q   <= '0;
      rows_left_q <= '0;
      row_idx_q   <= '0;
      word_q      <= '0;
      left_q      <= '0;
      chan_q      <= '0;
      prm_lane_q  <= '0;
    end else begin
      state_q     <= state_d;
      prm_valid_q <= prm_issue;
      done_o      <= done_d;
      if (start_cmd || next_row) begin
        row_off_q   <= start_cmd ? '0 : row_off_q + row_words_q;
        rows_left_q <= start_cmd ? rows_i : rows_left_q - LenWidth'(1);
        row_idx_q   <= start_cmd ? '0 : row_idx_q + ParamAddrWidth'(1);
        word_q      <= '0;
        left_q      <= start_cmd ? len_i : len_q;
        chan_q      <= '0;
        prm_lane_q  <= '0;
      end else if (next_word) begin
        word_q     <= word_q + AddrWidth'(1);
        left_q     <= left_q - LenWidth'(Lanes);
        prm_lane_q <= '0;
      end else if (state_q == StChanParam) begin
        chan_q     <= chan_q + ParamAddrWidth'(1);
        prm_lane_q <= prm_lane_q + LaneIdxWidth'(1);
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
      row_words_q <= words_of(len_i);
    end
    prm_bcast_q <= prm_bcast;
    prm_lane_q2 <= prm_lane_q;
  end

  assign busy_o = (state_q != StIdle);
  assign pass_o = 2'd0;

  // Only the Requant fields of a parameter entry are used (bit 31 and [63:38] are zero).
  logic unused_prm;
  assign unused_prm = ^{prm_rdata_i[63:38], prm_rdata_i[31]};

`ifndef SYNTHESIS
  CmdSizes_A : assert property (@(posedge clk_i) disable iff (rst_i)
      start_cmd |-> (len_i != '0 && rows_i != '0))
    else $error("psm_eltwise: len_i and rows_i must be >= 1");
  CmdOp_A : assert property (@(posedge clk_i) disable iff (rst_i)
      start_cmd |-> (op_i == psm_pkg::OpAdd || op_i == psm_pkg::OpMul ||
                     op_i == psm_pkg::OpEmbed))
    else $error("psm_eltwise: op_i %0d is not ADD, MUL or EMBED", op_i);
  // Bit 31 of a Requant entry is zero (docs/isa.md); the unit reads mult from [30:0].
  PrmMultBit31_A : assert property (@(posedge clk_i) disable iff (rst_i)
      prm_valid_q |-> !prm_rdata_i[31])
    else $error("psm_eltwise: parameter entry with bit 31 set");
`endif
endmodule : psm_eltwise
