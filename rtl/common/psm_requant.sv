// SPDX-License-Identifier: Apache-2.0
// Requantiser: y = saturate(round_shift(x * mult, shift), out_bits), one rounding step.
// Golden model: passim::requantize() in runtime/include/passim/fixed_point.hpp.
//
// Latency: 2 cycles (two register stages), fully pipelined (a new x every cycle): inputs
// presented with en_i high in cycle t appear on y_o in cycle t + 2. Datapath only: no reset.
// The user delays its own valid bit by 2 cycles alongside. While en_i is low nothing is
// sampled, and y_o holds once the last sample has left the pipeline (clock-enable: an idle
// unit's requantisers do not toggle).
//
//   stage 1: prod = x * mult                      exact, 63 bits signed (|prod| < 2^62)
//   stage 2: y    = sat((prod + 2^(shift-1)) >>> shift, out_bits)
//                   bias only when shift > 0 ("round half up": ties go toward +infinity,
//                   so -1.5 -> -1 and +1.5 -> +2), arithmetic shift, then clamp to the
//                   signed range of out_bits (2..32; any other value clamps to 32 bits).
//
// Widths: |prod| <= 2^31 * (2^31 - 1) < 2^62 and bias <= 2^62, so prod + bias < 2^63 fits a
// signed 64-bit sum exactly (the same int64 arithmetic as the golden round_shift).
module psm_requant (
  input  logic               clk_i,
  input  logic               en_i,        // sample x/mult/shift/out_bits this cycle
  input  logic signed [31:0] x_i,         // int32 accumulator
  input  logic        [30:0] mult_i,      // unsigned 31-bit multiplier, M ~= mult / 2^shift
  input  logic        [5:0]  shift_i,     // 0..63
  input  logic        [5:0]  out_bits_i,  // 2..32 (any other value saturates to 32)
  output logic signed [31:0] y_o          // saturated, sign-extended to 32 bits
);
  //////////////////////////////////////////////////////////////////////////////////////////////
  // Stage 1: exact product                                                                   //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic signed [63:0] prod_q;  // x (32 bits signed) * mult (31 bits unsigned) fits 63 bits
  logic        [5:0]  shift_q;
  logic        [5:0]  out_bits_q;
  logic               en_q;

  always_ff @(posedge clk_i) begin  // datapath: no reset
    en_q <= en_i;
    if (en_i) begin
      // Both operands signed (mult gets a 0 sign bit), extended to the 64-bit result width.
      prod_q     <= 64'(x_i) * 64'($signed({1'b0, mult_i}));
      shift_q    <= shift_i;
      out_bits_q <= out_bits_i;
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Stage 2: one rounding step, then saturation                                              //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // round_shift() and saturate() of fixed_point.hpp on 64 bits.
  function automatic logic signed [31:0] round_sat(input logic signed [63:0] prod,
                                                   input logic        [5:0]  shift,
                                                   input logic        [5:0]  bits);
    logic signed [63:0] bias, shifted, hi, lo;
    logic        [5:0]  b;
    bias    = (shift == 6'd0) ? 64'sd0 : (64'sd1 <<< (shift - 6'd1));  // 2^(shift-1)
    shifted = (prod + bias) >>> shift;  // arithmetic: floor division by 2^shift
    b       = (bits >= 6'd2 && bits <= 6'd32) ? bits : 6'd32;
    hi      = (64'sd1 <<< (b - 6'd1)) - 64'sd1;
    lo      = -hi - 64'sd1;
    if (shifted > hi)      round_sat = hi[31:0];
    else if (shifted < lo) round_sat = lo[31:0];
    else                   round_sat = shifted[31:0];
  endfunction

  logic signed [31:0] y_q;

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (en_q) y_q <= round_sat(prod_q, shift_q, out_bits_q);
  end

  assign y_o = y_q;
endmodule : psm_requant
