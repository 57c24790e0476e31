// SPDX-License-Identifier: Apache-2.0
// Reciprocal square root as a requantisation step: mult / 2^shift ~= 1 / sqrt(x).
// Golden model: passim::rsqrt_requant() in runtime/src/fixed_point.cpp.
//
// 1. Normalise: shift x left by 2 bits per cycle (k times) until it is in [2^60, 2^62).
// 2. s = isqrt(x << 2k) in [2^30, 2^31) (psm_isqrt, 32 cycles).
// 3. mult = floor(2^59 / s) in (2^28, 2^29] (psm_divider, 30 cycles).
// 4. shift = 59 - k + extra_shift.
// Timing: start_i in cycle 0; done_o pulses in cycle 65 + k (k = (62 - bit_width(x)) / 2,
// 0..30), with mult_o and shift_o valid until the next start_i. Precondition (as in the golden
// model): 1 <= x < 2^62 and shift <= 63.
module psm_rsqrt (
  input  logic        clk_i,
  input  logic        rst_i,          // synchronous, active high
  input  logic        start_i,        // one-cycle pulse; ignored while busy_o
  input  logic [63:0] x_i,            // unsigned, in [1, 2^62), sampled with start_i
  input  logic [5:0]  extra_shift_i,  // power-of-two scale folded into shift, sampled with start
  output logic        busy_o,
  output logic        done_o,         // one-cycle pulse: mult_o and shift_o are valid
  output logic [30:0] mult_o,         // unsigned, in (2^28, 2^29]
  output logic [5:0]  shift_o         // 59 - k + extra_shift, in [0, 63]
);
  localparam int unsigned DivWidth = 60;  // the dividend 2^59 needs 60 bits

  typedef enum logic [1:0] {
    StIdle,       // wait for start_i
    StNormalise,  // shift x left by 2 until bit 60 or 61 is set
    StSqrt,       // wait for psm_isqrt
    StDivide      // wait for psm_divider
  } rsqrt_state_e;

  rsqrt_state_e state_d, state_q;

  always_ff @(posedge clk_i) begin  // control: reset
    state_q <= rst_i ? StIdle : state_d;
  end

  // Datapath registers (no reset).
  logic [63:0] x_norm_q;       // x << 2k
  logic [4:0]  k_q;            // normalisation shift / 2, 0..30
  logic [5:0]  extra_shift_q;

  logic        normalised;
  assign normalised = (x_norm_q[63:60] != 4'd0) || (k_q == 5'd30);  // k = 30 bounds x = 0

  // Square root of the normalised value.
  logic        sqrt_start;
  logic        sqrt_done;
  logic        sqrt_busy;
  logic [31:0] sqrt_root;

  psm_isqrt u_isqrt (.clk_i, .rst_i, .start_i(sqrt_start), .radicand_i(x_norm_q),
                     .busy_o(sqrt_busy), .done_o(sqrt_done), .root_o(sqrt_root));

  // mult = 2^59 / s.
  logic                div_start;
  logic                div_done;
  logic                div_busy;
  logic [DivWidth-1:0] div_quotient;

  psm_divider #(.Width(DivWidth)) u_divider (
    .clk_i, .rst_i, .start_i(div_start), .dividend_i(DivWidth'(1) << 59),
    .divisor_i(DivWidth'(sqrt_root)), .busy_o(div_busy), .done_o(div_done),
    .quotient_o(div_quotient)
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  always_comb begin
    state_d    = state_q;
    sqrt_start = 1'b0;
    div_start  = 1'b0;
    unique case (state_q)
      // Wait for a command; the datapath latches x and extra_shift.
      StIdle: begin
        if (start_i) state_d = StNormalise;
      end
      // One even shift per cycle; start the square root once x is in [2^60, 2^62).
      StNormalise: begin
        if (normalised) begin
          sqrt_start = 1'b1;
          state_d    = StSqrt;
        end
      end
      // The root is ready: start the division.
      StSqrt: begin
        if (sqrt_done) begin
          div_start = 1'b1;
          state_d   = StDivide;
        end
      end
      // The quotient is ready (done_o pulses now).
      StDivide: begin
        if (div_done) state_d = StIdle;
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (state_q == StIdle && start_i) begin
      x_norm_q      <= x_i;
      k_q           <= 5'd0;
      extra_shift_q <= extra_shift_i;
    end else if (state_q == StNormalise && !normalised) begin
      x_norm_q <= {x_norm_q[61:0], 2'b00};
      k_q      <= k_q + 5'd1;
    end
  end

  // shift = 59 - k + extra_shift, computed in 7 bits so an out-of-range shift can be asserted.
  logic [6:0] shift_full;
  assign shift_full = 7'd59 - 7'(k_q) + 7'(extra_shift_q);

  assign busy_o  = (state_q != StIdle);
  assign done_o  = (state_q == StDivide) && div_done;
  assign mult_o  = div_quotient[30:0];
  assign shift_o = shift_full[5:0];

  // The quotient is at most 2^29; the sub-units' busy flags are implied by the state.
  logic unused_bits;
  assign unused_bits = ^{div_quotient[DivWidth-1:31], sqrt_busy, div_busy};

`ifndef SYNTHESIS
  InputInRange_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (state_q == StIdle && start_i) |-> (x_i != 64'd0 && x_i[63:62] == 2'b00))
    else $error("psm_rsqrt: x = %0d outside [1, 2^62)", x_i);
  ShiftInRange_A : assert property (@(posedge clk_i) disable iff (rst_i)
      done_o |-> shift_full <= 7'd63)
    else $error("psm_rsqrt: shift %0d > 63", shift_full);
  RootInRange_A : assert property (@(posedge clk_i) disable iff (rst_i)
      div_start |-> sqrt_root[31:30] == 2'b01)
    else $error("psm_rsqrt: root %0d outside [2^30, 2^31)", sqrt_root);
`endif
endmodule : psm_rsqrt
