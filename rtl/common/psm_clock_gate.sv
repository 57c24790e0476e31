// SPDX-License-Identifier: Apache-2.0
// Clock gate of one unit: gclk_o follows clk_i while en_i is high and stays low otherwise, like
// an integrated clock-gating cell (the enable is latched while the clock is low, so the gated
// clock never glitches). A gated unit keeps its state and costs a simulator nothing.
// Golden model: none (no data path; the units it clocks have their own golden twins).
//
// FPGA flows define PSM_NO_CLOCK_GATING: gclk_o is then clk_i itself, and the units idle on
// their own enables, which hold every register of an idle unit (the same cycles, the same
// results: the end-to-end tests run both ways).
module psm_clock_gate (
  input  logic clk_i,
  input  logic en_i,    // clock the unit in the next cycle
  output logic gclk_o
);
`ifdef PSM_NO_CLOCK_GATING
  logic unused_en;
  assign unused_en = en_i;
  assign gclk_o    = clk_i;
`else
  logic en_l;
  always_latch begin
    if (!clk_i) en_l = en_i;
  end
  assign gclk_o = clk_i && en_l;
`endif
endmodule : psm_clock_gate
