// SPDX-License-Identifier: Apache-2.0
// Integer square root floor(sqrt(x)) of a 64-bit unsigned value, one result bit per cycle.
// Golden model: passim::isqrt_u64() in runtime/src/fixed_point.cpp (Newton there, digit
// recurrence here; both return the exact floor for every input).
//
// Digit recurrence (restoring, base 4): bring down the next two bits of x into the partial
// remainder; the next root bit is 1 if remainder >= 4 * root + 1.
// Timing: start_i in cycle 0, 32 iteration cycles (busy_o), done_o pulses in cycle 33 with
// root_o valid; root_o then holds its value until the next start_i.
module psm_isqrt (
  input  logic        clk_i,
  input  logic        rst_i,       // synchronous, active high
  input  logic        start_i,     // one-cycle pulse; ignored while busy_o
  input  logic [63:0] radicand_i,  // unsigned, sampled with start_i
  output logic        busy_o,
  output logic        done_o,      // one-cycle pulse: root_o is valid
  output logic [31:0] root_o       // floor(sqrt(radicand)), unsigned
);
  // Control: iteration counter (32 .. 1 while busy) and the done pulse.
  logic [5:0] count_q;
  logic       done_q;

  // Datapath. The partial remainder stays below 2 * root + 1 <= 2^33, so after bringing down
  // two more bits it needs 35 bits.
  logic [63:0] x_q;    // radicand bits not yet used, most significant pair on top
  logic [34:0] rem_q;  // partial remainder
  logic [31:0] root_q; // root bits found so far

  logic [34:0] rem_shifted;
  logic [34:0] trial;
  logic        bit_is_one;
  always_comb begin  // only an iteration uses them (0 while idle)
    rem_shifted = '0;
    trial       = '0;
    bit_is_one  = 1'b0;
    if (count_q != 6'd0) begin
      rem_shifted = {rem_q[32:0], x_q[63:62]};
      trial       = {1'b0, root_q, 2'b01};  // 4 * root + 1
      bit_is_one  = (rem_shifted >= trial);
    end
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      count_q <= 6'd0;
      done_q  <= 1'b0;
    end else begin
      done_q <= (count_q == 6'd1);
      if (start_i && count_q == 6'd0) count_q <= 6'd32;
      else if (count_q != 6'd0)       count_q <= count_q - 6'd1;
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start_i && count_q == 6'd0) begin
      x_q    <= radicand_i;
      rem_q  <= '0;
      root_q <= '0;
    end else if (count_q != 6'd0) begin
      x_q    <= {x_q[61:0], 2'b00};
      rem_q  <= bit_is_one ? rem_shifted - trial : rem_shifted;
      root_q <= {root_q[30:0], bit_is_one};
    end
  end

  assign busy_o = (count_q != 6'd0);
  assign done_o = done_q;
  assign root_o = root_q;

  // The remainder never reaches 2^33, so its top two bits are never shifted further.
  logic unused_rem;
  assign unused_rem = ^rem_q[34:33];

`ifndef SYNTHESIS
  RemainderBounded_A : assert property (@(posedge clk_i) disable iff (rst_i)
      busy_o |-> rem_q <= {2'b00, root_q, 1'b0})
    else $error("psm_isqrt: remainder %0d exceeds 2 * root (%0d)", rem_q, root_q);
`endif
endmodule : psm_isqrt
