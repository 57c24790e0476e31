// SPDX-License-Identifier: Apache-2.0
// ArrayRows x ArrayCols weight-stationary systolic array of int8 x int8 -> int32 PEs, with
// input skew and output de-skew, so that callers see whole vectors in and whole vectors out.
// Golden model: passim::kernels::matmul_i8() in runtime/src/kernels/matmul.cpp.
//
// PE (i, j) holds weight w[i][j] (row i = k index inside the tile, column j = output channel).
// An activation vector a[0..R-1] entering at cycle t produces, at cycle t + R + C - 1,
//   out[j] = sum_i a[i] * w[i][j]      (int32, wraps on overflow like the golden model)
// for every column j at once. One vector may enter every cycle.
//
// Weights are double-buffered in the PEs: wgt_load_i[i] writes PE row i's shadow weights,
// and a vector entered with act_swap_i (the first of a tile) switches each PE to its shadow
// weight as it passes, so tiles stream back to back with no gap. For a tile whose first vector
// enters at t' after the previous tile's first vector entered at t, row i's shadow may be
// written in the cycles t + i + C - 1 .. t' + i - 1 (after the old swap has left the row's
// rightmost PE, before the new one reaches its leftmost PE); a load in the same cycle as a swap
// is allowed.
//
// Skew and de-skew (R = 2, C = 3; numbers are the cycle an element of the vector entering at
// t = 0 is used by that PE; psums leave the bottom row one cycle after the PE uses them):
//
//   a[0] --------> PE00(0) -> PE01(1) -> PE02(2)
//   a[1] -> [1] -> PE10(1) -> PE11(2) -> PE12(3)
//                    |          |          |
//                   (2)        (3)        (4)
//                 delay 2    delay 1    delay 0   ==> out[0..2] all valid at 4 = R + C - 1
module psm_systolic_array #(
  parameter int unsigned ArrayRows = 2,  // R: k indices per tile
  parameter int unsigned ArrayCols = 4,  // C: output channels per tile
  parameter int unsigned DataWidth = 8,
  parameter int unsigned AccWidth  = 32
) (
  input  logic                           clk_i,
  input  logic                           rst_i,        // synchronous, active high
  // Weight preload: row i's shadow latches wgt_i (lane j -> column j) when wgt_load_i[i] is high
  input  logic [ArrayRows-1:0]           wgt_load_i,
  input  logic [ArrayCols*DataWidth-1:0] wgt_i,        // int8 lanes
  // Activations: one unskewed vector per cycle, lane i -> row i; act_swap_i marks a tile's first
  input  logic                           act_valid_i,
  input  logic                           act_swap_i,
  input  logic [ArrayRows*DataWidth-1:0] act_i,        // int8 lanes
  // Results: de-skewed, lane j = column j, Latency cycles after the activation vector
  output logic                           out_valid_o,
  output logic [ArrayCols*AccWidth-1:0]  out_o         // int32 lanes, wrapped sums
);
  // Links between PEs: act/valid flow right (column index C is the right edge), psums flow
  // down (row index 0 is the zero input at the top, row R the bottom edge).
  logic signed [DataWidth-1:0] act_h   [ArrayRows][ArrayCols+1];
  logic                        valid_h [ArrayRows][ArrayCols+1];
  logic                        swap_h  [ArrayRows][ArrayCols+1];
  logic signed [AccWidth-1:0]  psum_v  [ArrayRows+1][ArrayCols];

  // Clock enable of the whole activation/psum path: high from a valid activation until it has
  // left the de-skew (R + C - 1 cycles later, with margin). While it is low every valid bit in
  // the array is 0, and holding the registers changes nothing a caller sees (out_o matters
  // only with out_valid_o). Shadow weight loads are not gated.
  localparam int unsigned LiveCycles = ArrayRows + ArrayCols + 1;
  logic [$clog2(LiveCycles+1)-1:0] live_q;
  logic                            en;
  assign en = act_valid_i || live_q != '0;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i)                live_q <= '0;
    else if (act_valid_i)     live_q <= ($clog2(LiveCycles+1))'(LiveCycles);
    else if (live_q != '0)    live_q <= live_q - 1'b1;
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Input skew: row i sees its lane i cycles late                                            //
  //////////////////////////////////////////////////////////////////////////////////////////////

  for (genvar i = 0; i < ArrayRows; i++) begin : g_skew
    if (i == 0) begin : g_direct
      assign act_h[0][0]   = act_i[DataWidth-1:0];
      assign valid_h[0][0] = act_valid_i;
      assign swap_h[0][0]  = act_swap_i;
    end else begin : g_delay
      logic signed [DataWidth-1:0] act_q   [i];
      logic                        valid_q [i];
      logic                        swap_q  [i];

      always_ff @(posedge clk_i) begin  // control: reset
        if (rst_i) begin
          for (int s = 0; s < i; s++) begin
            valid_q[s] <= 1'b0;
            swap_q[s]  <= 1'b0;
          end
        end else if (en) begin
          valid_q[0] <= act_valid_i;
          swap_q[0]  <= act_swap_i;
          for (int s = 1; s < i; s++) begin
            valid_q[s] <= valid_q[s-1];
            swap_q[s]  <= swap_q[s-1];
          end
        end
      end

      always_ff @(posedge clk_i) begin  // datapath: no reset
        if (en) begin
          act_q[0] <= act_i[i*DataWidth+:DataWidth];
          for (int s = 1; s < i; s++) act_q[s] <= act_q[s-1];
        end
      end

      assign act_h[i][0]   = act_q[i-1];
      assign valid_h[i][0] = valid_q[i-1];
      assign swap_h[i][0]  = swap_q[i-1];
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // PE grid                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  for (genvar j = 0; j < ArrayCols; j++) begin : g_top
    assign psum_v[0][j] = '0;
  end

  for (genvar i = 0; i < ArrayRows; i++) begin : g_row
    for (genvar j = 0; j < ArrayCols; j++) begin : g_col
      psm_pe #(
        .DataWidth(DataWidth),
        .AccWidth (AccWidth)
      ) u_pe (
        .clk_i,
        .rst_i,
        .en_i       (en),
        .wgt_load_i (wgt_load_i[i]),
        .wgt_i      (wgt_i[j*DataWidth+:DataWidth]),
        .act_valid_i(valid_h[i][j]),
        .act_swap_i (swap_h[i][j]),
        .act_i      (act_h[i][j]),
        .act_valid_o(valid_h[i][j+1]),
        .act_swap_o (swap_h[i][j+1]),
        .act_o      (act_h[i][j+1]),
        .psum_i     (psum_v[i][j]),
        .psum_o     (psum_v[i+1][j])
      );
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Output de-skew: column j leaves the array C-1-j cycles before column C-1                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  for (genvar j = 0; j < ArrayCols; j++) begin : g_deskew
    localparam int unsigned Delay = ArrayCols - 1 - j;
    if (Delay == 0) begin : g_direct
      assign out_o[j*AccWidth+:AccWidth] = psum_v[ArrayRows][j];
    end else begin : g_delay
      logic signed [AccWidth-1:0] psum_q [Delay];

      always_ff @(posedge clk_i) begin  // datapath: no reset
        if (en) begin
          psum_q[0] <= psum_v[ArrayRows][j];
          for (int s = 1; s < Delay; s++) psum_q[s] <= psum_q[s-1];
        end
      end

      assign out_o[j*AccWidth+:AccWidth] = psum_q[Delay-1];
    end
  end

  // The bottom-right PE is the last to see an activation vector: its valid is the output's.
  assign out_valid_o = valid_h[ArrayRows-1][ArrayCols];

endmodule : psm_systolic_array
