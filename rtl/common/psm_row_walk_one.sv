// SPDX-License-Identifier: Apache-2.0
// The row walk of a vector unit whose command is one row and that tracks its reads (softmax,
// RMSNorm, LayerNorm, BatchNorm): psm_row_walk with Rows = 0 and Reads = 1, with only the
// ports such a unit uses (psm_row_walk documents each of them).
// Golden model: none (addressing only; each unit's golden twin checks every element).
`include "psm_vector_port.svh"
module psm_row_walk_one #(
  `PSM_VEC_PARAMS
) (
  `PSM_VEC_START_PORTS,
  input  logic                 busy_i,       // the unit is busy: start_i is ignored
  input  logic [LenWidth-1:0]  len_i,        // elements in the row, >= 1
  output logic                 start_o,      // the command starts: the unit samples it
  input  logic                 next_i,       // the next word (after the last: the row's end)
  input  logic                 rewind_i,     // back to word 0 (the next pass)
  input  logic                 read_i,       // the word is read
  output logic [AddrWidth-1:0] step_o,       // the word of the row
  output logic [AddrWidth-1:0] row_words_o,  // ceil(len / Lanes)
  output logic [Lanes-1:0]     mask_o,       // lanes of the word inside the row
  output logic                 last_step_o,  // the word is the row's last
  output logic                 row_end_o,    // every word of the row is walked
  output logic [Lanes-1:0]     rd_mask_o     // lanes of the data read last cycle in the row
);
  logic [AddrWidth-1:0] row_off;   // 0: one row
  logic                 last_row;  // 1: one row

  psm_row_walk #(
    .Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth), .Rows(1'b0), .Reads(1'b1)
  ) u_walk (
    .clk_i, .rst_i, .busy_i, .start_i, .len_i, .rows_i(LenWidth'(1)), .start_o, .next_i,
    .rewind_i, .row_next_i(1'b0), .row_rewind_i(1'b0), .read_i, .step_o, .row_off_o(row_off),
    .row_words_o, .mask_o, .last_step_o, .last_row_o(last_row), .row_end_o, .rd_mask_o
  );

  logic unused_rows;
  assign unused_rows = ^{row_off, last_row};
endmodule : psm_row_walk_one
