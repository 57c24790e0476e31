// SPDX-License-Identifier: Apache-2.0
// Sequential unsigned integer division (restoring), StepBits quotient bits per cycle.
// Golden model: C++ unsigned `/` as used by passim::kernels::softmax_i16() (the reciprocal) and
// passim::rsqrt_requant() (mult = 2^59 / s); quotient = floor(dividend / divisor).
//
// Timing: start_i in cycle 0, Steps = ceil(Width / StepBits) iteration cycles (busy_o),
// done_o pulses in cycle Steps + 1 with quotient_o valid; quotient_o then holds until the
// next start_i. Each cycle chains StepBits one-bit restoring steps (a compare and subtract
// each); with StepBits = 2, a 64-bit division takes 33 cycles.
// The divisor must be non-zero (the callers guarantee it; asserted in simulation).
module psm_divider #(
  parameter int unsigned Width    = 64,
  parameter int unsigned StepBits = 2   // quotient bits per cycle, >= 1
) (
  input  logic             clk_i,
  input  logic             rst_i,       // synchronous, active high
  input  logic             start_i,     // one-cycle pulse; ignored while busy_o
  input  logic [Width-1:0] dividend_i,  // unsigned, sampled with start_i
  input  logic [Width-1:0] divisor_i,   // unsigned, non-zero, sampled with start_i
  output logic             busy_o,
  output logic             done_o,      // one-cycle pulse: quotient_o is valid
  output logic [Width-1:0] quotient_o   // floor(dividend / divisor)
);
  // The operands are zero-extended to a whole number of steps: the extra top dividend bits
  // give zero quotient bits, and the quotient of Width-bit operands fits Width bits.
  localparam int unsigned Steps      = (Width + StepBits - 1) / StepBits;
  localparam int unsigned PWidth     = Steps * StepBits;
  localparam int unsigned CountWidth = $clog2(Steps + 1);

  logic [CountWidth-1:0] count_q;  // iterations left
  logic                  done_q;

  // Datapath: the dividend shifts out of quo_q at the top while quotient bits shift in at the
  // bottom; the remainder is always below the divisor, so it fits PWidth bits.
  logic [PWidth-1:0] quo_q;
  logic [PWidth-1:0] rem_q;
  logic [PWidth-1:0] divisor_q;

  // StepBits restoring steps on PWidth bits. In each, 2 * rem + next dividend bit is
  // rem_hi * 2^PWidth + rem_lo; with rem_hi set it exceeds any divisor, and the difference
  // (below the divisor) is exact modulo 2^PWidth, so no wider arithmetic is needed.
  // Evaluated only while iterating.
  logic [PWidth-1:0] quo_next, rem_next;
  always_comb begin
    logic              rem_hi;      // bit PWidth of 2 * rem + next dividend bit
    logic [PWidth-1:0] rem_lo;      // its low PWidth bits
    logic              bit_is_one;  // the quotient bit of this step
    rem_hi     = 1'b0;
    rem_lo     = '0;
    bit_is_one = 1'b0;
    quo_next   = quo_q;
    rem_next   = rem_q;
    if (count_q != '0) begin
      for (int unsigned b = 0; b < StepBits; b++) begin
        rem_hi     = rem_next[PWidth-1];
        rem_lo     = {rem_next[PWidth-2:0], quo_next[PWidth-1]};
        bit_is_one = rem_hi || (rem_lo >= divisor_q);
        rem_next   = bit_is_one ? rem_lo - divisor_q : rem_lo;
        quo_next   = {quo_next[PWidth-2:0], bit_is_one};
      end
    end
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      count_q <= '0;
      done_q  <= 1'b0;
    end else if (start_i || count_q != '0 || done_q) begin  // idle: nothing to evaluate
      done_q <= (count_q == CountWidth'(1));
      if (start_i && count_q == '0) count_q <= CountWidth'(Steps);
      else if (count_q != '0)       count_q <= count_q - CountWidth'(1);
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start_i && count_q == '0) begin
      quo_q     <= PWidth'(dividend_i);
      rem_q     <= '0;
      divisor_q <= PWidth'(divisor_i);
    end else if (count_q != '0) begin
      quo_q <= quo_next;
      rem_q <= rem_next;
    end
  end

  assign busy_o     = (count_q != '0);
  assign done_o     = done_q;
  assign quotient_o = quo_q[Width-1:0];

`ifndef SYNTHESIS
  DivisorNonZero_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (start_i && count_q == '0) |-> divisor_i != '0)
    else $error("psm_divider: division by zero");
`endif
endmodule : psm_divider
