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
// Ports: the vector-unit groups `PSM_VEC_* of rtl/common/psm_vector_port.svh; scratchpad
// data: int16 a, b or int8 x in, int16 (ADD, EMBED) or int8 (MUL) out, each sign-extended to 32
// bits.
`include "psm_vector_port.svh"
module psm_eltwise #(
  `PSM_VEC_PARAMS,
  parameter int unsigned ParamAddrWidth = 12  // parameter memory entry address
) (
  `PSM_VEC_START_PORTS,
  input  psm_pkg::opcode_e          op_i,          // OpAdd, OpMul or OpEmbed
  input  logic [AddrWidth-1:0]      src_addr_i,    // a (int16), or x (int8) for EMBED
  input  logic [AddrWidth-1:0]      src2_addr_i,   // b (int16); unused by EMBED
  input  logic [AddrWidth-1:0]      dst_addr_i,    // output rows (may equal src_addr_i)
  input  logic [ParamAddrWidth-1:0] param_addr_i,  // MUL: step of channel 0; EMBED: of row 0
  input  logic [LenWidth-1:0]       len_i,         // elements per row, >= 1
  input  logic [LenWidth-1:0]       rows_i,        // rows, >= 1
  `PSM_VEC_DONE_PORTS,
  output logic [1:0]                pass_o,        // always 0: one pass per row
  `PSM_VEC_PRM_PORTS,
  `PSM_VEC_MEM_PORTS
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

  always_ff @(posedge clk_i) state_q <= rst_i ? StIdle : state_d;  // control: reset

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and row walk                                                                     //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The command, sampled when it starts.
  logic                      is_mul, is_embed;  // the op: MUL, EMBED (else ADD)
  logic [AddrWidth-1:0]      src_q, src2_q, dst_q;
  logic [ParamAddrWidth-1:0] prm_base_q;
  logic [ParamAddrWidth-1:0] row_idx_q;    // r, for EMBED's step at param_addr + r
  logic [ParamAddrWidth-1:0] chan_q;       // MUL: channel whose step is requested next
  logic [LaneIdxWidth-1:0]   prm_lane_q;   // MUL: its lane in the word

  logic is_add;
  assign is_add = !is_mul && !is_embed;

  // Word by word, row by row: the write of a word moves the walk on. The datapath below is
  // evaluated only while the unit is busy: an idle unit costs the simulator one test per block
  // instead of its whole datapath.
  logic                 start_cmd, write;
  logic [AddrWidth-1:0] word, row_off;
  logic [Lanes-1:0]     word_mask;
  logic                 last_word, last_row;
  logic [AddrWidth-1:0] row_words;  // not needed (row_off is), nor is the read tracking
  logic [Lanes-1:0]     rd_mask;
  logic                 row_end;

  psm_row_walk #(.Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth)) u_walk (
    .clk_i, .rst_i, .busy_i(busy_o), .start_i, .len_i, .rows_i, .start_o(start_cmd), .next_i(write),
    .rewind_i(1'b0), .row_next_i(1'b0), .row_rewind_i(1'b0), .read_i(1'b0), .step_o(word),
    .row_off_o(row_off), .row_words_o(row_words), .mask_o(word_mask), .last_step_o(last_word),
    .last_row_o(last_row), .row_end_o(row_end), .rd_mask_o(rd_mask)
  );

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start_cmd) begin
      {src_q, src2_q, dst_q, prm_base_q} <= {src_addr_i, src2_addr_i, dst_addr_i, param_addr_i};
      {is_embed, is_mul} <= {op_i == psm_pkg::OpEmbed, op_i == psm_pkg::OpMul};
    end
  end

  // MUL: prm_lane_q is the last lane of this word in the row (no lane above it is inside).
  logic last_chan;
  assign last_chan = (word_mask >> prm_lane_q >> 1) == '0;

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
  logic [Lanes-1:0]    lane_sat;  // ... clamped to out_bits

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
      {sum, prod, rq_x, rq_mult, rq_shift} = '0;
      if (busy_o) begin
        if (is_mul) begin
          prod = 32'(a_q) * 32'(rd16);
          rq_x = prod;
        end else if (is_embed) begin
          rq_x = 32'(rd8);
        end else begin
          sum  = 32'(a_q) + 32'(rd16);
          rq_x = sum;
        end
        rq_mult  = is_add ? 31'd1 : mult_q;  // ADD: saturation only
        rq_shift = is_add ? 6'd0 : shift_q;
      end
    end

    // Inputs are sampled in StCalc; the result is on rq_y in StWrite, two cycles later.
    psm_requant u_requant (.clk_i, .en_i(state_q == StCalc), .x_i(rq_x), .bias_i(26'sd0),
                           .mult_i(rq_mult), .shift_i(rq_shift), .out_bits_i(out_bits),
                           .y_o(rq_y), .sat_o(lane_sat[l]));
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

  // StWrite: the word is written and the walk moves on
  logic next_row;   // ... to the next row's first word
  logic next_word;  // ... to the next word of the row
  logic done_d;     // ... to the end
  assign write     = (state_q == StWrite);
  assign next_row  = write && last_word && !last_row;
  assign next_word = write && !last_word;
  assign done_d    = write && last_word && last_row;

  // A word starts with its channels' steps (MUL, one per cycle; the last one arrives in
  // StReadA), with the row's step (EMBED, first word of a row), or with its reads.
  eltwise_state_e next_word_state;
  always_comb begin
    if (is_mul)                    next_word_state = StChanParam;
    else if (is_embed && next_row) next_word_state = StRowParam;
    else                           next_word_state = StReadA;
  end

  always_comb begin
    state_d = state_q;
    unique case (state_q)
      StIdle: begin
        if (start_i && op_i == psm_pkg::OpMul)        state_d = StChanParam;
        else if (start_i && op_i == psm_pkg::OpEmbed) state_d = StRowParam;
        else if (start_i)                             state_d = StReadA;
      end
      StRowParam:  state_d = StReadA;
      StChanParam: if (last_chan) state_d = StReadA;
      StReadA:     state_d = is_embed ? StCalc : StReadB;
      StReadB:     state_d = StCalc;
      StCalc:      state_d = StRound;
      StRound:     state_d = StWrite;
      StWrite:     state_d = done_d ? StIdle : next_word_state;
      default:     state_d = StIdle;
    endcase
  end

  // The parameter port (EMBED: the row's step, for every lane; MUL: one channel's step).
  logic prm_bcast;
  assign prm_req_o  = (state_q == StRowParam) || (state_q == StChanParam);
  assign prm_bcast  = (state_q == StRowParam);
  assign prm_addr_o = prm_base_q + (prm_bcast ? row_idx_q : chan_q);

  // The scratchpad port: a and b (x), then the write of the word, tail lanes masked.
  always_comb begin
    unique case (state_q)
      StReadB: mem_addr_o = src2_q + row_off + word;
      StWrite: mem_addr_o = dst_q + row_off + word;
      default: mem_addr_o = src_q + row_off + word;
    endcase
  end
  assign mem_req_o   = (state_q == StReadA) || (state_q == StReadB) || write;
  assign mem_we_o    = write;
  assign mem_wdata_o = lane_out;
  assign mem_wmask_o = write ? word_mask : '0;
  assign mem_wsat_o  = lane_sat;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      prm_valid_q <= 1'b0;
      done_o      <= 1'b0;
      row_idx_q   <= '0;
      chan_q      <= '0;
      prm_lane_q  <= '0;
    end else begin
      prm_valid_q <= prm_req_o;
      done_o      <= done_d;
      if (start_cmd || next_row) begin
        row_idx_q  <= start_cmd ? '0 : row_idx_q + ParamAddrWidth'(1);
        chan_q     <= '0;
        prm_lane_q <= '0;
      end else if (next_word) begin
        prm_lane_q <= '0;
      end else if (state_q == StChanParam) begin
        chan_q     <= chan_q + ParamAddrWidth'(1);
        prm_lane_q <= prm_lane_q + LaneIdxWidth'(1);
      end
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    prm_bcast_q <= prm_bcast;
    prm_lane_q2 <= prm_lane_q;
  end

  assign busy_o = (state_q != StIdle);
  assign pass_o = 2'd0;

  // Only the Requant fields of a parameter entry are used (bit 31 and [63:38] are zero); the
  // walk's read tracking is not.
  logic unused_bits;
  assign unused_bits = ^{prm_rdata_i[63:38], prm_rdata_i[31], row_words, row_end, rd_mask};

`ifndef SYNTHESIS
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
