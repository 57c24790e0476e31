// SPDX-License-Identifier: Apache-2.0
// Sequential unsigned integer division (restoring), one quotient bit per cycle.
// Golden model: C++ unsigned `/` as used by passim::kernels::softmax_i16() (the reciprocal) and
// passim::rsqrt_requant() (mult = 2^59 / s); quotient = floor(dividend / divisor).
//
// Timing: start_i in cycle 0, Width iteration cycles (busy_o), done_o pulses in cycle
// Width + 1 with quotient_o valid; quotient_o then holds until the next start_i.
// The divisor must be non-zero (the callers guarantee it; asserted in simulation).
module psm_divider #(
  parameter int unsigned Width = 64
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
  localparam int unsigned CountWidth = $clog2(Width + 1);

  logic [CountWidth-1:0] count_q;  // iterations left
  logic                  done_q;

  // Datapath: the dividend shifts out of quo_q at the top while quotient bits shift in at the
  // bottom; the remainder is always below the divisor, so it fits Width bits.
  logic [Width-1:0] quo_q;
  logic [Width-1:0] rem_q;
  logic [Width-1:0] divisor_q;

  // One restoring step on Width bits: 2 * rem + next dividend bit is rem_hi * 2^Width + rem_lo.
  // With rem_hi set it exceeds any divisor, and the difference (below the divisor) is exact
  // modulo 2^Width, so no Width+1-bit arithmetic is needed. Evaluated only while iterating.
  logic             rem_hi;      // bit Width of 2 * rem + next dividend bit
  logic [Width-1:0] rem_lo;      // its low Width bits
  logic             bit_is_one;  // the quotient bit of this step
  logic [Width-1:0] rem_next;
  always_comb begin
    rem_hi     = 1'b0;
    rem_lo     = '0;
    bit_is_one = 1'b0;
    rem_next   = '0;
    if (count_q != '0) begin
      rem_hi     = rem_q[Width-1];
      rem_lo     = {rem_q[Width-2:0], quo_q[Width-1]};
      bit_is_one = rem_hi || (rem_lo >= divisor_q);
      rem_next   = bit_is_one ? rem_lo - divisor_q : rem_lo;
    end
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      count_q <= '0;
      done_q  <= 1'b0;
    end else if (start_i || count_q != '0 || done_q) begin  // idle: nothing to evaluate
      done_q <= (count_q == CountWidth'(1));
      if (start_i && count_q == '0) count_q <= CountWidth'(Width);
      else if (count_q != '0)       count_q <= count_q - CountWidth'(1);
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start_i && count_q == '0) begin
      quo_q     <= dividend_i;
      rem_q     <= '0;
      divisor_q <= divisor_i;
    end else if (count_q != '0) begin
      quo_q <= {quo_q[Width-2:0], bit_is_one};
      rem_q <= rem_next;
    end
  end

  assign busy_o     = (count_q != '0);
  assign done_o     = done_q;
  assign quotient_o = quo_q;

`ifndef SYNTHESIS
  DivisorNonZero_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (start_i && count_q == '0) |-> divisor_i != '0)
    else $error("psm_divider: division by zero");
`endif
endmodule : psm_divider
