// SPDX-License-Identifier: Apache-2.0
// Row walk of the vector units: the command register, where a unit is in its command (row r,
// step k of the row), which lanes of that step belong to the row, and which lanes of the word
// read last cycle do.
// Golden model: none (addressing only; each unit's golden twin checks every element).
//
// A command has rows_i rows of len_i elements; row r starts r * row_words_o words after each
// base address (row_words_o = ceil(len / Lanes)). A step is StepWords consecutive words of a
// row (RoPE: two); step k starts at word k * StepWords of its row. The unit drives the walk:
//   start_i       a command (ignored while busy_i): row 0, step 0 (len_i and rows_i are
//                 sampled; start_o tells the unit to sample its other fields)
//   next_i        the step is done: the next step of the row; after the row's last step the
//                 first step of the next row, or after the last row's last step the end
//                 (row_end_o: no element left)
//   rewind_i      back to the first step of the row (the next pass over it)
//   row_next_i    the next row, the same step (a walk down a column: ATTN_VALUE)
//   row_rewind_i  back to row 0, the same step
//   read_i        the first word of the step is read: rd_mask_o holds the lanes of its data
//                 that belong to the row in the next cycle (0 in a cycle without read data)
// The masks are evaluated only while busy_i (the unit's busy_o), so an idle unit's simulator
// cost is one test; they are 0 otherwise. A unit whose commands are one row each sets Rows = 0
// (no row registers; rows_i, row_next_i and row_rewind_i are ignored, row_off_o is 0), one that
// needs no read tracking Reads = 0 (rd_mask_o is 0): neither keeps registers it does not use.
module psm_row_walk #(
  parameter int unsigned Lanes     = 2,     // elements per scratchpad word
  parameter int unsigned AddrWidth = 16,    // scratchpad word address
  parameter int unsigned LenWidth  = 16,    // row length and row count
  parameter int unsigned StepWords = 1,     // words per step
  parameter bit          Rows      = 1'b1,  // commands of several rows
  parameter bit          Reads     = 1'b0,  // read tracking (rd_mask_o)
  // Derived
  localparam int unsigned StepLanes = StepWords * Lanes
) (
  input  logic                 clk_i,
  input  logic                 rst_i,         // synchronous, active high
  input  logic                 busy_i,        // the unit is busy: start_i is ignored
  // Command: sampled with start_i, held until the next one
  input  logic                 start_i,
  input  logic [LenWidth-1:0]  len_i,         // elements per row, >= 1
  input  logic [LenWidth-1:0]  rows_i,        // rows, >= 1
  output logic                 start_o,       // start_i && !busy_i: the command starts
  // Moves (start_i wins; the row and the step move independently)
  input  logic                 next_i,
  input  logic                 rewind_i,
  input  logic                 row_next_i,
  input  logic                 row_rewind_i,
  input  logic                 read_i,
  // Where the walk is
  output logic [AddrWidth-1:0] step_o,        // k: step of the row
  output logic [AddrWidth-1:0] row_off_o,     // r * row_words: offset of row r from each base
  output logic [AddrWidth-1:0] row_words_o,   // ceil(len / Lanes): the stride between rows
  output logic [StepLanes-1:0] mask_o,        // lanes of step k inside the row (word-major)
  output logic                 last_step_o,   // step k is the row's last
  output logic                 last_row_o,    // row r is the command's last
  output logic                 row_end_o,     // every element of the row is walked
  output logic [StepLanes-1:0] rd_mask_o      // lanes of the data read last cycle in the row
);
  logic [LenWidth-1:0]  len_q;
  logic [AddrWidth-1:0] row_words_q;
  logic [AddrWidth-1:0] step_q;       // k
  logic [LenWidth-1:0]  left_q;       // elements of the row from step k on

  logic [LenWidth-1:0] left_after;  // left_q after step k (0 at the row's end)

  psm_row_tail #(.Lanes(StepLanes), .LenWidth(LenWidth)) u_row_tail (
    .en_i(busy_i), .left_i(left_q), .mask_o, .left_after_o(left_after)
  );

  logic start;  // a command starts
  assign start   = start_i && !busy_i;
  assign start_o = start;

  // Ceil(n / Lanes): the words of an n-element row (a shift when Lanes is a power of two).
  logic [LenWidth:0] len_round_up;
  assign len_round_up = {1'b0, len_i} + (LenWidth + 1)'(Lanes - 1);

  // next_i after the row's last step moves to the next row, unless the row is the last. The
  // moves come from a busy unit: an idle one costs the simulator the tests of start and busy_i.
  logic wrap;
  assign wrap = next_i && last_step_o && !last_row_o;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      step_q <= '0;
      left_q <= '0;
    end else if (start) begin
      step_q <= '0;
      left_q <= len_i;
    end else if (busy_i) begin
      if (rewind_i || wrap) begin
        step_q <= '0;
        left_q <= len_q;
      end else if (next_i) begin
        step_q <= step_q + AddrWidth'(1);
        left_q <= left_after;
      end
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start) begin
      len_q       <= len_i;
      row_words_q <= AddrWidth'(len_round_up / (LenWidth + 1)'(Lanes));
    end
  end

  assign step_o      = step_q;
  assign row_words_o = row_words_q;
  assign last_step_o = (left_q <= LenWidth'(StepLanes));
  assign row_end_o   = (left_q == '0);

  // The rows of a command: row r, its offset from each base, the rows left.
  if (Rows) begin : g_rows
    logic [LenWidth-1:0]  rows_q;
    logic [AddrWidth-1:0] row_off_q;    // r * row_words
    logic [LenWidth-1:0]  rows_left_q;  // rows not finished, including row r

    always_ff @(posedge clk_i) begin  // control: reset
      if (rst_i || start) begin
        row_off_q   <= '0;
        rows_left_q <= rst_i ? '0 : rows_i;
      end else if (busy_i) begin
        if (row_rewind_i) begin
          row_off_q   <= '0;
          rows_left_q <= rows_q;
        end else if (row_next_i || wrap) begin
          row_off_q   <= row_off_q + row_words_q;
          rows_left_q <= rows_left_q - LenWidth'(1);
        end
      end
    end

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (start) rows_q <= rows_i;
    end

    assign row_off_o  = row_off_q;
    assign last_row_o = (rows_left_q == LenWidth'(1));
  end else begin : g_one_row
    logic unused_rows;
    assign unused_rows = ^{rows_i, row_next_i, row_rewind_i};
    assign row_off_o   = '0;
    assign last_row_o  = 1'b1;
  end

  // The lanes of the word read last cycle (0 without one).
  if (Reads) begin : g_reads
    logic                 rd_valid_q;
    logic [StepLanes-1:0] rd_mask_q;

    always_ff @(posedge clk_i) begin  // control: reset
      rd_valid_q <= !rst_i && read_i;
    end

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (read_i) rd_mask_q <= mask_o;
    end

    assign rd_mask_o = rd_valid_q ? rd_mask_q : '0;
  end else begin : g_no_reads
    logic unused_read;
    assign unused_read = read_i;
    assign rd_mask_o   = '0;
  end

`ifndef SYNTHESIS
  CmdSizes_A : assert property (@(posedge clk_i) disable iff (rst_i)
      start |-> (len_i != '0 && rows_i != '0))
    else $error("psm_row_walk: len_i and rows_i must be >= 1");
`endif
endmodule : psm_row_walk
