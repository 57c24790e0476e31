// SPDX-License-Identifier: Apache-2.0
// Requantiser: y = saturate(round_shift((x + bias) * mult, shift), out_bits), one rounding step.
// Golden model: passim::requantize() in runtime/include/passim/fixed_point.hpp.
//
// Latency: 2 cycles (two register stages), fully pipelined (a new x every cycle): inputs
// presented with en_i high in cycle t appear on y_o (and sat_o) in cycle t + 2. sat_o feeds
// the `saturated` counter where y_o is a unit's result; elsewhere it is left open.
// Datapath only: no reset.
// The user delays its own valid bit by 2 cycles alongside. While en_i is low nothing is
// sampled, and y_o holds once the last sample has left the pipeline (clock-enable: a unit
// raises en_i only in the cycles whose inputs it will use, so its requantisers stay still
// otherwise, in hardware and in simulation).
//
//   stage 1: prod = (x + bias) * mult             exact: x + bias in 33 bits (no int32 wrap),
//                                                 prod in 64 bits signed (|prod| < 2^63)
//   stage 2: y    = sat((prod + 2^(shift-1)) >>> shift, out_bits)
//                   rounding term only when shift > 0 ("round half up": ties go toward
//                   +infinity, so -1.5 -> -1 and +1.5 -> +2), arithmetic shift, then clamp to
//                   the signed range of out_bits (2..32; any other value clamps to 32 bits).
//
// Widths: |x + bias| <= 2^31 + 2^25 and mult <= 2^31 - 1, so |prod| < 2^62 + 2^56. The sum with
// the rounding term (<= 2^62) may need 65 bits, so stage 2 never forms it: for shift > 0,
// floor((prod + 2^(shift-1)) / 2^shift) = floor((floor(prod / 2^(shift-1)) + 1) / 2), two
// arithmetic shifts and an increment on 64 bits, exact for every input. (The golden int64
// round_shift agrees wherever its sum fits int64: everywhere except shift 63 with
// prod >= 2^62, which needs x + bias > 2^31 and so never comes from a MATMUL.)
// Only the matmul read-out has a bias (Requant.bias, param entry bits [63:38]); every other
// user ties bias_i to 0.
module psm_requant (
  input  logic               clk_i,
  input  logic               en_i,        // sample x/mult/shift/out_bits this cycle
  input  logic signed [31:0] x_i,         // int32 accumulator
  input  logic signed [25:0] bias_i,      // Requant.bias, added to x first (0 but in matmul)
  input  logic        [30:0] mult_i,      // unsigned 31-bit multiplier, M ~= mult / 2^shift
  input  logic        [5:0]  shift_i,     // 0..63
  input  logic        [5:0]  out_bits_i,  // 2..32 (any other value saturates to 32)
  output logic signed [31:0] y_o,         // saturated, sign-extended to 32 bits
  output logic               sat_o        // y_o was clamped to the range of out_bits
);
  //////////////////////////////////////////////////////////////////////////////////////////////
  // Stage 1: exact product                                                                   //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic signed [32:0] x_biased;  // x + bias: 33 bits, never wraps
  logic signed [63:0] prod_q;    // (x + bias) (33 bits signed) * mult (31 bits unsigned)
  logic        [5:0]  shift_q;
  logic        [5:0]  out_bits_q;
  logic               en_q;

  assign x_biased = 33'(x_i) + 33'(bias_i);

  always_ff @(posedge clk_i) begin  // datapath: no reset
    en_q <= en_i;
    if (en_i) begin
      // Both operands signed (mult gets a 0 sign bit), extended to the 64-bit result width.
      prod_q     <= 64'(x_biased) * 64'($signed({1'b0, mult_i}));
      shift_q    <= shift_i;
      out_bits_q <= out_bits_i;
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Stage 2: one rounding step, then saturation                                              //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // round_shift() and saturate() of fixed_point.hpp, exact on 64 bits (see Widths above). A
  // 65-bit sum would be multi-word arithmetic in every simulated cycle of a busy requantiser.
  // Returns {clamped, y}.
  function automatic logic [32:0] round_sat(input logic signed [63:0] prod,
                                            input logic        [5:0]  shift,
                                            input logic        [5:0]  bits);
    logic signed [63:0] shifted, hi, lo;
    logic        [5:0]  b;
    // Arithmetic shifts: floor division. |prod >>> (shift - 1)| < 2^62 + 2^56, so the
    // increment cannot wrap.
    if (shift == 6'd0) shifted = prod;
    else               shifted = ((prod >>> (shift - 6'd1)) + 64'sd1) >>> 1;
    b       = (bits >= 6'd2 && bits <= 6'd32) ? bits : 6'd32;
    hi      = (64'sd1 <<< (b - 6'd1)) - 64'sd1;
    lo      = -hi - 64'sd1;
    if (shifted > hi)      round_sat = {1'b1, hi[31:0]};
    else if (shifted < lo) round_sat = {1'b1, lo[31:0]};
    else                   round_sat = {1'b0, shifted[31:0]};
  endfunction

  logic signed [31:0] y_q;
  logic               sat_q;

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (en_q) {sat_q, y_q} <= round_sat(prod_q, shift_q, out_bits_q);
  end

  assign y_o   = y_q;
  assign sat_o = sat_q;
endmodule : psm_requant
