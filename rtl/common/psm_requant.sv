// SPDX-License-Identifier: Apache-2.0
// Requantiser: y = saturate(round_shift(x * mult, shift), out_bits), one rounding step.
// Golden model: passim::requantize() in runtime/include/passim/fixed_point.hpp.
//
// Latency: 2 cycles (two register stages), fully pipelined (a new x every cycle): inputs
// presented in cycle t appear on y_o in cycle t + 2. Datapath only: no reset, no valid; the
// user delays its own valid bit by 2 cycles alongside.
//
//   stage 1: prod = x * mult                      exact, 63 bits signed (|prod| < 2^62)
//   stage 2: y    = sat((prod + 2^(shift-1)) >>> shift, out_bits)
//                   bias only when shift > 0 ("round half up": ties go toward +infinity,
//                   so -1.5 -> -1 and +1.5 -> +2), arithmetic shift, then clamp.
module psm_requant (
  input  logic               clk_i,
  input  logic signed [31:0] x_i,         // int32 accumulator
  input  logic        [30:0] mult_i,      // unsigned 31-bit multiplier, M ~= mult / 2^shift
  input  logic        [5:0]  shift_i,     // 0..63
  input  logic        [5:0]  out_bits_i,  // 8, 16 or 32 (any other value saturates to 32)
  output logic signed [31:0] y_o          // saturated, sign-extended to 32 bits
);
  // The sum prod + bias needs at most 64 bits (|prod| < 2^62, bias <= 2^62); one spare bit
  // keeps every intermediate exact without a proof in the reader's head.
  localparam int unsigned SumWidth = 65;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Stage 1: exact product                                                                   //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic signed [63:0] prod;  // x (32 bits signed) * mult (31 bits unsigned) fits 63 bits
  logic signed [63:0] prod_q;
  logic        [5:0]  shift_q;
  logic        [5:0]  out_bits_q;

  // Both operands signed (mult gets a 0 sign bit), extended to the 64-bit result width.
  assign prod = x_i * $signed({1'b0, mult_i});

  always_ff @(posedge clk_i) begin  // datapath: no reset
    prod_q     <= prod;
    shift_q    <= shift_i;
    out_bits_q <= out_bits_i;
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Stage 2: one rounding step, then saturation                                              //
  //////////////////////////////////////////////////////////////////////////////////////////////

  localparam logic signed [SumWidth-1:0] One = 65'sd1;

  logic signed [SumWidth-1:0] bias, sum, shifted;
  logic signed [SumWidth-1:0] sat_hi, sat_lo;
  logic signed [31:0]         y_d, y_q;

  assign bias = (shift_q == 6'd0) ? '0 : (One <<< (shift_q - 6'd1));  // 2^(shift-1)

  assign sum     = SumWidth'(prod_q) + bias;
  assign shifted = sum >>> shift_q;  // arithmetic: floor division by 2^shift

  always_comb begin
    unique case (out_bits_q)
      6'd8: begin
        sat_hi = 65'sd127;
        sat_lo = -65'sd128;
      end
      6'd16: begin
        sat_hi = 65'sd32767;
        sat_lo = -65'sd32768;
      end
      default: begin  // 32
        sat_hi = 65'sd2147483647;
        sat_lo = -65'sd2147483648;
      end
    endcase
  end

  always_comb begin
    y_d = shifted[31:0];
    if (shifted > sat_hi) y_d = sat_hi[31:0];
    if (shifted < sat_lo) y_d = sat_lo[31:0];
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    y_q <= y_d;
  end

  assign y_o = y_q;
endmodule : psm_requant
