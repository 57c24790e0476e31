// SPDX-License-Identifier: Apache-2.0
// A self-gated activation out = x * g(x) on rows in the vector scratchpad, one word (Lanes
// elements) at a time: the rows, the sequence of the two requantisation steps and the
// scratchpad port of psm_silu (g = sigmoid) and psm_gelu (g = Phi). The unit's lanes (a
// psm_gated_lane and the unit's gate each) do the arithmetic.
// Golden model: the shared steps of passim::kernels::silu_i16() (runtime/src/kernels/silu.cpp)
// and passim::kernels::gelu_i8() (runtime/src/kernels/gelu.cpp).
//
// Per element x (the low bits of a lane, signed), in each lane:
//   t   = requantize(x, to_q10, 32)        Q.10, the gate's input (valid with gate_start_o)
//   g   = the unit's gate of t             unsigned, at most 2^16 (with gate_valid_i)
//   out = requantize(x * g, out_rq, OutBits), written sign-extended (lane_out_i)
// The lanes' requantisers take x with to_q10 in load_o and x * g with out_rq in scale_o
// (rq_*_o: the step of that cycle).
//
// Cycles per word (one word in flight at a time):
//   read, load (to_q10), round, gate start, gate wait (>= 1, until gate_valid_i: out_rq),
//   round, write = 6 + the gate's cycles
// done_o pulses in the cycle after the last write, with busy_o already low.
// Ports: the vector-unit groups `PSM_VEC_* of rtl/common/psm_vector_port.svh; scratchpad
// data: results of OutBits out (the read data goes to the lanes), each sign-extended to 32 bits.
`include "psm_vector_port.svh"
module psm_gated_act #(
  `PSM_VEC_PARAMS,
  parameter int unsigned OutBits = 16  // result bits: 16 (SiLU), 8 (GELU)
) (
  `PSM_VEC_START_PORTS,
  `PSM_VEC_ROW_PORTS,
  input  logic [30:0]          to_q10_mult_i,  // step x -> Q.10: multiplier
  input  logic [5:0]           to_q10_shift_i, //                 shift
  input  logic [30:0]          out_mult_i,     // step x * g -> OutBits: multiplier
  input  logic [5:0]           out_shift_i,    //                        shift
  `PSM_VEC_DONE_PORTS,
  // The lanes
  output logic                 load_o,         // the requantisers take x (mem_rdata_i)
  output logic                 gate_start_o,   // t (the requantisers' y) is valid
  input  logic                 gate_valid_i,   // g of every lane is valid (checked from the
                                               // cycle after gate_start_o)
  output logic                 scale_o,        // the requantisers take x * g
  output logic [30:0]          rq_mult_o,      // the requantisers' step in load_o, scale_o
  output logic [5:0]           rq_shift_o,
  output logic [5:0]           rq_bits_o,
  input  logic [Lanes*32-1:0]  lane_out_i,     // the requantisers' y: the results in StWrite
  input  logic [Lanes-1:0]     lane_sat_i,     // the requantisers' sat: clamped, in StWrite
  `PSM_VEC_MEM_REQ_PORTS                       // (the read data goes to the lanes)
);
  typedef enum logic [2:0] {
    StIdle,   // wait for start_i
    StRead,   // request one word of x
    StLoad,   // x arrives: keep it; the requantisers take x with to_q10
    StToQ10,  // requantiser stage 2
    StGate,   // t arrives: the gate starts
    StScale,  // wait for g; then the requantisers take x * g with out_rq
    StRound,  // requantiser stage 2
    StWrite   // the results arrive: write the word, tail lanes masked
  } gated_act_state_e;

  gated_act_state_e state_d, state_q;

  always_ff @(posedge clk_i) state_q <= rst_i ? StIdle : state_d;  // control: reset

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command and row walk                                                                     //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Word by word, row by row: the write of a word moves the walk on (the masks are evaluated
  // only while the unit is busy).
  logic                 start, write;
  logic [AddrWidth-1:0] word, row_off, row_words;  // row_words: not needed (row_off is)
  logic [Lanes-1:0]     word_mask, rd_mask;         // rd_mask, row_end: nor is read tracking
  logic                 last_word, last_row, row_end;

  psm_row_walk #(.Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth)) u_walk (
    .clk_i, .rst_i, .busy_i(busy_o), .start_i, .len_i, .rows_i, .start_o(start), .next_i(write),
    .rewind_i(1'b0), .row_next_i(1'b0), .row_rewind_i(1'b0), .read_i(1'b0), .step_o(word),
    .row_off_o(row_off), .row_words_o(row_words), .mask_o(word_mask), .last_step_o(last_word),
    .last_row_o(last_row), .row_end_o(row_end), .rd_mask_o(rd_mask)
  );

  logic [AddrWidth-1:0] src_q, dst_q;
  logic [30:0]          to_q10_mult_q, out_mult_q;
  logic [5:0]           to_q10_shift_q, out_shift_q;

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start) begin
      {src_q, dst_q} <= {src_addr_i, dst_addr_i};
      {to_q10_mult_q, to_q10_shift_q, out_mult_q, out_shift_q} <=
          {to_q10_mult_i, to_q10_shift_i, out_mult_i, out_shift_i};
    end
  end

  // The requantisers take x with to_q10 in StLoad, and x * g with out_rq in the StScale cycle
  // in which g is valid.
  assign load_o     = (state_q == StLoad);
  assign scale_o    = (state_q == StScale) && gate_valid_i;
  assign rq_mult_o  = load_o ? to_q10_mult_q : out_mult_q;
  assign rq_shift_o = load_o ? to_q10_shift_q : out_shift_q;
  assign rq_bits_o  = load_o ? 6'd32 : 6'(OutBits);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // One word in flight: the states follow each other; StWrite moves on to the next word, the
  // next row's first word, or the end.
  always_comb begin
    state_d = state_q;
    unique case (state_q)
      StIdle:  if (start_i) state_d = StRead;
      StRead:  state_d = StLoad;
      StLoad:  state_d = StToQ10;
      StToQ10: state_d = StGate;
      StGate:  state_d = StScale;
      StScale: if (gate_valid_i) state_d = StRound;
      StRound: state_d = StWrite;
      StWrite: state_d = (last_word && last_row) ? StIdle : StRead;
      default: state_d = StIdle;
    endcase
  end

  assign write        = (state_q == StWrite);
  assign gate_start_o = (state_q == StGate);

  // The scratchpad port: read x in StRead, write the results in StWrite, tail lanes masked.
  assign mem_req_o   = (state_q == StRead) || write;
  assign mem_we_o    = write;
  assign mem_addr_o  = (write ? dst_q : src_q) + row_off + word;
  assign mem_wdata_o = lane_out_i;
  assign mem_wmask_o = write ? word_mask : '0;
  assign mem_wsat_o  = lane_sat_i;

  always_ff @(posedge clk_i) begin  // control: reset
    done_o <= !rst_i && write && last_word && last_row;
  end

  assign busy_o = (state_q != StIdle);

  logic unused_walk;
  assign unused_walk = ^{row_words, rd_mask, row_end};
endmodule : psm_gated_act
