// SPDX-License-Identifier: Apache-2.0
// Clock gate of one unit: gclk_o follows clk_i while the unit needs its clock and stays low
// otherwise, like an integrated clock-gating cell (the enable is latched while the clock is
// low, so the gated clock never glitches). The unit is clocked while wake_i (a command, an
// abort or a reset reaches it) or busy_i is high, and with Tail for two cycles after busy_i
// falls (its done pulse and requantiser pipelines settle). Without Tail it is a plain gate on
// wake_i (a memory clocked in the cycles it is accessed). A gated unit keeps its state and
// costs a simulator nothing.
// Golden model: none (no data path; the units it clocks have their own golden twins).
//
// FPGA flows define PSM_NO_CLOCK_GATING: gclk_o is then clk_i itself, and the units idle on
// their own enables, which hold every register of an idle unit (the same cycles, the same
// results: the end-to-end tests run both ways).
module psm_clock_gate #(
  parameter bit Tail = 1'b1  // keep the clock two cycles after busy_i falls
) (
  input  logic clk_i,
  input  logic rst_i,   // synchronous, active high
  input  logic wake_i,  // clock the unit in this cycle's edge (command, abort, reset)
  input  logic busy_i,  // the unit's busy_o
  output logic gclk_o
);
`ifdef PSM_NO_CLOCK_GATING
  logic unused_inputs;
  assign unused_inputs = ^{rst_i, wake_i, busy_i, Tail};
  assign gclk_o        = clk_i;
`else
  logic en, en_l;

  if (Tail) begin : g_tail
    logic busy_q, busy_q2;  // busy_i one and two cycles ago

    always_ff @(posedge clk_i) begin  // control: reset
      if (rst_i) begin
        busy_q  <= 1'b0;
        busy_q2 <= 1'b0;
      end else begin
        busy_q  <= busy_i;
        busy_q2 <= busy_q;
      end
    end

    assign en = wake_i || busy_i || busy_q || busy_q2;
  end else begin : g_plain
    logic unused_inputs;
    assign unused_inputs = rst_i;
    assign en            = wake_i || busy_i;
  end

  always_latch begin
    if (!clk_i) en_l = en;
  end
  assign gclk_o = clk_i && en_l;
`endif
endmodule : psm_clock_gate
