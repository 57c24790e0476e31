// SPDX-License-Identifier: Apache-2.0
// Simple dual-port synchronous RAM: one read port and one write port, both usable in the same
// cycle (an FPGA block RAM's two ports; the weight scratchpad, where the DMA writes the next
// tile while the matmul stage reads this one). Reads return the word in the next cycle; a read
// of the word being written returns its old value; rdata_o holds its value until the next
// read. A per-lane write mask; the contents have no reset (they map to block RAM).
// Golden model: the on-chip memory arrays of passim::CpuDevice in
// runtime/src/device/cpu_device.cpp.
//
// With ClockGate the array is clocked only in cycles with a read or a write, as psm_ram.
module psm_ram_1r1w #(
  parameter int unsigned Depth     = 256,  // words
  parameter int unsigned Lanes     = 1,    // write-mask granules per word
  parameter int unsigned LaneWidth = 8,    // bits per granule
  parameter bit          ClockGate = 1'b0, // clock the array only in cycles with a read or a write
  localparam int unsigned AddrWidth = (Depth > 1) ? $clog2(Depth) : 1,
  localparam int unsigned Width     = Lanes * LaneWidth
) (
  input  logic                 clk_i,
  input  logic                 re_i,     // read port: read this cycle
  input  logic [AddrWidth-1:0] raddr_i,
  output logic [Width-1:0]     rdata_o,  // the word read in the previous cycle
  input  logic                 we_i,     // write port: write this cycle
  input  logic [AddrWidth-1:0] waddr_i,
  input  logic [Width-1:0]     wdata_i,
  input  logic [Lanes-1:0]     wmask_i   // per-lane write enable
);
  logic [Width-1:0] mem_q [Depth];
  logic [Width-1:0] rdata_q;

  logic ram_clk;

  if (ClockGate) begin : g_gate
    psm_clock_gate #(.Tail(1'b0)) u_cg (
      .clk_i,
      .rst_i (1'b0),
      .wake_i(re_i || we_i),
      .busy_i(1'b0),
      .gclk_o(ram_clk)
    );
  end else begin : g_free
    assign ram_clk = clk_i;
  end

  always_ff @(posedge ram_clk) begin  // datapath: no reset
    if (we_i) begin
      for (int l = 0; l < Lanes; l++) begin
        if (wmask_i[l]) begin
          mem_q[waddr_i][l*LaneWidth +: LaneWidth] <= wdata_i[l*LaneWidth +: LaneWidth];
        end
      end
    end
    if (re_i) rdata_q <= mem_q[raddr_i];
  end

  assign rdata_o = rdata_q;
endmodule : psm_ram_1r1w
