// SPDX-License-Identifier: Apache-2.0
// Place-and-route check of the tiny systolic array (psm_systolic_array, 2 x 4 by default) on
// the iCEBreaker's iCE40 UP5K (sg48). The array's ports are far wider than the package's pins,
// so they are reached through two scan chains clocked by the board's 12 MHz oscillator:
//   - scan_en_i high: every cycle shifts scan_i into the stimulus register (MSB first) and
//     the result register out on scan_o;
//   - step_i high (with scan_en_i low): applies the stimulus to the array for one cycle
//     (weight row loads, activation valid/swap, the activation vector);
//   - every cycle with out_valid: the array's de-skewed int32 outputs land in the result
//     register, so every PE and the de-skew stay live through synthesis.
// This top checks fit and timing; it is not a host interface (see fpga/README.md).
module psm_array_fit_top #(
  parameter int unsigned ArrayRows = 2,
  parameter int unsigned ArrayCols = 4
) (
  input  logic clk_i,       // 12 MHz oscillator
  input  logic btn_ni,      // user button, active low: reset
  input  logic scan_en_i,
  input  logic scan_i,
  input  logic step_i,
  output logic scan_o,
  output logic led_no       // red LED, active low: lit while out_valid was the last capture
);
  localparam int unsigned DataWidth = 8;
  localparam int unsigned AccWidth  = 32;
  // Stimulus: {wgt_load[R], wgt[C x 8], act_valid, act_swap, act[R x 8]}
  localparam int unsigned StimBits   = ArrayRows + ArrayCols*DataWidth + 2 + ArrayRows*DataWidth;
  // Result: {out_valid, out[C x 32]}
  localparam int unsigned ResultBits = 1 + ArrayCols*AccWidth;

  // Pins are asynchronous to clk_i: two flip-flops each, then a synchronous active-high reset.
  logic [1:0] rst_sync_q, en_sync_q, scan_sync_q, step_sync_q;
  logic       rst, scan_en, scan_in, step;

  always_ff @(posedge clk_i) begin  // control: reset
    rst_sync_q  <= {rst_sync_q[0], !btn_ni};
    en_sync_q   <= {en_sync_q[0], scan_en_i};
    scan_sync_q <= {scan_sync_q[0], scan_i};
    step_sync_q <= {step_sync_q[0], step_i};
  end
  assign rst     = rst_sync_q[1];
  assign scan_en = en_sync_q[1];
  assign scan_in = scan_sync_q[1];
  assign step    = step_sync_q[1] && !scan_en;

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
    if (scan_en) begin
      stim_q   <= {stim_q[StimBits-2:0], scan_in};
      result_q <= {result_q[ResultBits-2:0], 1'b0};
    end else if (out_valid) begin
      result_q <= {1'b1, out};
    end
  end

  assign scan_o = result_q[ResultBits-1];
  assign led_no = !result_q[ResultBits-1];
endmodule
