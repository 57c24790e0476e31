// SPDX-License-Identifier: Apache-2.0
// Host register file of docs/isa.md ("Host registers"): 32-bit registers at byte offsets.
// Golden model: none (the register map is generated from spec/passim.json into psm_pkg).
//
// Access: a write (reg_we_i) takes effect at the clock edge. A read (reg_re_i) returns data
// combinationally in the same cycle on reg_rdata_o; its side effect (a _LO read latches the
// matching _HI half) happens at the clock edge. CTRL bits are write-1 pulses that last the
// cycle of the write.
module psm_regs #(
  parameter int unsigned ArrayRows = 2,
  parameter int unsigned ArrayCols = 4,
  parameter int unsigned Lanes     = 2
) (
  input  logic                                  clk_i,
  input  logic                                  rst_i,           // synchronous, active high
  // Host port
  input  logic                                  reg_we_i,
  input  logic                                  reg_re_i,
  input  logic [psm_pkg::REG_ADDR_WIDTH-1:0]    reg_addr_i,      // byte offset
  input  logic [31:0]                           reg_wdata_i,
  output logic [31:0]                           reg_rdata_o,
  // Control pulses (CTRL) and configuration to the controller
  output logic                                  start_o,
  output logic                                  soft_reset_o,
  output logic                                  clear_counters_o,
  output logic [31:0]                           prog_addr_o,
  output logic [31:0]                           prog_len_o,
  output logic [31:0]                           watchdog_o,
  // Status from the controller
  input  logic                                  busy_i,
  input  logic                                  done_i,
  input  logic [7:0]                            error_i,
  input  logic [31:0]                           error_info_i,
  // Counter read-out (psm_counters): CNT_SEL drives the selection, the value comes back
  output logic [psm_pkg::CNT_INDEX_WIDTH-1:0]   cnt_index_o,
  input  logic [psm_pkg::COUNTER_WIDTH-1:0]     cnt_value_i,
  input  logic [psm_pkg::COUNTER_WIDTH-1:0]     total_cycles_i
);
  localparam int unsigned CntWidth = psm_pkg::COUNTER_WIDTH;
  localparam int unsigned HiWidth  = CntWidth - 32;
  localparam int unsigned IdxWidth = psm_pkg::CNT_INDEX_WIDTH;

  logic [31:0]         prog_addr_q, prog_len_q, watchdog_q;
  logic [IdxWidth-1:0] cnt_sel_q;  // CNT_SEL.index
  logic [HiWidth-1:0]  cycles_hi_q, cnt_hi_q;

  logic wr_ctrl, rd_cycles_lo, rd_cnt_lo;
  assign wr_ctrl      = reg_we_i && (reg_addr_i == psm_pkg::REG_CTRL);
  assign rd_cycles_lo = reg_re_i && (reg_addr_i == psm_pkg::REG_CYCLES_LO);
  assign rd_cnt_lo    = reg_re_i && (reg_addr_i == psm_pkg::REG_CNT_LO);

  assign start_o          = wr_ctrl && reg_wdata_i[psm_pkg::REG_CTRL_START_LSB];
  assign soft_reset_o     = wr_ctrl && reg_wdata_i[psm_pkg::REG_CTRL_SOFT_RESET_LSB];
  assign clear_counters_o = wr_ctrl && reg_wdata_i[psm_pkg::REG_CTRL_CLEAR_COUNTERS_LSB];

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      prog_addr_q <= '0;
      prog_len_q  <= '0;
      watchdog_q  <= '0;
      cnt_sel_q   <= '0;
      cycles_hi_q <= '0;
      cnt_hi_q    <= '0;
    end else begin
      if (reg_we_i) begin
        unique case (reg_addr_i)
          psm_pkg::REG_PROG_ADDR: prog_addr_q <= reg_wdata_i;
          psm_pkg::REG_PROG_LEN:  prog_len_q  <= reg_wdata_i;
          psm_pkg::REG_WATCHDOG:  watchdog_q  <= reg_wdata_i;
          psm_pkg::REG_CNT_SEL:
            cnt_sel_q <= reg_wdata_i[psm_pkg::REG_CNT_SEL_INDEX_LSB +: IdxWidth];
          default: ;  // read-only registers and CTRL pulses keep no state here
        endcase
      end
      if (rd_cycles_lo) cycles_hi_q <= total_cycles_i[CntWidth-1:32];
      if (rd_cnt_lo)    cnt_hi_q    <= cnt_value_i[CntWidth-1:32];
    end
  end

  assign prog_addr_o = prog_addr_q;
  assign prog_len_o  = prog_len_q;
  assign watchdog_o  = watchdog_q;
  assign cnt_index_o = cnt_sel_q;

  // Evaluated only for a read (reg_re_i): outside reads the data is 0.
  always_comb begin
    reg_rdata_o = '0;
    if (reg_re_i) begin
      unique case (reg_addr_i)
        psm_pkg::REG_STATUS: begin
          reg_rdata_o[psm_pkg::REG_STATUS_BUSY_LSB]     = busy_i;
          reg_rdata_o[psm_pkg::REG_STATUS_DONE_LSB]     = done_i;
          reg_rdata_o[psm_pkg::REG_STATUS_ERROR_LSB +: 8] = error_i;
        end
        psm_pkg::REG_PROG_ADDR:  reg_rdata_o = prog_addr_q;
        psm_pkg::REG_PROG_LEN:   reg_rdata_o = prog_len_q;
        psm_pkg::REG_CYCLES_LO:  reg_rdata_o = total_cycles_i[31:0];
        psm_pkg::REG_CYCLES_HI:  reg_rdata_o = 32'(cycles_hi_q);
        psm_pkg::REG_CNT_SEL:
          reg_rdata_o[psm_pkg::REG_CNT_SEL_INDEX_LSB +: IdxWidth] = cnt_sel_q;
        psm_pkg::REG_CNT_LO:     reg_rdata_o = cnt_value_i[31:0];
        psm_pkg::REG_CNT_HI:     reg_rdata_o = 32'(cnt_hi_q);
        psm_pkg::REG_WATCHDOG:   reg_rdata_o = watchdog_q;
        psm_pkg::REG_ERROR_INFO: reg_rdata_o = error_info_i;
        psm_pkg::REG_VERSION:    reg_rdata_o = 32'(psm_pkg::SPEC_VERSION);
        psm_pkg::REG_CONFIG: begin
          reg_rdata_o[psm_pkg::REG_CONFIG_ARRAY_ROWS_LSB +: 8] = 8'(ArrayRows);
          reg_rdata_o[psm_pkg::REG_CONFIG_ARRAY_COLS_LSB +: 8] = 8'(ArrayCols);
          reg_rdata_o[psm_pkg::REG_CONFIG_LANES_LSB +: 8]      = 8'(Lanes);
        end
        default: reg_rdata_o = '0;  // CTRL (write-only) and unmapped offsets read 0
      endcase
    end
  end
endmodule : psm_regs
