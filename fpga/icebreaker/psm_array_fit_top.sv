// SPDX-License-Identifier: Apache-2.0
// Place-and-route check of the tiny systolic array (psm_systolic_array, 2 x 4 by default) on
// the iCEBreaker's iCE40 UP5K (sg48). The array's ports are far wider than the package's pins,
// so they are reached through two scan chains, driven from pins that may be slow and are
// asynchronous to the board's 12 MHz oscillator (each pin is synchronised, edges detected):
//   - scan_en_i high: each rising edge of scan_clk_i shifts scan_i into the stimulus register
//     (last bit in = bit 0) and the result register one bit towards scan_o (MSB first);
//   - a rising edge of step_i (with scan_en_i low) applies the stimulus for one cycle: weight
//     row loads, activation valid and swap flags, the activation vector;
//   - with scan_en_i low, each valid result row of the array (R + C - 1 cycles after a step)
//     overwrites the result register, so it holds the last row; rows that arrive while
//     scan_en_i is high are dropped.
// Every PE, the skew and the de-skew stay live through synthesis. This top checks fit and
// timing; it is not a host interface (fpga/README.md).
module psm_array_fit_top #(
  parameter int unsigned ArrayRows = 2,
  parameter int unsigned ArrayCols = 4
) (
  input  logic clk_i,       // 12 MHz oscillator
  input  logic btn_ni,      // user button, active low: reset
  input  logic scan_en_i,
  input  logic scan_clk_i,
  input  logic scan_i,
  input  logic step_i,
  output logic scan_o,
  output logic led_no       // red LED, active low: lit while scan_o is high (after a capture:
                            // the result register holds a valid row)
);
  localparam int unsigned DataWidth = 8;
  localparam int unsigned AccWidth  = 32;
  // Stimulus: {wgt_load[R], wgt[C x 8], act_valid, act_swap, act[R x 8]}
  localparam int unsigned StimBits   = ArrayRows + ArrayCols*DataWidth + 2 + ArrayRows*DataWidth;
  // Result: {out_valid, out[C x 32]}
  localparam int unsigned ResultBits = 1 + ArrayCols*AccWidth;

  // Two flip-flops per pin, a third for the edge detectors; the button becomes a synchronous
  // active-high reset.
  logic [1:0] rst_sync_q, en_sync_q, data_sync_q;
  logic [2:0] sclk_sync_q, step_sync_q;
  logic       rst, scan_en, scan_in, shift, step;

  always_ff @(posedge clk_i) begin  // synchronisers: no reset
    rst_sync_q  <= {rst_sync_q[0], !btn_ni};
    en_sync_q   <= {en_sync_q[0], scan_en_i};
    data_sync_q <= {data_sync_q[0], scan_i};
    sclk_sync_q <= {sclk_sync_q[1:0], scan_clk_i};
    step_sync_q <= {step_sync_q[1:0], step_i};
  end
  assign rst     = rst_sync_q[1];
  assign scan_en = en_sync_q[1];
  assign scan_in = data_sync_q[1];
  assign shift   = scan_en && sclk_sync_q[1] && !sclk_sync_q[2];
  assign step    = !scan_en && step_sync_q[1] && !step_sync_q[2];

  logic [StimBits-1:0]   stim_q;
  logic [ResultBits-1:0] result_q;

  // Array ports, unpacked from the stimulus register
  logic [ArrayRows-1:0]           wgt_load;
  logic [ArrayCols*DataWidth-1:0] wgt;
  logic                           act_valid, act_swap;
  logic [ArrayRows*DataWidth-1:0] act;
  logic                           out_valid;
  logic [ArrayCols*AccWidth-1:0]  out;

  assign wgt_load  = step ? stim_q[StimBits-1 -: ArrayRows] : '0;
  assign wgt       = stim_q[ArrayRows*DataWidth + 2 +: ArrayCols*DataWidth];
  assign act_valid = step && stim_q[ArrayRows*DataWidth + 1];
  assign act_swap  = stim_q[ArrayRows*DataWidth];
  assign act       = stim_q[ArrayRows*DataWidth-1:0];

  psm_systolic_array #(
    .ArrayRows (ArrayRows),
    .ArrayCols (ArrayCols),
    .DataWidth (DataWidth),
    .AccWidth  (AccWidth)
  ) u_array (
    .clk_i,
    .rst_i       (rst),
    .wgt_load_i  (wgt_load),
    .wgt_i       (wgt),
    .act_valid_i (act_valid),
    .act_swap_i  (act_swap),
    .act_i       (act),
    .out_valid_o (out_valid),
    .out_o       (out)
  );

  always_ff @(posedge clk_i) begin  // data: no reset
    if (shift) stim_q <= {stim_q[StimBits-2:0], scan_in};
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst)                        result_q <= '0;
    else if (shift)                 result_q <= {result_q[ResultBits-2:0], 1'b0};
    else if (!scan_en && out_valid) result_q <= {1'b1, out};
  end

  assign scan_o = result_q[ResultBits-1];
  assign led_no = !result_q[ResultBits-1];
endmodule : psm_array_fit_top
