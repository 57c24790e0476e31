// SPDX-License-Identifier: Apache-2.0
// Runs one MATMUL, MATMUL_HEADS or MATMUL_ACT instruction (docs/isa.md) on psm_matmul.
// psm_matmul reads a and W^T straight from the ISA's input and weight memories (its read ports
// use the ISA layouts; this wrapper adds a_addr and w_addr); the requantisation steps are
// copied into psm_matmul (it reads C of them per cycle) under the run or before it, and the
// result rows are copied out to the vector scratchpad.
// Golden model: passim::CpuDevice::matmul() in runtime/src/device/cpu_device.cpp.
//
// With KT = ceil(k / R), NW = ceil(n / C), NV = ceil(n / L), S = dst_stride (NV when 0), and
// G digit groups (MATMUL_ACT's digits; 1 for the others):
//   copy in   param[rq_addr + c] (when out_bits != 0) -> psm_matmul requant entry c, c < n:
//               mult [30:0], shift [37:32] and the signed bias [63:38] (docs/isa.md), one per
//               cycle, under the run when the vector unit is idle at the start (then nothing
//               else reads the parameter memory: the controller holds vector instructions
//               while copy_in_o is set, and the DMA yields), else before it
//   run       psm_matmul (one pass per weight tile: G * KT * NW passes); it reads
//               input[a_addr + (r * G + g) * KT + kt]  (R int8: a's row r, group g, k tile kt)
//               weight[w_addr + (g * k + kk) * NW + j] (C int8: W^T row kk of group g, word j)
//             The matmul stage is the input and weight memories' highest-priority requester,
//             so every read is granted at once (InGranted_A, WtGranted_A).
//   copy out  psm_matmul output word r * NW + t (C int32) -> element gearbox ->
//             vector word dst_addr + r * S + w (L lanes, write mask on the row's tail);
//             MATMUL_HEADS: head after head, each from a new word (mask on its tail), the
//             rows packed (S = the words of one row)
//             MATMUL_ACT with transpose: blocks of L rows of one output word t (C columns):
//             the block's rows into a tile (one read per cycle), then one vector word per
//             column c, dst_addr + c * ceil(m / L) + (the block's first row) / L, lane i =
//             row i of the block; rows + 1 + columns cycles per block
// out_bits (2..32) goes straight to psm_matmul, whose requantisers saturate to any width;
// out_bits = 0 runs it with requant_en_i = 0 (the raw int32 sums).
module psm_matmul_stage #(
  parameter psm_cfg_pkg::cfg_t Cfg = psm_cfg_pkg::Tiny  // the accelerator's sizes
) (
  input  logic                            clk_i,
  input  logic                            rst_i,        // synchronous, active high (and abort)
  // Command (a checked MATMUL)
  input  logic                            start_i,
  input  logic [psm_pkg::INSTR_WIDTH-1:0] instr_i,
  output logic                            busy_o,
  input  logic                            vec_busy_i,   // the vector unit, for the copy-in
  output logic                            copy_in_o,    // requantisation steps still to copy
  // Input memory read port
  output logic                            in_req_o,
  output logic [Cfg.in_addr_width-1:0]    in_addr_o,
  input  logic                            in_gnt_i,
  input  logic [Cfg.array_rows*8-1:0]     in_rdata_i,
  // Weight memory read port
  output logic                            wt_req_o,
  output logic [Cfg.wgt_addr_width-1:0]   wt_addr_o,
  input  logic                            wt_gnt_i,
  input  logic [Cfg.array_cols*8-1:0]     wt_rdata_i,
  // Param memory read port
  output logic                            pm_req_o,
  output logic [Cfg.prm_addr_width-1:0]   pm_addr_o,
  input  logic                            pm_gnt_i,
  input  logic [63:0]                     pm_rdata_i,
  // Vector scratchpad write port
  output logic                            vs_req_o,
  output logic [Cfg.vec_addr_width-1:0]   vs_addr_o,
  output logic [Cfg.lanes*32-1:0]         vs_wdata_o,
  output logic [Cfg.lanes-1:0]            vs_wmask_o,
  input  logic                            vs_gnt_i,
  // Counters
  output logic [23:0]                     passes_o,     // passes started this cycle
  output logic [23:0]                     saturated_o   // results clamped this cycle
);
  localparam int unsigned ArrayRows      = Cfg.array_rows;
  localparam int unsigned ArrayCols      = Cfg.array_cols;
  localparam int unsigned Lanes          = Cfg.lanes;
  localparam int unsigned InAddrWidth    = Cfg.in_addr_width;
  localparam int unsigned WgtAddrWidth   = Cfg.wgt_addr_width;
  localparam int unsigned VecAddrWidth   = Cfg.vec_addr_width;
  localparam int unsigned PrmAddrWidth   = Cfg.prm_addr_width;
  localparam int unsigned MmOutAddrWidth = $clog2(Cfg.mm_out_depth);
  localparam int unsigned MmRqAddrWidth  = $clog2(Cfg.param_depth);
  localparam int unsigned GbElems        = 2 * (ArrayCols + Lanes);  // gearbox capacity
  localparam int unsigned GbCntWidth     = $clog2(GbElems + 1);
  localparam int unsigned LaneIdxWidth   = (Lanes > 1) ? $clog2(Lanes) : 1;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  psm_pkg::matmul_instr_t cmd;
  psm_pkg::matmul_act_instr_t cmd_act;  // MATMUL_ACT's digits and transpose
  assign cmd     = instr_i;  // no type cast: Yosys 0.23 rejects casts to package types
  assign cmd_act = instr_i;

  logic [15:0] m_q, k_q, n_q;
  logic [15:0] kt_n_q;       // G * KT: k tiles per n tile
  logic [15:0] nw_q;         // NW = ceil(n / C)
  logic [15:0] a_addr_q, w_addr_q;
  logic [11:0] rq_addr_q;
  logic [5:0]  out_bits_q;
  logic        requant_en_q;
  logic [VecAddrWidth-1:0] stride_q;  // S: vector words from one result row to the next
  logic        overlap_q;    // the copy-in runs under the run (vector unit idle at the start)
  logic        heads_q;      // MATMUL_HEADS: a head starts a word, rows packed
  logic [15:0] group_q;      // columns per head (n for MATMUL: the row is one group)
  logic [VecAddrWidth-1:0] head_words_q;  // ceil(head_size / L): the words of a head's slot
  logic [1:0]  digits_q;     // G
  logic        trans_q;      // MATMUL_ACT transpose: result columns become vector rows
  logic [15:0] mw_q;         // transposed: ceil(m / L), the words of a result column
  logic [VecAddrWidth-1:0] dst_q;
  logic [15:0] start_group, start_len;
  logic        start_heads, start_act, start_trans;
  logic [1:0]  start_digits;
  assign start_heads  = (cmd.opcode == psm_pkg::OpMatmulHeads);
  assign start_act    = (cmd.opcode == psm_pkg::OpMatmulAct);
  assign start_trans  = start_act && cmd_act.transpose;
  assign start_digits = start_act ? cmd_act.digits : 2'd1;
  assign start_len    = start_trans ? 16'(cmd.m) : 16'(cmd.n);
  assign start_group  = start_heads ? 16'(cmd.dst_stride) : start_len;

  logic [15:0] start_kt, start_nw;
  logic [VecAddrWidth-1:0] start_stride;  // (wider strides fail the instruction check)
  assign start_kt     = 16'(32'(start_digits) * ((32'(cmd.k) + ArrayRows - 1) / ArrayRows));
  assign start_nw     = 16'((32'(cmd.n) + ArrayCols - 1) / ArrayCols);
  assign start_stride = (!start_act && cmd.dst_stride != '0)
                        ? VecAddrWidth'(cmd.dst_stride)
                        : VecAddrWidth'((32'(start_len) + Lanes - 1) / Lanes);

  always_ff @(posedge clk_i) begin  // configuration: no reset, loaded by start_i
    if (start_i) begin
      m_q          <= 16'(cmd.m);
      k_q          <= 16'(cmd.k);
      n_q          <= 16'(cmd.n);
      kt_n_q       <= start_kt;
      nw_q         <= start_nw;
      a_addr_q     <= cmd.a_addr;
      w_addr_q     <= cmd.w_addr;
      rq_addr_q    <= cmd.rq_addr;
      out_bits_q   <= cmd.out_bits;
      requant_en_q <= cmd.out_bits != '0;
      stride_q     <= start_stride;
      overlap_q    <= !vec_busy_i;
      heads_q      <= start_heads;
      group_q      <= start_group;
      digits_q     <= start_digits;
      trans_q      <= start_trans;
      mw_q         <= 16'((32'(cmd.m) + Lanes - 1) / Lanes);
      dst_q        <= VecAddrWidth'(cmd.dst_addr);
      head_words_q <= VecAddrWidth'((32'(cmd.dst_stride) + Lanes - 1) / Lanes);
    end
  end

  typedef enum logic [2:0] {
    StIdle,     // wait for start_i
    StCopyIn,   // the requantisation steps into psm_matmul
    StStart,    // start psm_matmul
    StRun,      // wait for it
    StCopyOut   // result rows to the vector scratchpad
  } mms_state_e;

  mms_state_e state_q, state_d;

  always_ff @(posedge clk_i) begin  // control: reset
    state_q <= rst_i ? StIdle : state_d;
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // psm_matmul                                                                              //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic                        mm_start, mm_busy, mm_done;
  logic                        mm_in_rd, mm_wgt_rd, mm_rq_we;
  logic [InAddrWidth-1:0]      mm_in_rd_addr;   // word (r * G + g) * KT + kt of a
  logic [WgtAddrWidth-1:0]     mm_wgt_rd_addr;  // word (g * k + kk) * NW + j of W^T
  logic [MmRqAddrWidth-1:0]    mm_rq_addr;
  logic [MmOutAddrWidth-1:0]   mm_out_addr;
  logic [ArrayCols*32-1:0]     mm_out_rdata;
  logic [31:0]                 mm_perf_busy, mm_perf_mac;
  logic [15:0]                 mm_saturated;

  psm_matmul #(
    .ArrayRows(ArrayRows),
    .ArrayCols(ArrayCols),
    .InDepth  (Cfg.input_depth),
    .WgtDepth (Cfg.weight_depth),
    .AccDepth (Cfg.acc_depth),
    .OutDepth (Cfg.mm_out_depth),
    .RqDepth  (Cfg.param_depth),
    .DimWidth (16)
  ) u_matmul (
    .clk_i,
    .rst_i,
    .start_i           (mm_start),
    .m_i               (m_q),
    .k_i               (k_q),
    .n_i               (n_q),
    .digits_i          (digits_q),
    .out_bits_i        (out_bits_q),
    .requant_en_i      (requant_en_q),
    .busy_o            (mm_busy),
    .done_o            (mm_done),
    .in_rd_o           (mm_in_rd),
    .in_rd_addr_o      (mm_in_rd_addr),
    .in_rdata_i        (in_rdata_i),
    .wgt_rd_o          (mm_wgt_rd),
    .wgt_rd_addr_o     (mm_wgt_rd_addr),
    .wgt_rdata_i       (wt_rdata_i),
    .rq_we_i           (mm_rq_we),
    .rq_addr_i         (mm_rq_addr),
    .rq_mult_i         (pm_rdata_i[30:0]),
    .rq_shift_i        (pm_rdata_i[37:32]),
    .rq_bias_i         ($signed(pm_rdata_i[63:38])),
    .out_addr_i        (mm_out_addr),
    .out_rdata_o       (mm_out_rdata),
    .saturated_o       (mm_saturated),
    .perf_busy_cycles_o(mm_perf_busy),
    .perf_mac_cycles_o (mm_perf_mac)
  );

  // The operands' read ports, at the instruction's base addresses (wrapping like the copies
  // did). Data comes back the next cycle on in_rdata_i / wt_rdata_i, as psm_matmul expects.
  assign in_req_o  = mm_in_rd;
  assign in_addr_o = InAddrWidth'(32'(a_addr_q) + 32'(mm_in_rd_addr));
  assign wt_req_o  = mm_wgt_rd;
  assign wt_addr_o = WgtAddrWidth'(32'(w_addr_q) + 32'(mm_wgt_rd_addr));

  // The copy-in runs in StCopyIn, or from StStart on when it overlaps the run: it is at least
  // R cycles ahead of the first requantised row of every n tile (rtl/top/README.md).
  logic copy_in;
  assign copy_in = (state_q == StCopyIn)
                   || (overlap_q && (state_q == StStart || state_q == StRun));

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Copy in: requantisation steps                                                          //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [15:0] pm_rd_q;
  logic        pm_v_q;
  logic [MmRqAddrWidth-1:0] pm_wa_q;
  logic [15:0] pm_total;
  logic        pm_done;

  assign pm_total  = requant_en_q ? n_q : 16'd0;
  assign pm_req_o  = copy_in && (pm_rd_q != pm_total);
  assign pm_addr_o = PrmAddrWidth'(16'(rq_addr_q) + pm_rd_q);
  assign pm_done   = (pm_rd_q == pm_total) && !pm_v_q;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_i) begin
      pm_rd_q <= '0;
      pm_v_q  <= 1'b0;
    end else begin
      pm_v_q <= pm_req_o && pm_gnt_i;
      if (pm_req_o && pm_gnt_i) pm_rd_q <= pm_rd_q + 16'd1;
    end
  end
  always_ff @(posedge clk_i) begin  // datapath: no reset
    pm_wa_q <= MmRqAddrWidth'(pm_rd_q);
  end

  assign mm_rq_we   = pm_v_q;
  assign mm_rq_addr = pm_wa_q;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Copy out: psm_matmul output words -> element gearbox -> vector words                    //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic copy_out;
  assign copy_out = (state_q == StCopyOut);

  // Read side: word t of row r; data on mm_out_rdata the next cycle.
  logic [15:0] or_r_q, or_t_q;
  logic        or_done_q;
  logic        or_v_q;                  // mm_out_rdata holds a word of the row
  logic [15:0] or_n_q;                  // its elements: min(C, n - t*C)
  logic [15:0] or_n;
  logic        or_issue;
  logic [GbCntWidth-1:0] gb_cnt_q;
  logic [MmOutAddrWidth-1:0] tr_out_addr;  // the transposed copy-out's read (below)

  assign or_n     = (n_q - or_t_q * 16'(ArrayCols) < 16'(ArrayCols))
                    ? n_q - or_t_q * 16'(ArrayCols) : 16'(ArrayCols);
  assign or_issue = copy_out && !trans_q && !or_done_q
                    && 32'(gb_cnt_q) + (or_v_q ? 32'(ArrayCols) : 32'd0) + ArrayCols <= GbElems;
  assign mm_out_addr = trans_q ? tr_out_addr
                               : MmOutAddrWidth'(32'(or_r_q) * 32'(nw_q) + 32'(or_t_q));

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_i) begin
      or_r_q    <= '0;
      or_t_q    <= '0;
      or_done_q <= 1'b0;
      or_v_q    <= 1'b0;
      or_n_q    <= '0;
    end else begin
      or_v_q    <= or_issue;
      or_n_q    <= or_n;
      if (or_issue) begin
        if (or_t_q + 16'd1 == nw_q) begin
          or_t_q <= '0;
          or_r_q <= or_r_q + 16'd1;
          if (or_r_q + 16'd1 == m_q) or_done_q <= 1'b1;
        end else begin
          or_t_q <= or_t_q + 16'd1;
        end
      end
    end
  end

  // Write side: row r of the result, head (group) after head, min(L, left) lanes per word.
  logic [GbElems*32-1:0] gb_q;
  logic [15:0]           wr_rows;    // rows written to the vector scratchpad: m
  logic [15:0]           wr_len;     // their elements: n
  logic [15:0]           ow_r_q;     // rows written
  logic [15:0]           ow_left_q;  // elements of the head not yet written
  logic [15:0]           ow_rleft_q; // elements of the row not yet written
  logic [15:0]           ow_n;       // lanes of this word
  logic [VecAddrWidth-1:0] ow_addr_q;
  logic [VecAddrWidth-1:0] ow_row_q;  // the first word of row r
  logic [VecAddrWidth-1:0] ow_head_q; // MATMUL_HEADS: the first word of the head
  logic                  ow_done;
  logic [GbCntWidth-1:0] pop_n, app_n;

  logic                  ow_req;

  assign wr_rows  = m_q;
  assign wr_len   = n_q;
  assign ow_done  = (ow_r_q == wr_rows);
  assign ow_n     = (ow_left_q < 16'(Lanes)) ? ow_left_q : 16'(Lanes);
  assign ow_req   = copy_out && !trans_q && !ow_done && (16'(gb_cnt_q) >= ow_n);

  assign pop_n = (ow_req && vs_gnt_i) ? GbCntWidth'(ow_n) : '0;
  assign app_n = or_v_q ? GbCntWidth'(or_n_q) : '0;

  logic [GbElems*32-1:0] app_data;
  always_comb begin  // evaluated only when a word arrives
    app_data = '0;
    if (copy_out && or_v_q) begin
      for (int c = 0; c < ArrayCols; c++) begin
        if (16'(c) < or_n_q) app_data[c*32 +: 32] = mm_out_rdata[c*32 +: 32];
      end
    end
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_i) begin
      gb_cnt_q  <= '0;
      gb_q      <= '0;
      ow_r_q     <= '0;
      ow_left_q  <= (start_group < start_len) ? start_group : start_len;
      ow_rleft_q <= start_len;
      ow_addr_q  <= VecAddrWidth'(cmd.dst_addr);
      ow_row_q   <= VecAddrWidth'(cmd.dst_addr);
      ow_head_q  <= VecAddrWidth'(cmd.dst_addr);
    end else if (copy_out) begin
      gb_cnt_q <= gb_cnt_q - pop_n + app_n;
      gb_q     <= (gb_q >> (32'(pop_n) * 32))
                  | (app_data << ((32'(gb_cnt_q) - 32'(pop_n)) * 32));
      if (ow_req && vs_gnt_i) begin
        ow_rleft_q <= ow_rleft_q - ow_n;
        ow_addr_q  <= ow_addr_q + VecAddrWidth'(1);
        if (heads_q && ow_left_q == ow_n) begin  // a head's last word: the next head's slot
          ow_addr_q <= ow_head_q + head_words_q;   // (rows are packed: also the next row)
          ow_head_q <= ow_head_q + head_words_q;
        end
        if (ow_rleft_q == ow_n) begin  // the row's last word
          ow_r_q     <= ow_r_q + 16'd1;
          ow_left_q  <= (group_q < wr_len) ? group_q : wr_len;
          ow_rleft_q <= wr_len;
          if (!heads_q) begin  // MATMUL: the next row starts S on
            ow_addr_q <= ow_row_q + stride_q;
            ow_row_q  <= ow_row_q + stride_q;
          end
        end else if (ow_left_q == ow_n) begin  // a head's last word: the next head
          ow_left_q <= (group_q < ow_rleft_q - ow_n) ? group_q : ow_rleft_q - ow_n;
        end else begin
          ow_left_q <= ow_left_q - ow_n;
        end
      end
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Copy out, transposed: blocks of L rows x one output word -> one vector word per column  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [15:0] tr_t_q;     // output word t: columns t * C ..
  logic [15:0] tr_b_q;     // row block b: rows b * L ..
  logic [15:0] tr_i_q;     // rows of the block read
  logic [15:0] tr_c_q;     // columns of the block written
  logic [15:0] tr_w_q;     // the row whose word mm_out_rdata holds
  logic        tr_v_q;     // mm_out_rdata holds a word of the block
  logic        tr_write_q; // writing the block's columns
  logic        tr_done_q;
  logic [ArrayCols*32-1:0] tr_tile_q [Lanes];  // row i of the block; shifts one column out
                                               // per write, so column c is always at [31:0]
  logic [15:0] tr_rows, tr_cols;  // of the block: min(L, m - b * L), min(C, n - t * C)
  logic        tr_issue, tr_req;

  assign tr_rows = (m_q - tr_b_q * 16'(Lanes) < 16'(Lanes)) ? m_q - tr_b_q * 16'(Lanes)
                                                             : 16'(Lanes);
  assign tr_cols = (n_q - tr_t_q * 16'(ArrayCols) < 16'(ArrayCols))
                   ? n_q - tr_t_q * 16'(ArrayCols) : 16'(ArrayCols);
  assign tr_issue = copy_out && trans_q && !tr_write_q && !tr_done_q && tr_i_q != tr_rows;
  assign tr_req   = copy_out && trans_q && tr_write_q;
  assign tr_out_addr = MmOutAddrWidth'((32'(tr_b_q) * Lanes + 32'(tr_i_q)) * 32'(nw_q)
                                       + 32'(tr_t_q));

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_i) begin
      tr_t_q     <= '0;
      tr_b_q     <= '0;
      tr_i_q     <= '0;
      tr_c_q     <= '0;
      tr_v_q     <= 1'b0;
      tr_write_q <= 1'b0;
      tr_done_q  <= 1'b0;
    end else begin
      tr_v_q <= tr_issue;
      if (tr_issue) tr_i_q <= tr_i_q + 16'd1;
      if (copy_out && trans_q && !tr_write_q && !tr_done_q && tr_i_q == tr_rows) begin
        tr_write_q <= 1'b1;  // the last row's word lands in the tile this cycle
      end
      if (tr_req && vs_gnt_i) begin
        if (tr_c_q + 16'd1 == tr_cols) begin  // the block's last column: the next block
          tr_c_q     <= '0;
          tr_i_q     <= '0;
          tr_write_q <= 1'b0;
          if (tr_b_q + 16'd1 == mw_q) begin
            tr_b_q <= '0;
            tr_t_q <= tr_t_q + 16'd1;
            if (tr_t_q + 16'd1 == nw_q) tr_done_q <= 1'b1;
          end else begin
            tr_b_q <= tr_b_q + 16'd1;
          end
        end else begin
          tr_c_q <= tr_c_q + 16'd1;
        end
      end
    end
  end
  always_ff @(posedge clk_i) begin  // datapath: no reset
    tr_w_q <= tr_i_q;
    if (tr_v_q) tr_tile_q[tr_w_q[LaneIdxWidth-1:0]] <= mm_out_rdata;
    if (tr_req && vs_gnt_i) begin
      for (int i = 0; i < Lanes; i++) tr_tile_q[i] <= tr_tile_q[i] >> 32;
    end
  end

  // The vector write port: the gearbox's rows, or a transposed block's columns.
  always_comb begin  // evaluated only while copying out
    vs_req_o   = ow_req || tr_req;
    vs_addr_o  = ow_addr_q;
    vs_wdata_o = gb_q[Lanes*32-1:0];
    vs_wmask_o = '0;
    if (tr_req) begin
      vs_addr_o = dst_q + VecAddrWidth'((32'(tr_t_q) * ArrayCols + 32'(tr_c_q)) * 32'(mw_q)
                                        + 32'(tr_b_q));
      for (int i = 0; i < Lanes; i++) begin
        vs_wdata_o[i*32 +: 32] = tr_tile_q[i][31:0];
        vs_wmask_o[i]          = (16'(i) < tr_rows);
      end
    end else if (copy_out) begin
      for (int l = 0; l < Lanes; l++) vs_wmask_o[l] = (16'(l) < ow_n);
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  always_comb begin
    state_d  = state_q;
    mm_start = 1'b0;
    passes_o = '0;
    unique case (state_q)
      // Wait for a MATMUL.
      StIdle: if (start_i) state_d = vec_busy_i ? StCopyIn : StStart;
      // The requantisation steps are in psm_matmul (copied before the run).
      StCopyIn: if (pm_done) state_d = StStart;
      // One pass per weight tile.
      StStart: begin
        mm_start = 1'b1;
        passes_o = 24'(32'(kt_n_q) * 32'(nw_q));
        state_d  = StRun;
      end
      // psm_matmul computes; its done_o is its last busy cycle.
      StRun: if (mm_done) state_d = StCopyOut;
      // The last result word is written.
      StCopyOut: if (trans_q ? tr_done_q : ow_done) state_d = StIdle;
      default: state_d = StIdle;
    endcase
  end

  assign busy_o      = (state_q != StIdle);
  assign copy_in_o   = busy_o && !pm_done;
  assign saturated_o = 24'(mm_saturated);

  // psm_matmul's own counters duplicate the controller's; bit 31 of a step is zero; the input
  // and weight reads are always granted (see the assertions).
  logic unused_bits;
  assign unused_bits = ^{mm_perf_busy, mm_perf_mac, mm_busy, pm_rdata_i[31], tr_w_q,
                         in_gnt_i, wt_gnt_i,
                         cmd.layer, cmd.op_class, cmd_act};

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Assertions                                                                              //
  //////////////////////////////////////////////////////////////////////////////////////////////

`ifndef SYNTHESIS
  // psm_matmul cannot wait for its operands: the accelerator gives the matmul stage the input
  // and weight memories' highest priority (requester 0 of their psm_spad_arbiter).
  InGranted_A: assert property (@(posedge clk_i) disable iff (rst_i) in_req_o |-> in_gnt_i);
  WtGranted_A: assert property (@(posedge clk_i) disable iff (rst_i) wt_req_o |-> wt_gnt_i);
`endif
endmodule : psm_matmul_stage
