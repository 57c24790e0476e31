// SPDX-License-Identifier: Apache-2.0
// Runs one MATMUL instruction (docs/isa.md) on psm_matmul, which keeps its operands in its
// own memories and its own layouts: this wrapper copies the operands in from the ISA's input,
// weight and param memories, starts the unit, and copies the result rows out to the vector
// scratchpad.
// Golden model: passim::CpuDevice::matmul() in runtime/src/cpu_device.cpp.
//
// With KT = ceil(k / R), NW = ceil(n / C), NV = ceil(n / L):
//   copy in   (three copiers run in parallel, each one word per cycle)
//     input:  input[a_addr + i]                      -> psm_matmul input word i, i < m * KT
//     param:  param[rq_addr + c] (when requant_en)   -> psm_matmul requant entry c, c < n
//     weight: per block (kt, j): R words W^T rows kt*R + i, word group j (R reads), then
//             C writes of psm_matmul weight word c * KT + kt = W[c][kt*R +: R], c = j*C + l
//   run       psm_matmul (one pass per weight tile: KT * NW passes)
//   copy out  psm_matmul output word r * NW + t (C int32) -> element gearbox ->
//             vector word dst_addr + r * NV + w (L lanes, write mask on the row's tail)
// out_bits (2..32) goes straight to psm_matmul, whose requantisers saturate to any width.
// TODO(psm_matmul interface): reading the ISA memories directly would remove both copies
// and psm_matmul's private memories.
module psm_matmul_stage #(
  parameter int unsigned ArrayRows   = 2,
  parameter int unsigned ArrayCols   = 4,
  parameter int unsigned Lanes       = 2,
  parameter int unsigned InputDepth  = 1024,
  parameter int unsigned WeightDepth = 2048,
  parameter int unsigned VectorDepth = 1024,
  parameter int unsigned ParamDepth  = 256,
  parameter int unsigned AccDepth    = 128,
  parameter int unsigned MmWgtDepth  = 4096,
  parameter int unsigned MmOutDepth  = 1024,
  // Derived
  localparam int unsigned InAddrWidth  = $clog2(InputDepth),
  localparam int unsigned WgtAddrWidth = $clog2(WeightDepth),
  localparam int unsigned VecAddrWidth = $clog2(VectorDepth),
  localparam int unsigned PrmAddrWidth = $clog2(ParamDepth)
) (
  input  logic                            clk_i,
  input  logic                            rst_i,        // synchronous, active high (and abort)
  // Command (a checked MATMUL)
  input  logic                            start_i,
  input  logic [psm_pkg::INSTR_WIDTH-1:0] instr_i,
  output logic                            busy_o,
  output logic [23:0]                     passes_o,     // passes started this cycle
  // Input memory read port
  output logic                            in_req_o,
  output logic [InAddrWidth-1:0]          in_addr_o,
  input  logic                            in_gnt_i,
  input  logic [ArrayRows*8-1:0]          in_rdata_i,
  // Weight memory read port
  output logic                            wt_req_o,
  output logic [WgtAddrWidth-1:0]         wt_addr_o,
  input  logic                            wt_gnt_i,
  input  logic [ArrayCols*8-1:0]          wt_rdata_i,
  // Param memory read port
  output logic                            pm_req_o,
  output logic [PrmAddrWidth-1:0]         pm_addr_o,
  input  logic                            pm_gnt_i,
  input  logic [63:0]                     pm_rdata_i,
  // Vector scratchpad write port
  output logic                            vs_req_o,
  output logic [VecAddrWidth-1:0]         vs_addr_o,
  output logic [Lanes*32-1:0]             vs_wdata_o,
  output logic [Lanes-1:0]                vs_wmask_o,
  input  logic                            vs_gnt_i
);
  localparam int unsigned MmInAddrWidth  = $clog2(InputDepth);
  localparam int unsigned MmWgtAddrWidth = $clog2(MmWgtDepth);
  localparam int unsigned MmOutAddrWidth = $clog2(MmOutDepth);
  localparam int unsigned MmRqAddrWidth  = $clog2(ParamDepth);
  localparam int unsigned GbElems        = 2 * (ArrayCols + Lanes);  // gearbox capacity
  localparam int unsigned GbCntWidth     = $clog2(GbElems + 1);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  psm_pkg::matmul_instr_t cmd;
  assign cmd = instr_i;  // no type cast: Yosys 0.23 rejects casts to package types

  logic [15:0] m_q, k_q, n_q;
  logic [15:0] kt_n_q;       // KT
  logic [15:0] nw_q;         // NW = ceil(n / C)
  logic [15:0] a_addr_q, w_addr_q;
  logic [11:0] rq_addr_q;
  logic [5:0]  out_bits_q;
  logic        requant_en_q;

  logic [15:0] start_kt, start_nw;
  assign start_kt = 16'((32'(cmd.k) + ArrayRows - 1) / ArrayRows);
  assign start_nw = 16'((32'(cmd.n) + ArrayCols - 1) / ArrayCols);

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
      requant_en_q <= cmd.requant_en;
    end
  end

  typedef enum logic [2:0] {
    StIdle,     // wait for start_i
    StCopyIn,   // the three copiers fill psm_matmul's memories
    StStart,    // start psm_matmul
    StRun,      // wait for it
    StCopyOut   // result rows to the vector scratchpad
  } mms_state_e;

  mms_state_e state_q, state_d;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // psm_matmul                                                                              //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic                        mm_start, mm_busy, mm_done;
  logic                        mm_in_we, mm_wgt_we, mm_rq_we;
  logic [MmInAddrWidth-1:0]    mm_in_addr;
  logic [MmWgtAddrWidth-1:0]   mm_wgt_addr;
  logic [MmRqAddrWidth-1:0]    mm_rq_addr;
  logic [ArrayRows*8-1:0]      mm_in_wdata, mm_wgt_wdata;
  logic [MmOutAddrWidth-1:0]   mm_out_addr;
  logic [ArrayCols*32-1:0]     mm_out_rdata;
  logic [31:0]                 mm_perf_busy, mm_perf_mac;

  psm_matmul #(
    .ArrayRows(ArrayRows),
    .ArrayCols(ArrayCols),
    .InDepth  (InputDepth),
    .WgtDepth (MmWgtDepth),
    .AccDepth (AccDepth),
    .OutDepth (MmOutDepth),
    .RqDepth  (ParamDepth),
    .DimWidth (16)
  ) u_matmul (
    .clk_i,
    .rst_i,
    .start_i           (mm_start),
    .m_i               (m_q),
    .k_i               (k_q),
    .n_i               (n_q),
    .out_bits_i        (out_bits_q),
    .requant_en_i      (requant_en_q),
    .busy_o            (mm_busy),
    .done_o            (mm_done),
    .in_we_i           (mm_in_we),
    .in_addr_i         (mm_in_addr),
    .in_wdata_i        (mm_in_wdata),
    .wgt_we_i          (mm_wgt_we),
    .wgt_addr_i        (mm_wgt_addr),
    .wgt_wdata_i       (mm_wgt_wdata),
    .rq_we_i           (mm_rq_we),
    .rq_addr_i         (mm_rq_addr),
    .rq_mult_i         (pm_rdata_i[30:0]),
    .rq_shift_i        (pm_rdata_i[37:32]),
    .out_addr_i        (mm_out_addr),
    .out_rdata_o       (mm_out_rdata),
    .perf_busy_cycles_o(mm_perf_busy),
    .perf_mac_cycles_o (mm_perf_mac)
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Copy in: input words                                                                    //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic        copy_in;       // StCopyIn
  logic [31:0] in_total;      // m * KT
  logic [31:0] in_rd_q;       // words requested and granted
  logic        in_v_q;        // the word granted last cycle is on in_rdata_i
  logic [MmInAddrWidth-1:0] in_wa_q;  // its psm_matmul address
  logic        in_done;

  assign copy_in  = (state_q == StCopyIn);
  assign in_total = 32'(m_q) * 32'(kt_n_q);
  assign in_req_o = copy_in && (in_rd_q != in_total);
  assign in_addr_o = InAddrWidth'(32'(a_addr_q) + in_rd_q);
  assign in_done  = (in_rd_q == in_total) && !in_v_q;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_i) begin
      in_rd_q <= '0;
      in_v_q  <= 1'b0;
    end else begin
      in_v_q <= in_req_o && in_gnt_i;
      if (in_req_o && in_gnt_i) in_rd_q <= in_rd_q + 32'd1;
    end
  end
  always_ff @(posedge clk_i) begin  // datapath: no reset
    in_wa_q <= MmInAddrWidth'(in_rd_q);
  end

  assign mm_in_we    = in_v_q;
  assign mm_in_addr  = in_wa_q;
  assign mm_in_wdata = in_rdata_i;

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
  // Copy in: weights, R x C blocks through two block buffers                                //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The reader fills one buffer with block (kt, j) - R reads of W^T rows kt*R + i, word group
  // j - while the writer empties the other into C psm_matmul words. Blocks go j-major, kt
  // inner. Per block: R + 1 cycles to read, min(C, n - j*C) to write, overlapped.
  localparam int unsigned RowIdxWidth = (ArrayRows > 1) ? $clog2(ArrayRows + 1) : 1;
  localparam int unsigned ColIdxWidth = (ArrayCols > 1) ? $clog2(ArrayCols + 1) : 1;
  localparam int unsigned RowSelWidth = (ArrayRows > 1) ? $clog2(ArrayRows) : 1;
  localparam int unsigned ColSelWidth = (ArrayCols > 1) ? $clog2(ArrayCols) : 1;

  logic [7:0]  blk_q [2][ArrayRows][ArrayCols];
  logic [1:0]  full_q;                 // buffer holds a complete block for the writer
  logic [15:0] blk_kt_q [2];           // the block each buffer holds
  logic [15:0] blk_j_q [2];

  // Reader
  logic                   rd_slot_q;   // buffer being filled
  logic [15:0]            rd_kt_q, rd_j_q;
  logic [RowIdxWidth-1:0] rd_i_q;      // next row to read
  logic                   rd_done_q;   // every block read
  logic                   wb_v_q;      // the row granted last cycle is on wt_rdata_i
  logic                   wb_vslot_q;  // its buffer
  logic [RowSelWidth-1:0] wb_vi_q;     // its row
  logic [31:0]            rd_kk;       // W^T row of the next read
  logic                   rd_kk_ok;    // a real row (< k); padding rows are zero, no read
  logic                   rd_active;   // the reader works on an empty buffer
  logic                   rd_block_end;

  assign rd_kk        = 32'(rd_kt_q) * ArrayRows + 32'(rd_i_q);
  assign rd_kk_ok     = rd_kk < 32'(k_q);
  assign rd_active    = copy_in && !rd_done_q && !full_q[rd_slot_q];
  assign rd_block_end = rd_active && (32'(rd_i_q) == ArrayRows);
  assign wt_req_o     = rd_active && !rd_block_end && rd_kk_ok;
  assign wt_addr_o    = WgtAddrWidth'(32'(w_addr_q) + rd_kk * 32'(nw_q) + 32'(rd_j_q));

  // Writer
  logic                   wr_slot_q;   // buffer being emptied
  logic [ColIdxWidth-1:0] wr_l_q;      // next column to write
  logic [31:0]            wr_blocks_q; // blocks written
  logic                   wb_done_q;   // every block written
  logic [15:0]            wr_cols;     // columns of the block: min(C, n - j*C)
  logic                   wr_active, wr_block_end;
  logic [31:0]            wr_c;        // column of this write

  assign wr_cols      = (n_q - blk_j_q[wr_slot_q] * 16'(ArrayCols) < 16'(ArrayCols))
                        ? n_q - blk_j_q[wr_slot_q] * 16'(ArrayCols) : 16'(ArrayCols);
  assign wr_active    = copy_in && full_q[wr_slot_q];
  assign wr_block_end = wr_active && (16'(wr_l_q) + 16'd1 == wr_cols);
  assign wr_c         = 32'(blk_j_q[wr_slot_q]) * ArrayCols + 32'(wr_l_q);

  logic last_block;  // the reader completes the last block
  assign last_block = (rd_kt_q + 16'd1 == kt_n_q) && (rd_j_q + 16'd1 == nw_q);

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_i) begin
      full_q    <= '0;
      rd_slot_q <= 1'b0;
      rd_kt_q   <= '0;
      rd_j_q    <= '0;
      rd_i_q    <= '0;
      rd_done_q <= 1'b0;
      wb_v_q    <= 1'b0;
      wr_slot_q <= 1'b0;
      wr_l_q      <= '0;
      wr_blocks_q <= '0;
      wb_done_q   <= 1'b0;
    end else begin
      wb_v_q <= wt_req_o && wt_gnt_i;
      // Reader: a real row advances on its grant, a padding row at once; the block ends in the
      // cycle after its last row (whose data is captured in that cycle).
      if (rd_active && !rd_block_end && (!rd_kk_ok || wt_gnt_i)) begin
        rd_i_q <= rd_i_q + RowIdxWidth'(1);
      end
      if (rd_block_end) begin
        rd_i_q    <= '0;
        rd_slot_q <= !rd_slot_q;
        if (last_block) rd_done_q <= 1'b1;
        if (rd_kt_q + 16'd1 == kt_n_q) begin
          rd_kt_q <= '0;
          rd_j_q  <= rd_j_q + 16'd1;
        end else begin
          rd_kt_q <= rd_kt_q + 16'd1;
        end
      end
      // Writer: one psm_matmul word per cycle; the last one frees the buffer.
      if (wr_active) wr_l_q <= wr_l_q + ColIdxWidth'(1);
      if (wr_block_end) begin
        wr_l_q    <= '0;
        wr_slot_q   <= !wr_slot_q;
        wr_blocks_q <= wr_blocks_q + 32'd1;
        if (wr_blocks_q + 32'd1 == 32'(kt_n_q) * 32'(nw_q)) wb_done_q <= 1'b1;
      end
      // Buffer states: set by the reader, cleared by the writer (never the same buffer).
      for (int b = 0; b < 2; b++) begin
        if (rd_block_end && rd_slot_q == 1'(b)) full_q[b] <= 1'b1;
        if (wr_block_end && wr_slot_q == 1'(b)) full_q[b] <= 1'b0;
      end
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    wb_vi_q    <= rd_i_q[RowSelWidth-1:0];
    wb_vslot_q <= rd_slot_q;
    if (wb_v_q) begin
      for (int l = 0; l < ArrayCols; l++) blk_q[wb_vslot_q][wb_vi_q][l] <= wt_rdata_i[l*8 +: 8];
    end
    if (rd_active && !rd_block_end && !rd_kk_ok) begin
      for (int l = 0; l < ArrayCols; l++) blk_q[rd_slot_q][rd_i_q[RowSelWidth-1:0]][l] <= 8'd0;
    end
    if (rd_block_end) begin
      blk_kt_q[rd_slot_q] <= rd_kt_q;
      blk_j_q[rd_slot_q]  <= rd_j_q;
    end
  end

  always_comb begin
    for (int i = 0; i < ArrayRows; i++) begin
      mm_wgt_wdata[i*8 +: 8] = blk_q[wr_slot_q][i][wr_l_q[ColSelWidth-1:0]];
    end
  end
  assign mm_wgt_we   = wr_active;
  assign mm_wgt_addr = MmWgtAddrWidth'(wr_c * 32'(kt_n_q) + 32'(blk_kt_q[wr_slot_q]));

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

  assign or_n     = (n_q - or_t_q * 16'(ArrayCols) < 16'(ArrayCols))
                    ? n_q - or_t_q * 16'(ArrayCols) : 16'(ArrayCols);
  assign or_issue = copy_out && !or_done_q
                    && 32'(gb_cnt_q) + (or_v_q ? 32'(ArrayCols) : 32'd0) + ArrayCols <= GbElems;
  assign mm_out_addr = MmOutAddrWidth'(32'(or_r_q) * 32'(nw_q) + 32'(or_t_q));

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_i) begin
      or_r_q    <= '0;
      or_t_q    <= '0;
      or_done_q <= 1'b0;
      or_v_q    <= 1'b0;
      or_n_q    <= '0;
    end else begin
      or_v_q <= or_issue;
      or_n_q <= or_n;
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

  // Write side: row r of the result, min(L, left) lanes per word.
  logic [GbElems*32-1:0] gb_q;
  logic [15:0]           ow_r_q;     // rows written
  logic [15:0]           ow_left_q;  // elements of the row not yet written
  logic [15:0]           ow_n;       // lanes of this word
  logic [VecAddrWidth-1:0] ow_addr_q;
  logic                  ow_done;
  logic [GbCntWidth-1:0] pop_n, app_n;

  assign ow_done  = (ow_r_q == m_q);
  assign ow_n     = (ow_left_q < 16'(Lanes)) ? ow_left_q : 16'(Lanes);
  assign vs_req_o = copy_out && !ow_done && (16'(gb_cnt_q) >= ow_n);
  assign vs_addr_o = ow_addr_q;
  assign vs_wdata_o = gb_q[Lanes*32-1:0];
  always_comb begin
    for (int l = 0; l < Lanes; l++) vs_wmask_o[l] = (16'(l) < ow_n);
  end

  assign pop_n = (vs_req_o && vs_gnt_i) ? GbCntWidth'(ow_n) : '0;
  assign app_n = or_v_q ? GbCntWidth'(or_n_q) : '0;

  logic [GbElems*32-1:0] app_data;
  always_comb begin
    app_data = '0;
    for (int c = 0; c < ArrayCols; c++) begin
      if (or_v_q && 16'(c) < or_n_q) app_data[c*32 +: 32] = mm_out_rdata[c*32 +: 32];
    end
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_i) begin
      gb_cnt_q  <= '0;
      gb_q      <= '0;
      ow_r_q    <= '0;
      ow_left_q <= cmd.n == '0 ? 16'd0 : 16'(cmd.n);
      ow_addr_q <= VecAddrWidth'(cmd.dst_addr);
    end else if (copy_out) begin
      gb_cnt_q <= gb_cnt_q - pop_n + app_n;
      gb_q     <= (gb_q >> (32'(pop_n) * 32))
                  | (app_data << ((32'(gb_cnt_q) - 32'(pop_n)) * 32));
      if (vs_req_o && vs_gnt_i) begin
        ow_addr_q <= ow_addr_q + VecAddrWidth'(1);
        if (ow_left_q == ow_n) begin
          ow_r_q    <= ow_r_q + 16'd1;
          ow_left_q <= n_q;
        end else begin
          ow_left_q <= ow_left_q - ow_n;
        end
      end
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
      StIdle: if (start_i) state_d = StCopyIn;
      // All three copies complete.
      StCopyIn: if (in_done && pm_done && wb_done_q) state_d = StStart;
      // One pass per weight tile.
      StStart: begin
        mm_start = 1'b1;
        passes_o = 24'(32'(kt_n_q) * 32'(nw_q));
        state_d  = StRun;
      end
      // psm_matmul computes; its done_o is its last busy cycle.
      StRun: if (mm_done) state_d = StCopyOut;
      // The last result word is written.
      StCopyOut: if (ow_done) state_d = StIdle;
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) state_q <= StIdle;
    else       state_q <= state_d;
  end

  assign busy_o = (state_q != StIdle);

  // psm_matmul's own counters duplicate the controller's; the upper param bits are zero.
  logic unused_bits;
  assign unused_bits = ^{mm_perf_busy, mm_perf_mac, mm_busy, pm_rdata_i[63:38], pm_rdata_i[31],
                         cmd.rsvd_31_27, cmd.rsvd_95_92, cmd.opcode, cmd.layer, cmd.op_class};
endmodule : psm_matmul_stage
