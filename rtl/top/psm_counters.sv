// SPDX-License-Identifier: Apache-2.0
// Performance counters of docs/isa.md ("Performance counters"), COUNTER_WIDTH bits each.
// Golden model: none; CpuDevice has no timing (RunStats::has_cycles is false there).
// Per-instruction numbers come from psm_trace instead (one record per unit instruction).
//
// Every busy cycle is attributed to the op class of each unit that is busy, and to class
// control when no unit is busy (program fetch, decode, NOP, the last cycle of BARRIER/END).
// The compiler keeps the matmul and vector units apart (a BARRIER between them) and lets only
// the DMA overlap them, so the cycles_<class> counters add up to total_cycles plus
// dma_hidden, the DMA cycles behind compute; dma_hidden + dma_exposed = busy_dma. Counters
// wrap at 2^48 (in practice they never get there) and count only while the run is active;
// clear_i zeroes them all.
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
  input  logic [Units*PassWidth-1:0]          unit_saturated_i,  // results clamped this cycle
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
  // cycles_<class> = FirstCycle + class and passes_<class> = FirstPass + class (op_class_e
  // values 0 .. Classes - 1; spec/passim.json lists the counters in that order).
  localparam int unsigned FirstCycle = 32'(psm_pkg::CNT_CYCLES_MATMUL);
  localparam int unsigned FirstPass  = 32'(psm_pkg::CNT_PASSES_MATMUL);
  localparam int unsigned Classes    = FirstPass - FirstCycle;
  // Counter indices as plain integers (array subscripts).
  localparam int unsigned CntTotal     = 32'(psm_pkg::CNT_TOTAL_CYCLES);
  localparam int unsigned CntBusyDma   = 32'(psm_pkg::CNT_BUSY_DMA);
  localparam int unsigned CntBusyMm    = 32'(psm_pkg::CNT_BUSY_MATMUL);
  localparam int unsigned CntBusyVec   = 32'(psm_pkg::CNT_BUSY_VECTOR);
  localparam int unsigned CntMemStall  = 32'(psm_pkg::CNT_MEM_STALL);
  localparam int unsigned CntUnitStall = 32'(psm_pkg::CNT_UNIT_STALL);
  localparam int unsigned CntInstret   = 32'(psm_pkg::CNT_INSTRET);
  localparam int unsigned CntDmaHidden = 32'(psm_pkg::CNT_DMA_HIDDEN);
  localparam int unsigned CntDmaExposd = 32'(psm_pkg::CNT_DMA_EXPOSED);
  localparam int unsigned CntSaturated = 32'(psm_pkg::CNT_SATURATED);
  localparam int unsigned ClassControl = 32'(psm_pkg::OpClassControl);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Counters                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The increment of counter i in this cycle: 1 for an event, a pass count for passes_<class>.
  // It is evaluated inside the register update, once per clock edge: the inputs depend on the
  // memory port, and a simulator evaluates logic outside registers that depends on a
  // top-level input at every evaluation of the model.
  function automatic logic [CntWidth-1:0] increment(
      input int unsigned                 i,
      input logic                        active,
      input logic [Units-1:0]            busy,
      input logic [Units*4-1:0]          cls,
      input logic [Units*PassWidth-1:0]  passes,
      input logic [Units*PassWidth-1:0]  saturated,
      input logic                        mem_stall,
      input logic                        unit_stall,
      input logic                        instret);
    logic [CntWidth-1:0] inc;
    inc = '0;
    if (active) begin
      if (i == CntTotal)     inc = CntWidth'(1);
      if (i == CntBusyDma)   inc = CntWidth'(busy[0]);
      if (i == CntBusyMm)    inc = CntWidth'(busy[1]);
      if (i == CntBusyVec)   inc = CntWidth'(busy[2]);
      if (i == CntMemStall)  inc = CntWidth'(mem_stall);
      if (i == CntUnitStall) inc = CntWidth'(unit_stall);
      // DMA behind compute (the matmul or vector unit busy as well) or exposed (neither).
      if (i == CntDmaHidden) inc = CntWidth'(busy[0] && (busy[1] || busy[2]));
      if (i == CntDmaExposd) inc = CntWidth'(busy[0] && !busy[1] && !busy[2]);
      // Cycles: one per class that has a busy unit; control when no unit is busy.
      if (i >= FirstCycle && i < FirstCycle + Classes) begin
        for (int u = 0; u < Units; u++) begin
          if (busy[u] && 32'(cls[u*4 +: 4]) == i - FirstCycle) inc = CntWidth'(1);
        end
        if (i == FirstCycle + ClassControl && busy == '0) inc = CntWidth'(1);
      end
    end
    // Passes, clamped results and retired instructions are events: they count even in the
    // cycle a run ends.
    if (i >= FirstPass && i < FirstPass + Classes) begin
      for (int u = 0; u < Units; u++) begin
        if (32'(cls[u*4 +: 4]) == i - FirstPass) inc += CntWidth'(passes[u*PassWidth +: PassWidth]);
      end
    end
    if (i == CntSaturated) begin
      for (int u = 0; u < Units; u++) inc += CntWidth'(saturated[u*PassWidth +: PassWidth]);
    end
    if (i == CntInstret) inc = CntWidth'(instret);
    increment = inc;
  endfunction

  // One register per counter (a simulator updates an unpacked array's elements through a flag
  // each, in every cycle).
  logic [CntWidth-1:0] cnt_value [NumCnt];

  for (genvar i = 0; i < NumCnt; i++) begin : g_cnt
    logic [CntWidth-1:0] cnt_q;

    always_ff @(posedge clk_i) begin  // counters: reset and CTRL.clear_counters; wrap at 2^48
      if (rst_i || clear_i) cnt_q <= '0;
      else cnt_q <= cnt_q + increment(i, active_i, unit_busy_i, unit_class_i, unit_passes_i,
                                      unit_saturated_i, mem_stall_i, unit_stall_i, instret_i);
    end

    assign cnt_value[i] = cnt_q;
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Read-out                                                                                //
  //////////////////////////////////////////////////////////////////////////////////////////////

  always_comb begin
    sel_value_o = '0;
    if (32'(sel_index_i) < NumCnt) sel_value_o = cnt_value[sel_index_i[$clog2(NumCnt)-1:0]];
  end

  assign total_cycles_o = g_cnt[CntTotal].cnt_q;
endmodule : psm_counters
