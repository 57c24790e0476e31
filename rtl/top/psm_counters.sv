// SPDX-License-Identifier: Apache-2.0
// Performance counters of docs/isa.md ("Performance counters"), COUNTER_WIDTH bits each.
// Golden model: none; CpuDevice has no timing (RunStats::has_cycles is false there).
// Per-instruction numbers come from psm_trace instead (one record per unit instruction).
//
// Every busy cycle is attributed to the op class of each unit that is busy, and to class
// control when no unit is busy (program fetch, decode, NOP, the last cycle of BARRIER/END).
// So, as long as units do not overlap (the compiler puts a BARRIER between units), the six
// cycles_<class> counters add up to total_cycles exactly. Counters wrap at 2^48 (in practice
// they never get there) and count only while the run is active; clear_i zeroes them all.
module psm_counters #(
  parameter int unsigned Units     = 3,   // dma, matmul, vector
  parameter int unsigned PassWidth = 24   // passes a unit may start in one cycle
) (
  input  logic                                clk_i,
  input  logic                                rst_i,          // synchronous, active high
  input  logic                                clear_i,        // CTRL.clear_counters
  input  logic                                active_i,       // STATUS.busy
  // Per unit: busy, and the op class of the instruction it runs
  input  logic [Units-1:0]                    unit_busy_i,
  input  logic [Units*4-1:0]                  unit_class_i,
  input  logic [Units*PassWidth-1:0]          unit_passes_i,  // passes started this cycle
  input  logic                                mem_stall_i,
  input  logic                                unit_stall_i,
  input  logic                                instret_i,
  // Read-out (CNT_SEL)
  input  logic [psm_pkg::CNT_INDEX_WIDTH-1:0] sel_index_i,
  output logic [psm_pkg::COUNTER_WIDTH-1:0]   sel_value_o,
  output logic [psm_pkg::COUNTER_WIDTH-1:0]   total_cycles_o
);
  localparam int unsigned CntWidth   = psm_pkg::COUNTER_WIDTH;
  localparam int unsigned NumCnt     = psm_pkg::NUM_COUNTERS;
  localparam int unsigned Classes    = 6;   // op_class_e values 0..5
  localparam int unsigned FirstCycle = 4;   // CNT_CYCLES_MATMUL: cycles_<class> = 4 + class
  localparam int unsigned FirstPass  = 10;  // CNT_PASSES_MATMUL: passes_<class> = 10 + class
  // Counter indices as plain integers (array subscripts).
  localparam int unsigned CntTotal     = 32'(psm_pkg::CNT_TOTAL_CYCLES);
  localparam int unsigned CntBusyDma   = 32'(psm_pkg::CNT_BUSY_DMA);
  localparam int unsigned CntBusyMm    = 32'(psm_pkg::CNT_BUSY_MATMUL);
  localparam int unsigned CntBusyVec   = 32'(psm_pkg::CNT_BUSY_VECTOR);
  localparam int unsigned CntMemStall  = 32'(psm_pkg::CNT_MEM_STALL);
  localparam int unsigned CntUnitStall = 32'(psm_pkg::CNT_UNIT_STALL);
  localparam int unsigned CntInstret   = 32'(psm_pkg::CNT_INSTRET);
  localparam int unsigned ClassControl = 32'(psm_pkg::OpClassControl);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Global counters                                                                         //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [Units-1:0]     cls_ok;     // unit u's op class is a valid one
  logic [CntWidth-1:0]  inc [NumCnt];

  always_comb begin
    for (int u = 0; u < Units; u++) cls_ok[u] = 32'(unit_class_i[u*4 +: 4]) < Classes;
  end

  always_comb begin
    for (int i = 0; i < NumCnt; i++) inc[i] = '0;
    if (active_i) begin
      inc[CntTotal]     = CntWidth'(1);
      inc[CntBusyDma]   = CntWidth'(unit_busy_i[0]);
      inc[CntBusyMm]    = CntWidth'(unit_busy_i[1]);
      inc[CntBusyVec]   = CntWidth'(unit_busy_i[2]);
      inc[CntMemStall]  = CntWidth'(mem_stall_i);
      inc[CntUnitStall] = CntWidth'(unit_stall_i);
      // Cycles: one per class that has a busy unit; control when no unit is busy.
      for (int u = 0; u < Units; u++) begin
        if (unit_busy_i[u] && cls_ok[u]) begin
          inc[FirstCycle + 32'(unit_class_i[u*4 +: 4])] = CntWidth'(1);
        end
      end
      if (unit_busy_i == '0) inc[FirstCycle + ClassControl] = CntWidth'(1);
    end
    // Passes and retired instructions are events: they count even in the cycle a run ends.
    for (int u = 0; u < Units; u++) begin
      if (cls_ok[u]) begin
        inc[FirstPass + 32'(unit_class_i[u*4 +: 4])] +=
            CntWidth'(unit_passes_i[u*PassWidth +: PassWidth]);
      end
    end
    inc[CntInstret] = CntWidth'(instret_i);
  end

  logic [CntWidth-1:0] cnt_q [NumCnt];

  always_ff @(posedge clk_i) begin  // counters: reset and CTRL.clear_counters; wrap at 2^48
    if (rst_i || clear_i) begin
      for (int i = 0; i < NumCnt; i++) cnt_q[i] <= '0;
    end else begin
      for (int i = 0; i < NumCnt; i++) cnt_q[i] <= cnt_q[i] + inc[i];
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Read-out                                                                                //
  //////////////////////////////////////////////////////////////////////////////////////////////

  always_comb begin
    sel_value_o = '0;
    if (32'(sel_index_i) < NumCnt) sel_value_o = cnt_q[sel_index_i[$clog2(NumCnt)-1:0]];
  end

  assign total_cycles_o = cnt_q[CntTotal];
endmodule : psm_counters
