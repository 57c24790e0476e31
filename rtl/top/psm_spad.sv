// SPDX-License-Identifier: Apache-2.0
// One scratchpad memory of the accelerator: a psm_spad_arbiter (requester 0 first) in front of
// a psm_ram. A requester granted a read in cycle t finds its word on rdata_o in cycle t + 1.
// Golden model: the on-chip memory arrays of passim::CpuDevice in
// runtime/src/device/cpu_device.cpp.
//
// Write data is not muxed here (a wide Ports x Width bus would be assembled by a simulator in
// every cycle): the parent presents the granted writer's word on wdata_i when we_o is high.
module psm_spad #(
  parameter int unsigned Ports     = 2,     // requesters, 0 = highest priority
  parameter int unsigned Depth     = 256,   // words
  parameter int unsigned Lanes     = 1,     // write-mask granules per word
  parameter int unsigned LaneWidth = 8,     // bits per granule
  parameter bit          ClockGate = 1'b0,  // clock the array only in cycles it is accessed
  // Derived
  localparam int unsigned AddrWidth = (Depth > 1) ? $clog2(Depth) : 1
) (
  input  logic                       clk_i,
  // Requesters, packed: requester p uses bits [p*X +: X]
  input  logic [Ports-1:0]           req_i,
  input  logic [Ports-1:0]           we_i,
  input  logic [Ports*AddrWidth-1:0] addr_i,
  input  logic [Ports*Lanes-1:0]     wmask_i,
  output logic [Ports-1:0]           gnt_o,
  output logic                       we_o,     // the granted request writes
  input  logic [Lanes*LaneWidth-1:0] wdata_i,  // its word
  output logic [Lanes*LaneWidth-1:0] rdata_o
);
  logic                 ram_req;
  logic [AddrWidth-1:0] ram_addr;
  logic [Lanes-1:0]     ram_wmask;

  psm_spad_arbiter #(.Ports(Ports), .AddrWidth(AddrWidth), .Lanes(Lanes)) u_arb (
    .req_i, .we_i, .addr_i, .wmask_i, .gnt_o, .ram_req_o(ram_req), .ram_we_o(we_o),
    .ram_addr_o(ram_addr), .ram_wmask_o(ram_wmask)
  );

  psm_ram #(.Depth(Depth), .Lanes(Lanes), .LaneWidth(LaneWidth), .ClockGate(ClockGate)) u_ram (
    .clk_i, .req_i(ram_req), .we_i(we_o), .addr_i(ram_addr), .wdata_i, .wmask_i(ram_wmask),
    .rdata_o
  );
endmodule : psm_spad
