// SPDX-License-Identifier: Apache-2.0
// Controller: copies PROG_LEN instructions from DRAM into the program memory, then runs them
// in order, issuing each to its unit (DMA, matmul or vector) as soon as that unit is idle.
// Golden model: passim::CpuDevice::run() in runtime/src/device/cpu_device.cpp (docs/isa.md,
// "Execution model").
//
// Per instruction: StRead (program-memory read) then StIssue (decode, operand check, issue
// or wait), so an instruction whose unit is idle issues every second cycle. BARRIER waits
// until every unit is idle; END too, then the run ends with STATUS.done. The controller does
// not track data dependencies. An error (bad instruction, a bus error in the program fetch
// or in a DMA, the watchdog, or running past PROG_LEN without END) stops the run: the units
// are aborted (StAbort) and STATUS.done is set with STATUS.error and ERROR_INFO.
module psm_controller #(
  parameter psm_cfg_pkg::cfg_t Cfg        = psm_cfg_pkg::Tiny,  // the accelerator's sizes
  parameter int unsigned       FetchDepth = 8                   // outstanding fetch requests
) (
  input  logic                            clk_i,
  input  logic                            rst_i,            // synchronous, active high
  // Host registers
  input  logic                            start_i,          // CTRL.start
  input  logic [31:0]                     prog_addr_i,
  input  logic [31:0]                     prog_len_i,
  input  logic [31:0]                     watchdog_i,       // 0 = off
  output logic                            busy_o,           // STATUS.busy
  output logic                            done_o,           // STATUS.done
  output logic [7:0]                      error_o,          // STATUS.error
  output logic [31:0]                     error_info_o,     // ERROR_INFO
  // Memory port during the program fetch (fetch_active_o), 8-byte beats
  output logic                            fetch_active_o,
  output logic                            mem_req_valid_o,
  input  logic                            mem_req_ready_i,
  output logic [31:0]                     mem_req_addr_o,
  input  logic                            mem_rsp_valid_i,
  input  logic [63:0]                     mem_rsp_rdata_i,
  input  logic                            mem_rsp_err_i,
  output logic                            fetch_stall_o,    // waiting for the memory port
  // Units: 0 = DMA, 1 = matmul, 2 = vector
  output logic [psm_pkg::INSTR_WIDTH-1:0] instr_o,          // valid with a start pulse
  output logic [2:0]                      unit_start_o,
  input  logic [2:0]                      unit_busy_i,
  input  logic                            dma_err_i,        // a DMA got an error response
  output logic                            abort_o,          // stop every unit (StAbort)
  // Counter attribution
  output logic [11:0]                     unit_class_o,     // op class per unit, 4 bits each
  output logic                            unit_stall_o,
  output logic                            instret_o,
  output logic [31:0]                     pc_o,             // debug: instruction index
  output logic [95:0]                     unit_pc_o         // debug: index each unit runs
);
  localparam int unsigned ProgDepth     = Cfg.prog_depth;
  localparam int unsigned ProgAddrWidth = (ProgDepth > 1) ? $clog2(ProgDepth) : 1;
  localparam int unsigned FetchCntWidth = $clog2(FetchDepth + 1);

  typedef enum logic [2:0] {
    StIdle,        // wait for CTRL.start
    StFetch,       // copy the program into the program memory
    StFetchDrain,  // fetch error: wait for the outstanding fetch responses
    StRead,        // read the instruction at pc
    StIssue,       // decode and check it; issue it or wait for its unit
    StAbort        // error: abort the units and wait until they are idle
  } ctl_state_e;

  ctl_state_e state_q, state_d;

  logic [31:0]                  pc_q;
  logic [31:0]                  len_q;
  logic [31:0]                  run_cycles_q;
  logic                         busy_q, done_q;
  logic [7:0]                   error_q;
  logic [31:0]                   error_info_q;
  logic [11:0]                  unit_class_q;
  logic [95:0]                  unit_pc_q;  // index of the instruction each unit runs

  // Errors raised this cycle (state_d goes to StAbort / StFetchDrain / StIdle).
  logic                         raise;
  logic [7:0]                   raise_code;
  logic [31:0]                  raise_info;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Program memory and fetch                                                                //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic                     prog_req, prog_we;
  logic [ProgAddrWidth-1:0] prog_addr;
  logic [127:0]             prog_wdata, prog_rdata;

  psm_ram #(
    .Depth    (ProgDepth),
    .Lanes    (1),
    .LaneWidth(psm_pkg::INSTR_WIDTH)
  ) u_prog_mem (
    .clk_i,
    .req_i  (prog_req),
    .we_i   (prog_we),
    .addr_i (prog_addr),
    .wdata_i(prog_wdata),
    .wmask_i(1'b1),
    .rdata_o(prog_rdata)
  );

  logic [31:0]              f_req_q, f_rsp_q;  // beats requested / received (2 per instruction)
  logic [FetchCntWidth-1:0] f_os_q;            // outstanding fetch beats
  logic [63:0]              f_low_q;           // the low half of the instruction being received
  logic                     f_req_fire;

  assign fetch_active_o  = (state_q == StFetch) || (state_q == StFetchDrain);
  assign mem_req_valid_o = (state_q == StFetch) && (f_req_q != {len_q[30:0], 1'b0})
                           && (32'(f_os_q) < FetchDepth);
  assign mem_req_addr_o  = prog_addr_i + {f_req_q[28:0], 3'b000};
  assign f_req_fire      = mem_req_valid_o && mem_req_ready_i;
  assign fetch_stall_o   = (state_q == StFetch) && !f_req_fire && !mem_rsp_valid_i;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || (state_q == StIdle)) begin
      f_req_q <= '0;
      f_rsp_q <= '0;
      f_os_q  <= '0;
    end else begin
      if (f_req_fire)      f_req_q <= f_req_q + 32'd1;
      if (mem_rsp_valid_i) f_rsp_q <= f_rsp_q + 32'd1;
      f_os_q <= f_os_q + FetchCntWidth'(f_req_fire) - FetchCntWidth'(mem_rsp_valid_i
                                                                     && fetch_active_o);
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (mem_rsp_valid_i && !f_rsp_q[0]) f_low_q <= mem_rsp_rdata_i;
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Decode                                                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [1:0] ir_unit;   // 0 control, 1 dma, 2 matmul, 3 vector
  logic [7:0] ir_error;
  logic [7:0] ir_opcode;
  logic [3:0] ir_class;

  psm_instr_check #(.Cfg(Cfg)) u_check (
    .instr_i(prog_rdata),
    .unit_o (ir_unit),
    .error_o(ir_error)
  );

  assign ir_opcode = prog_rdata[psm_pkg::INSTR_OPCODE_LSB +: 8];
  assign ir_class  = prog_rdata[psm_pkg::INSTR_OP_CLASS_LSB +: 4];

  // Unit u of a unit instruction is ir_unit - 1.
  logic [1:0] ir_u;
  assign ir_u = ir_unit - 2'd1;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic watchdog_hit;
  assign watchdog_hit = busy_q && (watchdog_i != '0) && (run_cycles_q >= watchdog_i);

  // CTRL.start checks PROG_LEN and PROG_ADDR (16-byte aligned: its low 4 bits).
  function automatic logic [7:0] start_check(input logic [31:0] len, input logic [3:0] addr_lo);
    if (len == '0 || len > 32'(ProgDepth)) start_check = psm_pkg::ErrProgLen;
    else if (addr_lo != 4'd0)             start_check = psm_pkg::ErrProgAlign;
    else                                  start_check = psm_pkg::ErrNone;
  endfunction

  // StIssue retires an instruction when it can: a unit instruction when its unit is idle (it
  // starts the unit; else the instruction stalls), END and BARRIER once every unit is idle, NOP
  // at once. Evaluated in StIssue only.
  logic issue_ready;  // the instruction retires
  logic issue_stall;  // a unit instruction waits for its unit
  logic issue_end;    // END (BARRIER waits like it, then goes on)
  always_comb begin
    issue_ready = 1'b0;
    issue_stall = 1'b0;
    issue_end   = 1'b0;
    if (state_q == StIssue) begin
      if (ir_unit != 2'd0) begin
        issue_ready = !unit_busy_i[ir_u];
        issue_stall = unit_busy_i[ir_u];
      end else if (ir_opcode == psm_pkg::OpEnd || ir_opcode == psm_pkg::OpBarrier) begin
        issue_ready = (unit_busy_i == '0);
        issue_end   = (ir_opcode == psm_pkg::OpEnd);
      end else begin
        issue_ready = 1'b1;
      end
    end
  end

  // A DMA bus error (of an earlier instruction) or the watchdog stops a running program in
  // StRead and StIssue.
  logic run_stop;
  assign run_stop = (state_q == StRead || state_q == StIssue) && (dma_err_i || watchdog_hit);

  // The next state and the error raised in this cycle (the first one of a run is kept).
  always_comb begin
    state_d    = state_q;
    raise_code = psm_pkg::ErrNone;
    raise_info = pc_q;
    unique case (state_q)
      StIdle: begin
        raise_info = '0;
        if (start_i) raise_code = start_check(prog_len_i, prog_addr_i[3:0]);
        if (start_i && raise_code == psm_pkg::ErrNone) state_d = StFetch;
      end
      // Two beats per instruction; a bus error or the watchdog ends the fetch.
      StFetch: begin
        if (mem_rsp_valid_i && mem_rsp_err_i) begin
          raise_code = psm_pkg::ErrBus;
          raise_info = f_rsp_q >> 1;
          state_d    = StFetchDrain;
        end else if (mem_rsp_valid_i && f_rsp_q + 32'd1 == {len_q[30:0], 1'b0}) begin
          state_d = StRead;
        end else if (watchdog_hit) begin
          raise_code = psm_pkg::ErrWatchdog;
          raise_info = '0;
          state_d    = StFetchDrain;
        end
      end
      // Every outstanding beat still gets its response.
      StFetchDrain: if (f_os_q == FetchCntWidth'(mem_rsp_valid_i)) state_d = StIdle;
      // Running past PROG_LEN without END is an error.
      StRead: begin
        if (pc_q == len_q) raise_code = psm_pkg::ErrBadOpcode;
        state_d = (pc_q == len_q) ? StAbort : StIssue;
      end
      StIssue: begin
        raise_code = ir_error;
        if (ir_error != psm_pkg::ErrNone) state_d = StAbort;
        else if (issue_ready)             state_d = issue_end ? StIdle : StRead;
      end
      // Hold the units in abort until none is busy.
      StAbort: if (unit_busy_i == '0) state_d = StIdle;
      default: state_d = StIdle;
    endcase
    if (run_stop) begin
      raise_code = dma_err_i ? psm_pkg::ErrBus : psm_pkg::ErrWatchdog;
      raise_info = dma_err_i ? unit_pc_q[31:0] : pc_q;
      state_d    = StAbort;
    end
  end

  assign raise = (raise_code != psm_pkg::ErrNone);

  // The program memory (the fetch writes an instruction with its second beat, StRead reads
  // one) and the units.
  always_comb begin
    prog_req     = 1'b0;
    prog_we      = 1'b0;
    prog_addr    = ProgAddrWidth'(pc_q);
    unit_start_o = '0;
    unit_stall_o = 1'b0;
    instret_o    = 1'b0;
    unique case (state_q)
      StFetch: begin
        if (mem_rsp_valid_i) prog_addr = ProgAddrWidth'(f_rsp_q >> 1);
        prog_req = mem_rsp_valid_i && !mem_rsp_err_i && f_rsp_q[0];
        prog_we  = prog_req;
      end
      StRead: prog_req = (pc_q != len_q);
      StIssue: begin
        if (ir_error == psm_pkg::ErrNone && !run_stop) begin
          instret_o    = issue_ready;
          unit_stall_o = issue_stall;
          if (issue_ready && ir_unit != 2'd0) unit_start_o[ir_u] = 1'b1;
        end
      end
      default: ;
    endcase
  end
  assign prog_wdata = {mem_rsp_rdata_i, f_low_q};

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      state_q      <= StIdle;
      pc_q         <= '0;
      len_q        <= '0;
      busy_q       <= 1'b0;
      done_q       <= 1'b0;
      error_q      <= psm_pkg::ErrNone;
      error_info_q <= '0;
      run_cycles_q <= '0;
      unit_class_q <= '0;
      unit_pc_q    <= '0;
    end else begin
      state_q <= state_d;
      if (state_q == StIdle && start_i) begin
        pc_q         <= '0;
        len_q        <= prog_len_i;
        done_q       <= 1'b0;
        error_q      <= psm_pkg::ErrNone;
        error_info_q <= '0;
        run_cycles_q <= '0;
        busy_q       <= (state_d == StFetch);
      end else if (busy_q) begin
        run_cycles_q <= run_cycles_q + 32'd1;
      end
      if (instret_o && state_q == StIssue) pc_q <= pc_q + 32'd1;
      for (int u = 0; u < 3; u++) begin
        if (unit_start_o[u]) begin
          unit_class_q[u*4 +: 4] <= ir_class;
          unit_pc_q[u*32 +: 32]  <= pc_q;
        end
      end
      // Keep the first error of a run (a start clears the previous run's error).
      if (raise && (error_q == psm_pkg::ErrNone || state_q == StIdle)) begin
        error_q      <= raise_code;
        error_info_q <= raise_info;
      end
      // The run ends when the controller returns to idle.
      if (state_q != StIdle && state_d == StIdle) begin
        busy_q <= 1'b0;
        done_q <= 1'b1;
      end
      if (state_q == StIdle && raise) done_q <= 1'b1;  // PROG_LEN / PROG_ADDR errors
    end
  end

  assign busy_o       = busy_q;
  assign done_o       = done_q;
  assign error_o      = error_q;
  assign error_info_o = error_info_q;
  assign instr_o      = prog_rdata;
  assign abort_o      = (state_q == StAbort);
  assign unit_class_o = unit_class_q;
  assign pc_o         = pc_q;
  assign unit_pc_o    = unit_pc_q;

`ifndef SYNTHESIS
  IssueWhenIdle_A: assert property (@(posedge clk_i) disable iff (rst_i)
      (unit_start_o & unit_busy_i) == '0);
`endif
endmodule : psm_controller
