// SPDX-License-Identifier: Apache-2.0
// The port groups that every vector unit repeats, as macros for its module header
// (conventions: rtl/common/README.md, "The vector units"). A unit includes this file, names its
// parameters Lanes, AddrWidth and LenWidth (and ParamAddrWidth with a parameter-memory port),
// and writes the commas between the groups itself. Every simulation, lint and synthesis run
// reading a vector unit has rtl/common as an include directory (cmake/verilate.cmake, tests/sim,
// fpga/icebreaker_flow.cmake).
//
//   `PSM_VEC_PARAMS         Lanes      elements per scratchpad word (2)
//                           AddrWidth  scratchpad word address (16)
//                           LenWidth   row length and row count (16)
//   `PSM_VEC_START_PORTS    clk_i
//                           rst_i      synchronous, active high
//                           start_i    one-cycle pulse; every command field is valid with it;
//                                      ignored while busy_o
//   `PSM_VEC_ROW_PORTS      src_addr_i, dst_addr_i  first word of the input / output rows
//                                                   (dst may equal src)
//                           len_i, rows_i           elements per row and rows, each >= 1
//   `PSM_VEC_GAIN_ROW_PORTS src_addr_i, dst_addr_i  first word of the input / output row
//                           gain_addr_i             first word of the gain row (LayerNorm,
//                                                   BatchNorm: then the bias row)
//                           len_i                   elements in the row, >= 1
//   `PSM_VEC_DONE_PORTS     busy_o     busy from the cycle after start_i
//                           done_o     one-cycle pulse after the last write, busy_o already low
//   `PSM_VEC_PRM_PORTS      the parameter-memory port: prm_req_o, prm_addr_o; prm_rdata_i
//                           holds the entry requested in the previous cycle (a Requant entry:
//                           mult [30:0], shift [37:32])
//   `PSM_VEC_MEM_REQ_PORTS  the vector scratchpad port's requests (docs/accelerator.md):
//                           mem_req_o, mem_we_o, mem_addr_o, mem_wdata_o (Lanes x 32 bits,
//                           results sign-extended), mem_wmask_o (one bit per lane),
//                           mem_wsat_o (one bit per lane: the lane's result was clamped by
//                           the unit's final requantise or saturate step; read with the
//                           write, under mem_wmask_o, for the `saturated` counter)
//   `PSM_VEC_MEM_PORTS      the whole vector scratchpad port: the requests and mem_rdata_i,
//                           the data of the read requested in the previous cycle
`ifndef PSM_VECTOR_PORT_SVH
`define PSM_VECTOR_PORT_SVH

`define PSM_VEC_PARAMS \
  parameter int unsigned Lanes     = 2, \
  parameter int unsigned AddrWidth = 16, \
  parameter int unsigned LenWidth  = 16

`define PSM_VEC_START_PORTS \
  input  logic clk_i, \
  input  logic rst_i, \
  input  logic start_i

`define PSM_VEC_ROW_PORTS \
  input  logic [AddrWidth-1:0] src_addr_i, \
  input  logic [AddrWidth-1:0] dst_addr_i, \
  input  logic [LenWidth-1:0]  len_i, \
  input  logic [LenWidth-1:0]  rows_i

`define PSM_VEC_GAIN_ROW_PORTS \
  input  logic [AddrWidth-1:0] src_addr_i, \
  input  logic [AddrWidth-1:0] gain_addr_i, \
  input  logic [AddrWidth-1:0] dst_addr_i, \
  input  logic [LenWidth-1:0]  len_i

`define PSM_VEC_DONE_PORTS \
  output logic busy_o, \
  output logic done_o

`define PSM_VEC_PRM_PORTS \
  output logic                      prm_req_o, \
  output logic [ParamAddrWidth-1:0] prm_addr_o, \
  input  logic [63:0]               prm_rdata_i

`define PSM_VEC_MEM_REQ_PORTS \
  output logic                 mem_req_o, \
  output logic                 mem_we_o, \
  output logic [AddrWidth-1:0] mem_addr_o, \
  output logic [Lanes*32-1:0]  mem_wdata_o, \
  output logic [Lanes-1:0]     mem_wmask_o, \
  output logic [Lanes-1:0]     mem_wsat_o

`define PSM_VEC_MEM_PORTS \
  `PSM_VEC_MEM_REQ_PORTS, \
  input  logic [Lanes*32-1:0]  mem_rdata_i

`endif  // PSM_VECTOR_PORT_SVH
