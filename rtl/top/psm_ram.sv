// SPDX-License-Identifier: Apache-2.0
// Single-port synchronous RAM with a per-lane write mask: one read or one write per cycle.
// Golden model: the on-chip memory arrays of passim::CpuDevice in
// runtime/src/device/cpu_device.cpp.
//
// A read request in cycle t returns the word on rdata_o in cycle t + 1; rdata_o holds its
// value until the next read. The contents have no reset (they map to block RAM).
module psm_ram #(
  parameter int unsigned Depth     = 256,  // words
  parameter int unsigned Lanes     = 1,    // write-mask granules per word
  parameter int unsigned LaneWidth = 8,    // bits per granule
  parameter bit          ClockGate = 1'b0, // clock the array only in cycles with req_i
  // Derived
  localparam int unsigned AddrWidth = (Depth > 1) ? $clog2(Depth) : 1,
  localparam int unsigned Width     = Lanes * LaneWidth
) (
  input  logic                 clk_i,
  input  logic                 req_i,    // read or write this cycle
  input  logic                 we_i,     // 1 = write
  input  logic [AddrWidth-1:0] addr_i,   // word address
  input  logic [Width-1:0]     wdata_i,
  input  logic [Lanes-1:0]     wmask_i,  // per-lane write enable
  output logic [Width-1:0]     rdata_o   // the word read in the previous cycle
);
  logic [Width-1:0] mem_q [Depth];
  logic [Width-1:0] rdata_q;

  // With ClockGate the array and its read register see a clock edge only in the cycles the
  // memory is accessed (psm_clock_gate on req_i, like a RAM macro's chip enable): the same
  // behaviour, and an idle memory costs a simulator nothing. PSM_NO_CLOCK_GATING makes it clk_i.
  logic ram_clk;

  if (ClockGate) begin : g_gate
    psm_clock_gate #(.Tail(1'b0)) u_cg (
      .clk_i,
      .rst_i (1'b0),
      .wake_i(req_i),
      .busy_i(1'b0),
      .gclk_o(ram_clk)
    );
  end else begin : g_free
    assign ram_clk = clk_i;
  end

  always_ff @(posedge ram_clk) begin  // datapath: no reset
    if (req_i && we_i) begin
      for (int l = 0; l < Lanes; l++) begin
        if (wmask_i[l]) begin
          mem_q[addr_i][l*LaneWidth +: LaneWidth] <= wdata_i[l*LaneWidth +: LaneWidth];
        end
      end
    end
    if (req_i && !we_i) rdata_q <= mem_q[addr_i];
  end

  assign rdata_o = rdata_q;
endmodule : psm_ram
