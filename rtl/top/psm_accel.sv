// SPDX-License-Identifier: Apache-2.0
// Passim accelerator top: host registers, controller with program memory, DMA engine on one
// memory port, the input / weight / param / vector memories, the matmul and vector units,
// the performance counters and the per-instruction trace (docs/isa.md, docs/accelerator.md).
// Golden model: passim::CpuDevice in runtime/src/device/cpu_device.cpp (same DRAM contents after
// every program).
//
//                 reg_*  +----------+  counters  +--------------+
//   host ---------------->| psm_regs |<-----------| psm_counters |
//                         +----+-----+            +------^-------+
//                              | start, status           | events
//   mem_* (DRAM) <--+    +-----v----------+ instr/start  |
//                   +----| psm_controller |--------------+-------------+
//                   |    +----------------+      |             |              |
//                   |   fetch        +-----------v--+  +-------v---------+  +-v---------------+
//                   +----------------| psm_dma      |  | psm_matmul_stage|  | psm_vector_unit |
//                                    +--+--+--+--+--+  +--+--+--+--+-----+  +--+----------+---+
//                      input, weight,   |  |  |  |       |  |  |  |           |          |
//                      param, vector <--+--+--+--+-------+--+--+--+-----------+----------+
//                      memories (psm_ram + psm_spad_arbiter: vector unit > matmul > DMA)
//
// psm_trace watches the same unit events and presents one record per unit instruction on
// trace_* (the harness collects them into RunStats::records).
//
// Clock clk_i, synchronous active-high reset rst_i. Every input is registered at the port
// (see "Port registers"): the host and the memory present each value a cycle ahead.
// CTRL.soft_reset resets the controller and the units (not the registers, counters or
// memories); the memory side must then drop the responses still owed (SimDevice does).
module psm_accel #(
  parameter int unsigned ArrayRows     = psm_pkg::TINY_ARRAY_ROWS,
  parameter int unsigned ArrayCols     = psm_pkg::TINY_ARRAY_COLS,
  parameter int unsigned Lanes         = psm_pkg::TINY_LANES,
  parameter int unsigned InputDepth    = psm_pkg::TINY_INPUT_DEPTH,
  parameter int unsigned WeightDepth   = psm_pkg::TINY_WEIGHT_DEPTH,
  parameter int unsigned VectorDepth   = psm_pkg::TINY_VECTOR_DEPTH,
  parameter int unsigned ParamDepth    = psm_pkg::TINY_PARAM_DEPTH,
  parameter int unsigned AccDepth      = psm_pkg::TINY_ACC_DEPTH,
  parameter int unsigned ProgDepth     = psm_pkg::TINY_PROG_DEPTH
) (
  input  logic                               clk_i,
  input  logic                               rst_i,            // synchronous, active high
  // Host registers (psm_regs) behind the port registers: a write takes effect at the second
  // clock edge, read data comes in the next cycle
  input  logic                               reg_we_i,
  input  logic                               reg_re_i,
  input  logic [psm_pkg::REG_ADDR_WIDTH-1:0] reg_addr_i,
  input  logic [31:0]                        reg_wdata_i,
  output logic [31:0]                        reg_rdata_o,
  // Memory port: 8-byte beats, in-order responses (read data or write acknowledgement);
  // mem_req_ready_i and mem_rsp_* are registered, so they are presented a cycle ahead
  output logic                               mem_req_valid_o,
  input  logic                               mem_req_ready_i,
  output logic                               mem_req_we_o,
  output logic [31:0]                        mem_req_addr_o,   // 8-byte aligned
  output logic [63:0]                        mem_req_wdata_o,
  output logic [7:0]                         mem_req_wstrb_o,
  input  logic                               mem_rsp_valid_i,
  input  logic [63:0]                        mem_rsp_rdata_i,
  input  logic                               mem_rsp_err_i,
  // Debug for the harness (run state, busy units, instruction indices)
  output logic                               run_busy_o,       // STATUS.busy
  output logic [2:0]                         unit_busy_o,      // {vector, matmul, dma}
  output logic [31:0]                        pc_o,
  output logic [95:0]                        unit_pc_o,        // {vector, matmul, dma} index
  // Per-instruction trace (psm_trace): a record per unit {vector, matmul, dma} in the cycle
  // its instruction ends
  output logic [2:0]                         trace_valid_o,
  output logic [95:0]                        trace_pc_o,       // instruction index
  output logic [95:0]                        trace_cycles_o,   // busy cycles
  output logic [95:0]                        trace_stall_o,    // stall cycles (DMA: memory)
  output logic [71:0]                        trace_passes_o,
  output logic [71:0]                        trace_saturated_o  // results clamped
);
  localparam int unsigned InAddrWidth  = $clog2(InputDepth);
  localparam int unsigned WgtAddrWidth = $clog2(WeightDepth);
  localparam int unsigned VecAddrWidth = $clog2(VectorDepth);
  localparam int unsigned PrmAddrWidth = $clog2(ParamDepth);
  // The configuration as one value for the controller and the units (psm_cfg_pkg), with the
  // sizes derived from it (psm_matmul's private output buffer, the memories' address widths).
  localparam psm_cfg_pkg::cfg_t Cfg = psm_cfg_pkg::make(ArrayRows, ArrayCols, Lanes,
      InputDepth, WeightDepth, VectorDepth, ParamDepth, AccDepth, ProgDepth);
  localparam int unsigned SpadWidth  = psm_accel_max4(ArrayRows * 8, ArrayCols * 8, Lanes * 32, 64);

  function automatic int unsigned psm_accel_max4(input int unsigned a, input int unsigned b,
                                                 input int unsigned c, input int unsigned d);
    int unsigned m;
    m = a;
    if (b > m) m = b;
    if (c > m) m = c;
    if (d > m) m = d;
    psm_accel_max4 = m;
  endfunction

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Port registers                                                                          //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Every input but the clock is registered here, and nothing else reads an input port: no
  // combinational path starts at a port. An FPGA build gets registered I/O, and the
  // Verilated model evaluates no logic twice per cycle (Verilator re-evaluates everything that
  // depends on an input at every eval(), and the harness evaluates each clock edge). The other
  // side presents each value one cycle ahead: reg_* the cycle before the access, mem_rsp_* the
  // cycle before the response's cycle, and mem_req_ready_i whether a request will be accepted
  // in the next cycle.
  logic                               rst_q;
  logic                               reg_we_q, reg_re_q;
  logic [psm_pkg::REG_ADDR_WIDTH-1:0] reg_addr_q;
  logic [31:0]                        reg_wdata_q;
  logic                               mem_req_ready_q, mem_rsp_valid_q, mem_rsp_err_q;
  logic [63:0]                        mem_rsp_rdata_q;
  logic                               soft_reset;  // CTRL.soft_reset (psm_regs, below)

  always_ff @(posedge clk_i) begin  // control: rst_q is the registered reset itself
    rst_q <= rst_i;
    if (rst_i) begin
      reg_we_q        <= 1'b0;
      reg_re_q        <= 1'b0;
      mem_req_ready_q <= 1'b0;
      mem_rsp_valid_q <= 1'b0;
    end else begin
      reg_we_q        <= reg_we_i;
      reg_re_q        <= reg_re_i;
      mem_req_ready_q <= mem_req_ready_i;
      mem_rsp_valid_q <= mem_rsp_valid_i && !soft_reset;  // owed before the soft reset
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset; read only with their valid bits
    if (reg_we_i || reg_re_i) begin
      reg_addr_q  <= reg_addr_i;
      reg_wdata_q <= reg_wdata_i;
    end
    if (mem_rsp_valid_i) begin
      mem_rsp_rdata_q <= mem_rsp_rdata_i;
      mem_rsp_err_q   <= mem_rsp_err_i;
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Registers, resets                                                                       //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic        start, clear_counters;
  logic [31:0] prog_addr, prog_len, watchdog;
  logic        run_busy, run_done;
  logic [7:0]  run_error;
  logic [31:0] error_info;
  logic [psm_pkg::CNT_INDEX_WIDTH-1:0] cnt_index;
  logic [psm_pkg::COUNTER_WIDTH-1:0]   cnt_value, total_cycles;

  psm_regs #(
    .ArrayRows(ArrayRows),
    .ArrayCols(ArrayCols),
    .Lanes    (Lanes)
  ) u_regs (
    .clk_i,
    .rst_i           (rst_q),
    .reg_we_i        (reg_we_q),
    .reg_re_i        (reg_re_q),
    .reg_addr_i      (reg_addr_q),
    .reg_wdata_i     (reg_wdata_q),
    .reg_rdata_o,
    .start_o         (start),
    .soft_reset_o    (soft_reset),
    .clear_counters_o(clear_counters),
    .prog_addr_o     (prog_addr),
    .prog_len_o      (prog_len),
    .watchdog_o      (watchdog),
    .busy_i          (run_busy),
    .done_i          (run_done),
    .error_i         (run_error),
    .error_info_i    (error_info),
    .cnt_index_o     (cnt_index),
    .cnt_value_i     (cnt_value),
    .total_cycles_i  (total_cycles)
  );

  logic sys_rst;    // controller and units
  logic unit_rst;   // matmul and vector units: also while the controller aborts
  logic abort;
  assign sys_rst  = rst_q || soft_reset;
  assign unit_rst = sys_rst || abort;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Controller                                                                              //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic                            fetch_active, fetch_req_valid, fetch_stall;
  logic [31:0]                     fetch_req_addr;
  logic [psm_pkg::INSTR_WIDTH-1:0] instr;
  logic [2:0]                      unit_start, unit_busy, unit_wait;
  logic                            mm_copy_in;
  logic                            dma_err;
  logic [11:0]                     unit_class;
  logic                            unit_stall, instret;

  psm_controller #(.Cfg(Cfg)) u_controller (
    .clk_i,
    .rst_i          (sys_rst),
    .start_i        (start),
    .prog_addr_i    (prog_addr),
    .prog_len_i     (prog_len),
    .watchdog_i     (watchdog),
    .busy_o         (run_busy),
    .done_o         (run_done),
    .error_o        (run_error),
    .error_info_o   (error_info),
    .fetch_active_o (fetch_active),
    .mem_req_valid_o(fetch_req_valid),
    .mem_req_ready_i(mem_req_ready_q),
    .mem_req_addr_o (fetch_req_addr),
    .mem_rsp_valid_i(mem_rsp_valid_q && fetch_active),
    .mem_rsp_rdata_i(mem_rsp_rdata_q),
    .mem_rsp_err_i  (mem_rsp_err_q),
    .fetch_stall_o  (fetch_stall),
    .instr_o        (instr),
    .unit_start_o   (unit_start),
    .unit_busy_i    (unit_wait),
    .dma_err_i      (dma_err),
    .abort_o        (abort),
    .unit_class_o   (unit_class),
    .unit_stall_o   (unit_stall),
    .instret_o      (instret),
    .pc_o,
    .unit_pc_o
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // DMA and the memory port                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic                 dma_busy, dma_done, dma_pass, dma_stall;
  logic [15:0]          dma_saturated;
  logic                 dma_req_valid, dma_req_we;
  logic [31:0]          dma_req_addr;
  logic [63:0]          dma_req_wdata;
  logic [7:0]           dma_req_wstrb;
  logic [2:0]           dma_mem;
  logic                 dma_spad_req, dma_spad_we, dma_spad_gnt;
  logic [15:0]          dma_spad_addr;
  logic [SpadWidth-1:0] dma_spad_wdata, dma_spad_rdata;

  // The DMA's clock gate (see the matmul stage and the vector unit below): on while it
  // moves data, while an instruction, an abort or a reset reaches it, and two cycles after.
  logic dma_clk;

  psm_clock_gate u_dma_cg (
    .clk_i,
    .rst_i (rst_q),
    .wake_i(sys_rst || abort || unit_start[0]),
    .busy_i(dma_busy),
    .gclk_o(dma_clk)
  );

  psm_dma #(
    .ArrayRows(ArrayRows),
    .ArrayCols(ArrayCols),
    .Lanes    (Lanes)
  ) u_dma (
    .clk_i          (dma_clk),
    .rst_i          (sys_rst),
    .start_i        (unit_start[0]),
    .instr_i        (instr),
    .abort_i        (abort),
    .busy_o         (dma_busy),
    .done_o         (dma_done),
    .pass_o         (dma_pass),
    .err_o          (dma_err),
    .stall_o        (dma_stall),
    .saturated_o    (dma_saturated),
    .mem_req_valid_o(dma_req_valid),
    .mem_req_ready_i(mem_req_ready_q && !fetch_active),
    .mem_req_we_o   (dma_req_we),
    .mem_req_addr_o (dma_req_addr),
    .mem_req_wdata_o(dma_req_wdata),
    .mem_req_wstrb_o(dma_req_wstrb),
    .mem_rsp_valid_i(mem_rsp_valid_q && !fetch_active),
    .mem_rsp_rdata_i(mem_rsp_rdata_q),
    .mem_rsp_err_i  (mem_rsp_err_q),
    .spad_mem_o     (dma_mem),
    .spad_req_o     (dma_spad_req),
    .spad_we_o      (dma_spad_we),
    .spad_addr_o    (dma_spad_addr),
    .spad_wdata_o   (dma_spad_wdata),
    .spad_gnt_i     (dma_spad_gnt),
    .spad_rdata_i   (dma_spad_rdata)
  );

  // The program fetch owns the port while it runs; the DMA the rest of the time.
  assign mem_req_valid_o = fetch_active ? fetch_req_valid : dma_req_valid;
  assign mem_req_we_o    = fetch_active ? 1'b0 : dma_req_we;
  assign mem_req_addr_o  = fetch_active ? fetch_req_addr : dma_req_addr;
  assign mem_req_wdata_o = dma_req_wdata;
  assign mem_req_wstrb_o = fetch_active ? 8'hff : dma_req_wstrb;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Matmul and vector units                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic                    mm_busy;
  logic [23:0]             mm_passes, mm_saturated;
  logic                    mm_in_req, mm_wt_req, mm_pm_req, mm_vs_req;
  logic                    mm_in_gnt, mm_wt_gnt, mm_pm_gnt, mm_vs_gnt;
  logic [InAddrWidth-1:0]  mm_in_addr;
  logic [WgtAddrWidth-1:0] mm_wt_addr;
  logic [PrmAddrWidth-1:0] mm_pm_addr;
  logic [VecAddrWidth-1:0] mm_vs_addr;
  logic [Lanes*32-1:0]     mm_vs_wdata;
  logic [Lanes-1:0]        mm_vs_wmask;
  logic [ArrayRows*8-1:0]  in_rdata;
  logic [ArrayCols*8-1:0]  wt_rdata;
  logic [63:0]             pm_rdata;
  logic [Lanes*32-1:0]     vs_rdata;

  // Clock gates: the matmul stage and the vector unit are clocked while they run, while a
  // command or a reset reaches them, and for two cycles after they finish (their done pulses
  // and requantiser pipelines settle); an idle unit holds every register anyway.
  logic mm_clk, vec_clk;

  psm_clock_gate u_mm_cg (
    .clk_i,
    .rst_i (rst_q),
    .wake_i(unit_rst || unit_start[1]),
    .busy_i(mm_busy),
    .gclk_o(mm_clk)
  );
  psm_clock_gate u_vec_cg (
    .clk_i,
    .rst_i (rst_q),
    .wake_i(unit_rst || unit_start[2]),
    .busy_i(vec_busy),
    .gclk_o(vec_clk)
  );

  psm_matmul_stage #(.Cfg(Cfg)) u_matmul_stage (
    .clk_i     (mm_clk),
    .rst_i     (unit_rst),
    .start_i   (unit_start[1]),
    .instr_i   (instr),
    .busy_o    (mm_busy),
    .vec_busy_i(vec_busy),
    .copy_in_o (mm_copy_in),
    .in_req_o  (mm_in_req),
    .in_addr_o (mm_in_addr),
    .in_gnt_i  (mm_in_gnt),
    .in_rdata_i(in_rdata),
    .wt_req_o  (mm_wt_req),
    .wt_addr_o (mm_wt_addr),
    .wt_gnt_i  (mm_wt_gnt),
    .wt_rdata_i(wt_rdata),
    .pm_req_o  (mm_pm_req),
    .pm_addr_o (mm_pm_addr),
    .pm_gnt_i  (mm_pm_gnt),
    .pm_rdata_i(pm_rdata),
    .vs_req_o  (mm_vs_req),
    .vs_addr_o (mm_vs_addr),
    .vs_wdata_o(mm_vs_wdata),
    .vs_wmask_o(mm_vs_wmask),
    .vs_gnt_i  (mm_vs_gnt),
    .passes_o  (mm_passes),
    .saturated_o(mm_saturated)
  );

  logic                    vec_busy;
  logic [23:0]             vec_passes, vec_saturated;
  logic                    vec_prm_req, vec_mem_req, vec_mem_we;
  logic [PrmAddrWidth-1:0] vec_prm_addr;
  logic [VecAddrWidth-1:0] vec_mem_addr;
  logic [Lanes*32-1:0]     vec_mem_wdata;
  logic [Lanes-1:0]        vec_mem_wmask;

  psm_vector_unit #(.Cfg(Cfg)) u_vector (
    .clk_i      (vec_clk),
    .rst_i      (unit_rst),
    .start_i    (unit_start[2]),
    .instr_i    (instr),
    .busy_o     (vec_busy),
    .passes_o   (vec_passes),
    .saturated_o(vec_saturated),
    .prm_req_o  (vec_prm_req),
    .prm_addr_o (vec_prm_addr),
    .prm_rdata_i(pm_rdata),
    .mem_req_o  (vec_mem_req),
    .mem_we_o   (vec_mem_we),
    .mem_addr_o (vec_mem_addr),
    .mem_wdata_o(vec_mem_wdata),
    .mem_wmask_o(vec_mem_wmask),
    .mem_rdata_i(vs_rdata)
  );

  assign unit_busy = {vec_busy, mm_busy, dma_busy};
  // A vector instruction waits while a MATMUL copies its requantisation steps: nothing may
  // take the parameter memory from that copy-in once the run has started (rtl/top/README.md).
  assign unit_wait = {vec_busy || mm_copy_in, mm_busy, dma_busy};

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Memories                                                                                //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // DMA requests go to the memory named by dma_mem; its word address is range-checked, so
  // each memory takes the low bits (named wires: Yosys 0.23 ignores size casts inside {}).
  logic dma_in_req, dma_wt_req, dma_pm_req, dma_vs_req;
  logic [InAddrWidth-1:0]  dma_in_addr;
  logic [WgtAddrWidth-1:0] dma_wt_addr;
  logic [PrmAddrWidth-1:0] dma_pm_addr;
  logic [VecAddrWidth-1:0] dma_vs_addr;
  assign dma_in_addr = dma_spad_addr[InAddrWidth-1:0];
  assign dma_wt_addr = dma_spad_addr[WgtAddrWidth-1:0];
  assign dma_pm_addr = dma_spad_addr[PrmAddrWidth-1:0];
  assign dma_vs_addr = dma_spad_addr[VecAddrWidth-1:0];
  assign dma_in_req = dma_spad_req && (dma_mem == psm_pkg::MemInput);
  assign dma_wt_req = dma_spad_req && (dma_mem == psm_pkg::MemWeight);
  assign dma_pm_req = dma_spad_req && (dma_mem == psm_pkg::MemParam);
  assign dma_vs_req = dma_spad_req && (dma_mem == psm_pkg::MemVector);

  // Input and weight memories: matmul stage (reads) > DMA; param memory: vector unit > matmul
  // stage > DMA; vector scratchpad: vector unit > matmul stage (writes) > DMA. Only the DMA
  // writes the first three.
  logic [1:0]          in_gnt, wt_gnt;
  logic [2:0]          pm_gnt, vs_gnt;
  logic                in_we, wt_we, pm_we, vs_we;
  logic [Lanes*32-1:0] vs_wdata;

  psm_spad #(.Ports(2), .Depth(InputDepth), .Lanes(ArrayRows), .LaneWidth(8)) u_input_mem (
    .clk_i, .req_i({dma_in_req, mm_in_req}), .we_i({dma_spad_we, 1'b0}),
    .addr_i({dma_in_addr, mm_in_addr}), .wmask_i({{ArrayRows{1'b1}}, {ArrayRows{1'b0}}}),
    .gnt_o(in_gnt), .we_o(in_we), .wdata_i(dma_spad_wdata[ArrayRows*8-1:0]), .rdata_o(in_rdata)
  );
  // The weight memory has a read port for the matmul stage and a write port for the DMA, both
  // usable in one cycle: a DMA_LOAD of the next tile runs at full speed under a MATMUL that
  // reads this one (the compiler double-buffers streamed tiles, docs/cycle-model.md). The
  // DMA's own reads (a DMA_STORE from the weight memory) take the read port when the stage
  // does not.
  logic wt_rd_req;
  assign wt_we     = dma_wt_req && dma_spad_we;
  assign wt_rd_req = mm_wt_req || (dma_wt_req && !dma_spad_we);
  assign wt_gnt    = {wt_we || (dma_wt_req && !mm_wt_req), mm_wt_req};
  psm_ram_1r1w #(
    .Depth(WeightDepth), .Lanes(ArrayCols), .LaneWidth(8), .ClockGate(1'b1)
  ) u_weight_mem (
    .clk_i, .re_i(wt_rd_req), .raddr_i(mm_wt_req ? mm_wt_addr : dma_wt_addr), .rdata_o(wt_rdata),
    .we_i(wt_we), .waddr_i(dma_wt_addr), .wdata_i(dma_spad_wdata[ArrayCols*8-1:0]),
    .wmask_i({ArrayCols{1'b1}})
  );
  psm_spad #(.Ports(3), .Depth(ParamDepth), .Lanes(1), .LaneWidth(64)) u_param_mem (
    .clk_i, .req_i({dma_pm_req, mm_pm_req, vec_prm_req}), .we_i({dma_spad_we, 1'b0, 1'b0}),
    .addr_i({dma_pm_addr, mm_pm_addr, vec_prm_addr}), .wmask_i(3'b100), .gnt_o(pm_gnt),
    .we_o(pm_we), .wdata_i(dma_spad_wdata[63:0]), .rdata_o(pm_rdata)
  );
  psm_spad #(
    .Ports(3), .Depth(VectorDepth), .Lanes(Lanes), .LaneWidth(32), .ClockGate(1'b1)
  ) u_vector_mem (
    .clk_i, .req_i({dma_vs_req, mm_vs_req, vec_mem_req}), .we_i({dma_spad_we, 1'b1, vec_mem_we}),
    .addr_i({dma_vs_addr, mm_vs_addr, vec_mem_addr}),
    .wmask_i({{Lanes{1'b1}}, mm_vs_wmask, vec_mem_wmask}), .gnt_o(vs_gnt), .we_o(vs_we),
    .wdata_i(vs_wdata), .rdata_o(vs_rdata)
  );

  // The vector scratchpad's write data: the granted writer's (copied only in a write cycle).
  always_comb begin
    vs_wdata = '0;
    if (vs_we) begin
      if (vs_gnt[0])      vs_wdata = vec_mem_wdata;
      else if (vs_gnt[1]) vs_wdata = mm_vs_wdata;
      else                vs_wdata = dma_spad_wdata[Lanes*32-1:0];
    end
  end

  assign mm_in_gnt = in_gnt[0];
  assign mm_wt_gnt = wt_gnt[0];
  assign mm_pm_gnt = pm_gnt[1];
  assign mm_vs_gnt = vs_gnt[1];

  always_comb begin
    dma_spad_gnt   = 1'b0;
    dma_spad_rdata = '0;
    unique case (dma_mem)
      psm_pkg::MemInput: begin
        dma_spad_gnt   = in_gnt[1];
        dma_spad_rdata = SpadWidth'(in_rdata);
      end
      psm_pkg::MemWeight: begin
        dma_spad_gnt   = wt_gnt[1];
        dma_spad_rdata = SpadWidth'(wt_rdata);
      end
      psm_pkg::MemVector: begin
        dma_spad_gnt   = vs_gnt[2];
        dma_spad_rdata = SpadWidth'(vs_rdata);
      end
      default: begin
        dma_spad_gnt   = pm_gnt[2];
        dma_spad_rdata = SpadWidth'(pm_rdata);
      end
    endcase
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Counters                                                                                //
  //////////////////////////////////////////////////////////////////////////////////////////////

  psm_counters #(
    .Units    (3),
    .PassWidth(24)
  ) u_counters (
    .clk_i,
    .rst_i          (rst_q),
    .clear_i        (clear_counters),
    .active_i       (run_busy),
    .unit_busy_i    (unit_busy),
    .unit_class_i   (unit_class),
    .unit_passes_i  ({vec_passes, mm_passes, 24'(dma_pass)}),
    .unit_saturated_i({vec_saturated, mm_saturated, 24'(dma_saturated)}),
    .mem_stall_i    (dma_stall || fetch_stall),
    .unit_stall_i   (unit_stall),
    .instret_i      (instret),
    .sel_index_i    (cnt_index),
    .sel_value_o    (cnt_value),
    .total_cycles_o (total_cycles)
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Per-instruction trace                                                                   //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Only the DMA has a stall signal (the memory port); the matmul stage and the vector unit
  // wait only on the memory arbiters, which compiled programs never contend for.
  psm_trace #(
    .Units    (3),
    .PassWidth(24)
  ) u_trace (
    .clk_i,
    .rst_i        (sys_rst),
    .unit_busy_i  (unit_busy),
    .unit_pc_i    (unit_pc_o),
    .unit_stall_i ({2'b00, dma_stall}),
    .unit_passes_i({vec_passes, mm_passes, 24'(dma_pass)}),
    .unit_saturated_i({vec_saturated, mm_saturated, 24'(dma_saturated)}),
    .trace_valid_o,
    .trace_pc_o,
    .trace_cycles_o,
    .trace_stall_o,
    .trace_passes_o,
    .trace_saturated_o
  );

  assign run_busy_o  = run_busy;
  assign unit_busy_o = unit_busy;

  // The DMA's done_o is implied by busy_o falling; its 16-bit word address was range-checked;
  // only the DMA writes the input, weight and param memories.
  logic unused_bits;
  assign unused_bits = ^{dma_done, pm_gnt[0], vs_gnt[0], dma_spad_addr, in_we, wt_we, pm_we};
endmodule : psm_accel
