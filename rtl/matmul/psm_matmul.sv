// SPDX-License-Identifier: Apache-2.0
// Matmul unit: out = requantize(A (m, k) x W^T (n, k)) on a weight-stationary systolic array,
// tiled over k (ArrayRows) and n (ArrayCols), with int32 accumulation across k tiles.
// Golden model: passim::kernels::matmul_i8() in runtime/src/kernels/matmul.cpp, then
// passim::requantize() per column (passim::kernels::requantize_i8/i16/i32).
//
// Memories (all "row-major in tiles"; KT = ceil(k / R), NT = ceil(n / C)):
//   input scratchpad  InDepth  words of R int8: word r*KT + kt, lane i = A[r][kt*R + i]
//   weight scratchpad WgtDepth words of R int8: word c*KT + kt, lane i = W[c][kt*R + i]
//   requant params    RqDepth  entries:          entry c = (mult, shift) of output column c
//   accumulator       AccDepth words of C int32: word r = the current n tile's row r
//   output buffer     OutDepth words of C int32: word r*NT + nt, lane j = out[r][nt*C + j]
// Lanes past k (inputs, weights) are padding and may hold anything: the unit zeroes the
// matching weights, so they contribute nothing. Output lanes past n are don't-care.
//
// Schedule, one (k tile, n tile) pair at a time, n tiles outer, k tiles inner:
//   StLoadWgt  C cycles: read weight word of column j, load it into PE column j (k/n masked)
//   StStream   m cycles: read activation row r, feed it to the array (skewed inside)
//   StDrain    R+C+1 cycles: scratchpad read (1), skew + array + de-skew (R+C-1),
//              accumulator read-modify-write (1) of the last row
//   StFlush    2 cycles once at the end: requantiser pipeline empties into the output buffer
// busy cycles = KT*NT*(m + R + 2C + 1) + 2; see docs/cycle-model.md.
//
// Read-out: the accumulate stage adds the array output into the accumulator word of its row
// (the first k tile overwrites). On the last k tile that sum also goes through C requantisers
// (psm_requant, 2 cycles) into the output buffer. requant_en = 0 writes raw int32 sums (the
// requantiser runs with mult = 1, shift = 0, out_bits = 32, which is the identity).
module psm_matmul #(
  parameter int unsigned ArrayRows = 2,    // R: k indices per tile
  parameter int unsigned ArrayCols = 4,    // C: output channels per tile
  parameter int unsigned InDepth   = 256,  // input scratchpad words: m * KT <= InDepth
  parameter int unsigned WgtDepth  = 256,  // weight scratchpad words: n * KT <= WgtDepth
  parameter int unsigned AccDepth  = 64,   // accumulator words: m <= AccDepth
  parameter int unsigned OutDepth  = 256,  // output buffer words: m * NT <= OutDepth
  parameter int unsigned RqDepth   = 64,   // requant parameter entries: n <= RqDepth
  parameter int unsigned DimWidth  = 16,   // width of m, k, n (depths must be <= 2^DimWidth)
  // Derived
  localparam int unsigned InAddrWidth  = $clog2(InDepth),
  localparam int unsigned WgtAddrWidth = $clog2(WgtDepth),
  localparam int unsigned AccAddrWidth = $clog2(AccDepth),
  localparam int unsigned OutAddrWidth = $clog2(OutDepth),
  localparam int unsigned RqAddrWidth  = $clog2(RqDepth)
) (
  input  logic                          clk_i,
  input  logic                          rst_i,         // synchronous, active high
  // Command, valid with the start_i pulse
  input  logic                          start_i,
  input  logic [DimWidth-1:0]           m_i,           // rows of A and out, >= 1
  input  logic [DimWidth-1:0]           k_i,           // reduction length, >= 1
  input  logic [DimWidth-1:0]           n_i,           // rows of W = columns of out, >= 1
  input  logic [5:0]                    out_bits_i,    // 8, 16 or 32
  input  logic                          requant_en_i,  // 0: write raw int32 accumulators
  output logic                          busy_o,
  output logic                          done_o,        // one cycle, the last busy cycle
  // Input scratchpad write port (int8 activations), only while idle
  input  logic                          in_we_i,
  input  logic [InAddrWidth-1:0]        in_addr_i,
  input  logic [ArrayRows*8-1:0]        in_wdata_i,
  // Weight scratchpad write port (int8 weights), only while idle
  input  logic                          wgt_we_i,
  input  logic [WgtAddrWidth-1:0]       wgt_addr_i,
  input  logic [ArrayRows*8-1:0]        wgt_wdata_i,
  // Per-column requant parameter write port, only while idle
  input  logic                          rq_we_i,
  input  logic [RqAddrWidth-1:0]        rq_addr_i,     // output column
  input  logic [30:0]                   rq_mult_i,     // unsigned
  input  logic [5:0]                    rq_shift_i,    // 0..63
  // Output buffer read port: data valid the cycle after the address
  input  logic [OutAddrWidth-1:0]       out_addr_i,
  output logic [ArrayCols*32-1:0]       out_rdata_o,   // int32 lanes, sign-extended
  // Performance counters, cleared by start_i, held after done_o
  output logic [31:0]                   perf_busy_cycles_o,  // cycles with busy_o high
  output logic [31:0]                   perf_mac_cycles_o    // cycles an activation row enters
);
  localparam int unsigned RowBits = ArrayRows * 8;   // one scratchpad word
  localparam int unsigned ColBits = ArrayCols * 32;  // one accumulator / output word
  localparam int unsigned ColIdxWidth = $clog2(ArrayCols + 1);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command registers                                                                        //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [DimWidth-1:0] m_q, k_q, n_q;
  logic [DimWidth-1:0] ktiles_q, ntiles_q;  // KT = ceil(k / R), NT = ceil(n / C)
  logic [5:0]          out_bits_q;
  logic                requant_en_q;

  logic start_cmd;  // a command is accepted (start_i while idle)

  always_ff @(posedge clk_i) begin  // configuration: no reset, loaded by a command
    if (start_cmd) begin
      m_q          <= m_i;
      k_q          <= k_i;
      n_q          <= n_i;
      ktiles_q     <= DimWidth'((32'(k_i) + ArrayRows - 1) / ArrayRows);
      ntiles_q     <= DimWidth'((32'(n_i) + ArrayCols - 1) / ArrayCols);
      out_bits_q   <= out_bits_i;
      requant_en_q <= requant_en_i;
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control FSM                                                                              //
  //////////////////////////////////////////////////////////////////////////////////////////////

  typedef enum logic [2:0] {
    StIdle,     // wait for start_i
    StLoadWgt,  // read one weight word per cycle into PE column col_q
    StStream,   // read one activation row per cycle into the array
    StDrain,    // wait until the tile's last row is in the accumulator
    StFlush     // wait until the requantiser pipeline has written the output buffer
  } mm_state_e;

  mm_state_e state_q, state_d;

  logic [ColIdxWidth-1:0] col_q;        // weight column being read (StLoadWgt)
  logic [DimWidth-1:0]    row_q;        // activation row being read (StStream)
  logic [DimWidth-1:0]    kt_q, nt_q;   // current k tile and n tile
  logic                   last_kt, last_nt;
  logic                   wgt_rd_en, in_rd_en, tile_done;
  logic                   acc_valid_q;  // accumulate stage holds a row (see below)
  logic [DimWidth-1:0]    acc_row_q;
  logic                   rq_valid_q, rq_valid_q2;

  assign start_cmd = start_i && (state_q == StIdle);
  assign last_kt   = (kt_q == ktiles_q - 1'b1);
  assign last_nt   = (nt_q == ntiles_q - 1'b1);
  // The accumulate stage writes the tile's last row this cycle.
  assign tile_done = acc_valid_q && (acc_row_q == m_q - 1'b1);

  always_comb begin
    state_d   = state_q;
    wgt_rd_en = 1'b0;
    in_rd_en  = 1'b0;
    done_o    = 1'b0;
    unique case (state_q)
      // Idle: the command is latched on start_i.
      StIdle: begin
        if (start_i) state_d = StLoadWgt;
      end
      // Weight preload: column col_q, C cycles.
      StLoadWgt: begin
        wgt_rd_en = 1'b1;
        if (col_q == ColIdxWidth'(ArrayCols - 1)) state_d = StStream;
      end
      // Stream: activation row row_q, m cycles.
      StStream: begin
        in_rd_en = 1'b1;
        if (row_q == m_q - 1'b1) state_d = StDrain;
      end
      // Drain: the array and the accumulate stage empty; then the next tile or the flush.
      StDrain: begin
        if (tile_done) state_d = (last_kt && last_nt) ? StFlush : StLoadWgt;
      end
      // Flush: stage 2 of the requantiser writes the last row in the cycle stage 1 is empty.
      StFlush: begin
        if (!rq_valid_q) begin
          state_d = StIdle;
          done_o  = 1'b1;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) state_q <= StIdle;
    else       state_q <= state_d;
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      col_q <= '0;
      row_q <= '0;
      kt_q  <= '0;
      nt_q  <= '0;
    end else begin
      if (start_cmd) begin
        kt_q <= '0;
        nt_q <= '0;
      end
      if (wgt_rd_en) col_q <= (state_d == StStream) ? '0 : col_q + 1'b1;
      if (in_rd_en)  row_q <= (state_d == StDrain) ? '0 : row_q + 1'b1;
      if (state_q == StDrain && tile_done) begin
        kt_q <= last_kt ? '0 : kt_q + 1'b1;
        if (last_kt) nt_q <= nt_q + 1'b1;
      end
    end
  end

  assign busy_o = (state_q != StIdle);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Scratchpads (written by the port while idle, read by the FSM; synchronous read)          //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [RowBits-1:0] in_mem  [InDepth];
  logic [RowBits-1:0] wgt_mem [WgtDepth];
  logic [30:0]        rq_mult_mem  [RqDepth];
  logic [5:0]         rq_shift_mem [RqDepth];

  always_ff @(posedge clk_i) begin
    if (in_we_i)  in_mem[in_addr_i]   <= in_wdata_i;
    if (wgt_we_i) wgt_mem[wgt_addr_i] <= wgt_wdata_i;
    if (rq_we_i) begin
      rq_mult_mem[rq_addr_i]  <= rq_mult_i;
      rq_shift_mem[rq_addr_i] <= rq_shift_i;
    end
  end

  // First k index and first output column of the current tile.
  logic [DimWidth-1:0] k_base, n_base;
  assign k_base = DimWidth'(kt_q * ArrayRows);
  assign n_base = DimWidth'(nt_q * ArrayCols);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Weight preload: word (n_base + col) * KT + kt -> PE column col, padding forced to zero   //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [DimWidth-1:0]     wgt_col;       // output column being read
  logic                    wgt_col_ok;    // wgt_col < n (else the column is padding)
  logic [WgtAddrWidth-1:0] wgt_rd_addr;
  logic [RowBits-1:0]      wgt_rdata_q;
  logic                    wgt_col_ok_q;
  logic [ArrayCols-1:0]    wgt_load_q;    // one-hot PE column to load, one cycle after the read
  logic [ArrayRows-1:0]    k_lane_ok;     // lane i is a real k index (kt*R + i < k)
  logic [RowBits-1:0]      wgt_tile;      // masked weights for the PE column

  assign wgt_col     = n_base + DimWidth'(col_q);
  assign wgt_col_ok  = (wgt_col < n_q);
  assign wgt_rd_addr = wgt_col_ok ? WgtAddrWidth'(wgt_col * ktiles_q + kt_q) : '0;

  always_ff @(posedge clk_i) begin  // datapath: no reset
    wgt_rdata_q  <= wgt_mem[wgt_rd_addr];
    wgt_col_ok_q <= wgt_col_ok;
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i)          wgt_load_q <= '0;
    else if (wgt_rd_en) wgt_load_q <= ArrayCols'(1) << col_q;
    else                wgt_load_q <= '0;
  end

  for (genvar i = 0; i < ArrayRows; i++) begin : g_k_mask
    assign k_lane_ok[i] = (32'(k_base) + i) < 32'(k_q);
    assign wgt_tile[i*8+:8] = (k_lane_ok[i] && wgt_col_ok_q) ? wgt_rdata_q[i*8+:8] : 8'd0;
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Activation stream: word row * KT + kt -> array (padding lanes meet zero weights)         //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [InAddrWidth-1:0] in_rd_addr;
  logic [RowBits-1:0]     in_rdata_q;
  logic                   act_valid_q;

  assign in_rd_addr = InAddrWidth'(row_q * ktiles_q + kt_q);

  always_ff @(posedge clk_i) begin  // datapath: no reset
    in_rdata_q <= in_mem[in_rd_addr];
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) act_valid_q <= 1'b0;
    else       act_valid_q <= in_rd_en;
  end

  logic               arr_valid;
  logic [ColBits-1:0] arr_out;

  psm_systolic_array #(
    .ArrayRows(ArrayRows),
    .ArrayCols(ArrayCols),
    .DataWidth(8),
    .AccWidth (32)
  ) u_array (
    .clk_i,
    .rst_i,
    .wgt_load_i (wgt_load_q),
    .wgt_i      (wgt_tile),
    .act_valid_i(act_valid_q),
    .act_i      (in_rdata_q),
    .out_valid_o(arr_valid),
    .out_o      (arr_out)
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Accumulate stage: acc[row] = (first k tile ? 0 : acc[row]) + array output               //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Cycle A: the array output of row out_row_q is registered and its accumulator word read.
  // Cycle B: the sum is written back and, on the last k tile, enters the requantisers.
  logic [ColBits-1:0]  acc_mem [AccDepth];
  logic [DimWidth-1:0] out_row_q;  // array outputs seen in this tile
  logic [ColBits-1:0]  psum_q, acc_rdata_q, acc_sum;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      out_row_q   <= '0;
      acc_valid_q <= 1'b0;
      acc_row_q   <= '0;
    end else begin
      if (state_q == StLoadWgt) out_row_q <= '0;
      else if (arr_valid)       out_row_q <= out_row_q + 1'b1;
      acc_valid_q <= arr_valid;
      acc_row_q   <= out_row_q;
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    psum_q      <= arr_out;
    acc_rdata_q <= acc_mem[AccAddrWidth'(out_row_q)];
    if (acc_valid_q) acc_mem[AccAddrWidth'(acc_row_q)] <= acc_sum;
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Requantise the final sums (last k tile) into the output buffer                          //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [ColBits-1:0]      rq_out;
  logic [OutAddrWidth-1:0] out_addr_q, out_addr_q2;
  logic [ColBits-1:0]      out_mem [OutDepth];
  logic [ColBits-1:0]      out_rdata_q;

  for (genvar j = 0; j < ArrayCols; j++) begin : g_col
    logic signed [31:0] psum, acc_old, sum;
    logic [DimWidth-1:0] col;
    logic [30:0]         mult;
    logic [5:0]          shift, out_bits;

    // int32 accumulator, wraps on overflow like the golden uint32 accumulation.
    assign psum    = psum_q[j*32+:32];
    assign acc_old = acc_rdata_q[j*32+:32];
    assign sum     = psum + ((kt_q == '0) ? 32'sd0 : acc_old);
    assign acc_sum[j*32+:32] = sum;

    assign col = n_base + DimWidth'(j);
    always_comb begin
      mult     = 31'd1;  // raw int32: 1 * x, no shift, 32-bit saturation = identity
      shift    = 6'd0;
      out_bits = 6'd32;
      if (requant_en_q) begin
        out_bits = out_bits_q;
        if (col < n_q) begin
          mult  = rq_mult_mem[RqAddrWidth'(col)];
          shift = rq_shift_mem[RqAddrWidth'(col)];
        end else begin
          mult  = 31'd0;  // padding column: writes 0
        end
      end
    end

    psm_requant u_requant (
      .clk_i,
      .en_i      (busy_o),  // idle units do not toggle their requantisers
      .x_i       (sum),
      .mult_i    (mult),
      .shift_i   (shift),
      .out_bits_i(out_bits),
      .y_o       (rq_out[j*32+:32])
    );
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      rq_valid_q  <= 1'b0;
      rq_valid_q2 <= 1'b0;
    end else begin
      rq_valid_q  <= acc_valid_q && last_kt;
      rq_valid_q2 <= rq_valid_q;
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    out_addr_q  <= OutAddrWidth'(acc_row_q * ntiles_q + nt_q);
    out_addr_q2 <= out_addr_q;
    if (rq_valid_q2) out_mem[out_addr_q2] <= rq_out;
    out_rdata_q <= out_mem[out_addr_i];
  end

  assign out_rdata_o = out_rdata_q;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Performance counters                                                                     //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [31:0] perf_busy_q, perf_mac_q;

  always_ff @(posedge clk_i) begin
    if (rst_i || start_cmd) begin
      perf_busy_q <= '0;
      perf_mac_q  <= '0;
    end else begin
      if (busy_o)      perf_busy_q <= perf_busy_q + 1'b1;
      if (act_valid_q) perf_mac_q  <= perf_mac_q + 1'b1;
    end
  end

  assign perf_busy_cycles_o = perf_busy_q;
  assign perf_mac_cycles_o  = perf_mac_q;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Assertions                                                                               //
  //////////////////////////////////////////////////////////////////////////////////////////////

`ifndef SYNTHESIS
  StartWhenIdle_A: assert property (@(posedge clk_i) disable iff (rst_i)
      start_i |-> state_q == StIdle);
  CmdSizes_A: assert property (@(posedge clk_i) disable iff (rst_i)
      start_i |-> m_i != '0 && k_i != '0 && n_i != '0 && 32'(m_i) <= AccDepth
                  && 32'(n_i) <= RqDepth
                  && 32'(m_i) * ((32'(k_i) + ArrayRows - 1) / ArrayRows) <= InDepth
                  && 32'(n_i) * ((32'(k_i) + ArrayRows - 1) / ArrayRows) <= WgtDepth
                  && 32'(m_i) * ((32'(n_i) + ArrayCols - 1) / ArrayCols) <= OutDepth);
  CmdOutBits_A: assert property (@(posedge clk_i) disable iff (rst_i)
      start_i && requant_en_i |-> out_bits_i == 6'd8 || out_bits_i == 6'd16
                                  || out_bits_i == 6'd32);
  WriteWhenIdle_A: assert property (@(posedge clk_i) disable iff (rst_i)
      busy_o |-> !in_we_i && !wgt_we_i && !rq_we_i);
`endif

endmodule : psm_matmul
