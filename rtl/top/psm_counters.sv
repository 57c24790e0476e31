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
  // This cycle's events                                                                      //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Formed once per cycle and shared by the counters. Every input is a register or logic of
  // registers (psm_accel registers its port), so a simulator evaluates this once per clock edge.
  // cls_busy[c]: some busy unit runs an instruction of class c, or c is control and no unit is
  // busy. Class codes outside 0 .. Classes - 1 count nowhere.
  logic [15:0] cls_busy;
  logic        any_passes;  // some unit started passes this cycle
  logic        any_sat;     // some unit clamped results this cycle

  always_comb begin
    cls_busy = '0;
    for (int u = 0; u < Units; u++) begin
      if (unit_busy_i[u]) cls_busy[unit_class_i[u*4 +: 4]] = 1'b1;
    end
    if (unit_busy_i == '0) cls_busy[ClassControl] = 1'b1;
    any_passes = |unit_passes_i;
    any_sat    = |unit_saturated_i;
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Counters                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // One register per counter (a simulator updates an unpacked array's elements through a flag
  // each, in every cycle), each with only its own event: cycle counts while the run is active;
  // passes, clamped results and retired instructions are events that count even in the cycle a
  // run ends.
  logic [CntWidth-1:0] cnt_value [NumCnt];

  for (genvar i = 0; i < NumCnt; i++) begin : g_cnt
    logic [CntWidth-1:0] cnt_q;
    logic                tick;  // +1 this cycle
    logic                add;   // + inc this cycle
    logic [CntWidth-1:0] inc;

    if ((i >= FirstPass && i < FirstPass + Classes) || i == CntSaturated) begin : g_sum
      // passes_<class>: the sum over the units running an instruction of that class;
      // saturated: the sum over every unit.
      localparam bit IsSat = (i == CntSaturated);
      logic [Units*PassWidth-1:0] per_unit;
      assign per_unit = IsSat ? unit_saturated_i : unit_passes_i;
      assign add      = IsSat ? any_sat : any_passes;
      assign tick     = 1'b0;
      always_comb begin
        inc = '0;
        if (add) begin
          for (int u = 0; u < Units; u++) begin
            if (IsSat || 32'(unit_class_i[u*4 +: 4]) == i - FirstPass) begin
              inc += CntWidth'(per_unit[u*PassWidth +: PassWidth]);
            end
          end
        end
      end
    end else if (i == CntInstret) begin : g_instret
      assign tick = instret_i;
      assign add  = 1'b0;
      assign inc  = '0;
    end else begin : g_event
      logic ev;
      if (i == CntTotal) begin : g_total
        assign ev = 1'b1;
      end else if (i == CntBusyDma) begin : g_busy_dma
        assign ev = unit_busy_i[0];
      end else if (i == CntBusyMm) begin : g_busy_mm
        assign ev = unit_busy_i[1];
      end else if (i == CntBusyVec) begin : g_busy_vec
        assign ev = unit_busy_i[2];
      end else if (i == CntMemStall) begin : g_mem_stall
        assign ev = mem_stall_i;
      end else if (i == CntUnitStall) begin : g_unit_stall
        assign ev = unit_stall_i;
      end else if (i == CntDmaHidden) begin : g_dma_hidden  // behind compute
        assign ev = unit_busy_i[0] && (unit_busy_i[1] || unit_busy_i[2]);
      end else if (i == CntDmaExposd) begin : g_dma_exposed  // no compute unit busy
        assign ev = unit_busy_i[0] && !unit_busy_i[1] && !unit_busy_i[2];
      end else if (i >= FirstCycle && i < FirstCycle + Classes) begin : g_cycles
        assign ev = cls_busy[i - FirstCycle];
      end else begin : g_none
        assign ev = 1'b0;
      end
      assign tick = active_i && ev;
      assign add  = 1'b0;
      assign inc  = '0;
    end

    always_ff @(posedge clk_i) begin  // counters: reset and CTRL.clear_counters; wrap at 2^48
      if (rst_i || clear_i) cnt_q <= '0;
      else if (tick)        cnt_q <= cnt_q + CntWidth'(1);
      else if (add)         cnt_q <= cnt_q + inc;
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
