// SPDX-License-Identifier: Apache-2.0
// Fixed-priority arbiter in front of one single-port psm_ram: requester 0 always wins, then
// 1, and so on. A requester that is not granted keeps its request up and retries.
// Golden model: none (no data transformation; CpuDevice has no port contention).
//
// The RAM's read data is shared: a requester whose read was granted in cycle t finds its word
// on the RAM's rdata_o in cycle t + 1. Requester 0 is never stalled, which is what the vector
// units need (docs/accelerator.md: "the scratchpad never stalls"). Write data is not muxed
// here: the parent selects it with gnt_o (a wide Ports x Width bus would be assembled by a
// simulator in every cycle).
module psm_spad_arbiter #(
  parameter int unsigned Ports     = 3,   // requesters, 0 = highest priority
  parameter int unsigned AddrWidth = 10,
  parameter int unsigned Lanes     = 2    // write-mask bits
) (
  // Requesters, packed: requester p uses bits [p*X +: X]
  input  logic [Ports-1:0]           req_i,
  input  logic [Ports-1:0]           we_i,
  input  logic [Ports*AddrWidth-1:0] addr_i,
  input  logic [Ports*Lanes-1:0]     wmask_i,
  output logic [Ports-1:0]           gnt_o,
  // The RAM
  output logic                       ram_req_o,
  output logic                       ram_we_o,
  output logic [AddrWidth-1:0]       ram_addr_o,
  output logic [Lanes-1:0]           ram_wmask_o
);
  always_comb begin
    gnt_o       = '0;
    ram_req_o   = 1'b0;
    ram_we_o    = 1'b0;
    ram_addr_o  = addr_i[AddrWidth-1:0];
    ram_wmask_o = wmask_i[Lanes-1:0];
    // Walk from the lowest priority up so that the highest-priority request is applied last.
    for (int p = Ports - 1; p >= 0; p--) begin
      if (req_i[p]) begin
        gnt_o       = '0;
        gnt_o[p]    = 1'b1;
        ram_req_o   = 1'b1;
        ram_we_o    = we_i[p];
        ram_addr_o  = addr_i[p*AddrWidth +: AddrWidth];
        ram_wmask_o = wmask_i[p*Lanes +: Lanes];
      end
    end
  end
endmodule : psm_spad_arbiter
