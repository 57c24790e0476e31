// SPDX-License-Identifier: Apache-2.0
// Per-instruction trace: one record per unit instruction (its index, busy cycles, stall cycles,
// passes and clamped results), presented on trace_* for one cycle when the unit's busy falls.
// Golden model: none; CpuDevice has no timing (RunStats::records stays empty there).
//
// One accumulator per unit. It counts the unit's busy cycles, stall cycles and reported
// passes, and is presented (trace_valid_o) in the first idle cycle after a busy stretch,
// which is the cycle the instruction ends; at that clock edge it restarts from zero. The
// controller may issue the unit's next instruction in that same cycle (a unit is issued only
// while idle): the record still shows the old instruction, because unit_pc_i changes at the
// edge and the new instruction's first busy cycle is the next one.
//
//   cycle        s      s+1 ...  f-1      f       f+1
//   unit_start   1                        (1)
//   busy_i       0      1   ...  1        0       (1)
//   unit_pc_i    -      A   ...  A        A       (B)
//   trace_valid  0      0   ...  0        1       0      record A: cycles = f - s - 1
//
// Every pass lands in exactly one record: passes reported while the unit is busy go to its
// instruction, passes reported in an idle cycle (e.g. at issue) to the next record that
// closes. The DMA, the matmul stage and the vector unit report passes only while busy; the
// assertions below check that no pass arrives in the cycle a record closes, where it would be
// charged to the next instruction. The accumulators wrap (32 and PassWidth bits); no
// instruction of a compiled program comes near 2^32 cycles.
module psm_trace #(
  parameter int unsigned Units     = 3,   // 0 dma, 1 matmul, 2 vector
  parameter int unsigned PassWidth = 24   // passes a unit may report in one cycle
) (
  input  logic                       clk_i,
  input  logic                       rst_i,          // synchronous, active high
  input  logic [Units-1:0]           unit_busy_i,
  input  logic [Units*32-1:0]        unit_pc_i,      // index of the instruction each unit runs
  input  logic [Units-1:0]           unit_stall_i,   // the unit waits (DMA: memory port)
  input  logic [Units*PassWidth-1:0] unit_passes_i,  // passes reported this cycle
  input  logic [Units*PassWidth-1:0] unit_saturated_i,  // results clamped this cycle
  // One record per unit and instruction, valid for one cycle
  output logic [Units-1:0]           trace_valid_o,
  output logic [Units*32-1:0]        trace_pc_o,      // instruction index
  output logic [Units*32-1:0]        trace_cycles_o,  // busy cycles
  output logic [Units*32-1:0]        trace_stall_o,   // busy cycles with unit_stall_i
  output logic [Units*PassWidth-1:0] trace_passes_o,
  output logic [Units*PassWidth-1:0] trace_saturated_o
);
  logic [Units-1:0] close;  // a busy stretch ended: present the record

  // One accumulator per unit in its own scope: scalar registers, updated only while there is
  // something to count (a simulator then touches no wide vector every cycle).
  for (genvar u = 0; u < Units; u++) begin : g_unit
    logic                 busy_q;
    logic [31:0]          cycles_q, stall_q;
    logic [PassWidth-1:0] passes_q, sat_q;
    logic                 busy;
    logic [PassWidth-1:0] passes, sat;

    assign busy     = unit_busy_i[u];
    assign passes   = unit_passes_i[u*PassWidth +: PassWidth];
    assign sat      = unit_saturated_i[u*PassWidth +: PassWidth];
    assign close[u] = busy_q && !busy;

    always_ff @(posedge clk_i) begin  // counters: reset; wrap at 2^32 and 2^PassWidth
      if (rst_i) begin
        busy_q   <= 1'b0;
        cycles_q <= '0;
        stall_q  <= '0;
        passes_q <= '0;
        sat_q    <= '0;
      end else begin
        busy_q <= busy;
        if (close[u]) begin
          cycles_q <= 32'd0;
          stall_q  <= 32'd0;
          passes_q <= passes;
          sat_q    <= sat;
        end else begin
          if (busy) begin
            cycles_q <= cycles_q + 32'd1;
            if (unit_stall_i[u]) stall_q <= stall_q + 32'd1;
          end
          if (passes != '0) passes_q <= passes_q + passes;
          if (sat != '0)    sat_q    <= sat_q + sat;
        end
      end
    end

    assign trace_cycles_o[u*32 +: 32]               = cycles_q;
    assign trace_stall_o[u*32 +: 32]                = stall_q;
    assign trace_passes_o[u*PassWidth +: PassWidth] = passes_q;
    assign trace_saturated_o[u*PassWidth +: PassWidth] = sat_q;
  end

  assign trace_valid_o = close;
  assign trace_pc_o    = unit_pc_i;

`ifndef SYNTHESIS
  for (genvar u = 0; u < Units; u++) begin : g_check
    NoPassAtClose_A: assert property (@(posedge clk_i) disable iff (rst_i)
        close[u] |-> unit_passes_i[u*PassWidth +: PassWidth] == '0);
    NoSaturatedAtClose_A: assert property (@(posedge clk_i) disable iff (rst_i)
        close[u] |-> unit_saturated_i[u*PassWidth +: PassWidth] == '0);
  end
`endif
endmodule : psm_trace
