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
  // Row i of the skew: the activation, valid and swap flag entering PE (i, 0); a swap only
  // with a valid activation.
  logic signed [DataWidth-1:0] act_h   [ArrayRows];
  logic                        valid_h [ArrayRows];
  logic                        swap_h  [ArrayRows];
  logic                        swap_in;
  assign swap_in = act_valid_i && act_swap_i;

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

  // The valid and swap flags are the same for every lane: one shift register each, row i
  // taps it i cycles late. Shift registers are packed, newest in the low slot, so that a
  // simulator moves them as whole words rather than element by element.
  if (ArrayRows > 1) begin : g_flags
    logic [ArrayRows-2:0] valid_sr, swap_sr;  // bit i - 1: the flags entering row i

    always_ff @(posedge clk_i) begin  // control: reset
      if (rst_i) begin
        valid_sr <= '0;
        swap_sr  <= '0;
      end else if (en) begin
        valid_sr <= (ArrayRows-1)'({valid_sr, act_valid_i});
        swap_sr  <= (ArrayRows-1)'({swap_sr, swap_in});
      end
    end
  end

  for (genvar i = 0; i < ArrayRows; i++) begin : g_skew
    if (i == 0) begin : g_direct
      assign act_h[0]   = act_i[DataWidth-1:0];
      assign valid_h[0] = act_valid_i;
      assign swap_h[0]  = swap_in;
    end else begin : g_delay
      localparam int unsigned Depth = i;
      logic [Depth*DataWidth-1:0] act_sr;

      always_ff @(posedge clk_i) begin  // datapath: no reset
        if (en) act_sr <= (Depth*DataWidth)'({act_sr, act_i[i*DataWidth+:DataWidth]});
      end

      assign act_h[i]   = act_sr[(Depth-1)*DataWidth +: DataWidth];
      assign valid_h[i] = g_flags.valid_sr[i-1];
      assign swap_h[i]  = g_flags.swap_sr[i-1];
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // PE grid                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // PE (i, j) holds an active and a shadow weight, and registers the valid bit, activation and
  // swap flag it passes right and the partial sum it passes down. Its inputs are row i of the
  // skew (column 0) or PE (i, j - 1)'s registers, and 0 (row 0) or PE (i - 1, j)'s partial
  // sum. Multiply-accumulate: psum + act * w, where w is the shadow weight for the first
  // activation of a tile (swap) and the active weight otherwise; int32, wraps on overflow like
  // the golden model. Written inline, not as a function: Verilator 5.006 initialises every
  // local of an inlined function call in every evaluation.
  //
  // A PE updates its activation, partial sum and swap flag only for a valid activation. An
  // invalid slot's values are never used: the PE to the right and the PE below use them only
  // with that slot's valid bit, and the de-skew passes them out with out_valid_o low. So a
  // simulator spends one test per PE on the idle slots (all but one in R for a one-row GEMM)
  // and does the arithmetic only where it matters.
  for (genvar i = 0; i < ArrayRows; i++) begin : g_row
    for (genvar j = 0; j < ArrayCols; j++) begin : g_col
      logic signed [DataWidth-1:0] wgt_q, shadow_q, act_q;
      logic                        valid_q, swap_q;
      logic signed [AccWidth-1:0]  psum_q;
      logic signed [DataWidth-1:0] a;
      logic                        valid, swap;
      logic signed [AccWidth-1:0]  psum;

      if (j == 0) begin : g_left
        assign a     = act_h[i];
        assign valid = valid_h[i];
        assign swap  = swap_h[i];
      end else begin : g_inner
        assign a     = g_col[j-1].act_q;
        assign valid = g_col[j-1].valid_q;
        assign swap  = g_col[j-1].swap_q;
      end
      if (i == 0) begin : g_top
        assign psum = '0;
      end else begin : g_below
        assign psum = g_row[i-1].g_col[j].psum_q;
      end

      always_ff @(posedge clk_i) begin  // control: reset
        if (rst_i) begin
          valid_q <= 1'b0;
          swap_q  <= 1'b0;
        end else if (en) begin
          valid_q <= valid;
          if (valid) swap_q <= swap;
        end
      end

      // A shadow load in the same cycle as a swap is fine: the swap takes the old shadow value.
      always_ff @(posedge clk_i) begin  // datapath: no reset, maps to DSP
        if (wgt_load_i[i]) shadow_q <= wgt_i[j*DataWidth +: DataWidth];
        if (en && valid) begin
          act_q  <= a;
          // Both int8 factors sign-extended to the accumulator width: the product is exact, and
          // a Verilated model computes it with one native multiply. The weight is selected on
          // the 8-bit values and extended after the mux, so that Yosys sees an 8 x 8 product
          // and maps it to one DSP (a mux of extended values became a 32 x 32 multiply).
          // The `valid ?` select is always true here; it keeps Yosys 0.23's iCE40 DSP packing
          // (`synth_ice40 -dsp`) from folding the adder and psum_q into the SB_MAC16, which it
          // gets wrong: it dropped the sign-extended upper bits of psum_q and lost two PEs of
          // the 2x4 array (checked by tests/sim/synth.cmake's iCE40 netlist test). The zero is
          // a signed AccWidth literal so that the sum stays signed.
          // The WIDTH waiver: the cast extends the signed 8-bit mux, as intended.
          /* verilator lint_off WIDTH */
          psum_q <= psum + (valid ? AccWidth'(a) * AccWidth'(swap ? shadow_q : wgt_q)
                                  : AccWidth'(0));
          /* verilator lint_on WIDTH */
          if (swap) wgt_q <= shadow_q;
        end
      end

      if (j == ArrayCols - 1) begin : g_right  // the right edge passes its activation nowhere
        logic unused_act;
        assign unused_act = ^{act_q, swap_q, valid_q};  // valid_q: used at the bottom only
      end
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Output de-skew: column j leaves the array C-1-j cycles before column C-1                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  for (genvar j = 0; j < ArrayCols; j++) begin : g_deskew
    localparam int unsigned Delay = ArrayCols - 1 - j;
    if (Delay == 0) begin : g_direct
      assign out_o[j*AccWidth+:AccWidth] = g_row[ArrayRows-1].g_col[j].psum_q;
    end else begin : g_delay
      logic [Delay*AccWidth-1:0] psum_sr;  // a shift register, newest in the low slot

      always_ff @(posedge clk_i) begin  // datapath: no reset
        if (en) psum_sr <= (Delay*AccWidth)'({psum_sr, g_row[ArrayRows-1].g_col[j].psum_q});
      end

      assign out_o[j*AccWidth+:AccWidth] = psum_sr[(Delay-1)*AccWidth +: AccWidth];
    end
  end

  // The bottom-right PE is the last to see an activation vector: its valid is the output's.
  assign out_valid_o = g_row[ArrayRows-1].g_col[ArrayCols-1].valid_q;

endmodule : psm_systolic_array
