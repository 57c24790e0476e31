// SPDX-License-Identifier: Apache-2.0
// Matmul unit: out = requantize(A (m, k) x W^T (n, k)) on a weight-stationary systolic array,
// tiled over k (ArrayRows) and n (ArrayCols), with int32 accumulation across k tiles.
// Golden model: passim::kernels::matmul_i8() in runtime/src/kernels/matmul.cpp, then
// passim::requantize() per column (passim::kernels::requantize_i8/i16/i32); with G > 1 digit
// groups, passim::kernels::matmul_digits_i8() (MATMUL_ACT, docs/isa.md).
//
// Digit groups (G = digits_i, 1..3): A's rows and W^T hold G groups of k one after another,
// and out = sum over g of 256^(G-1-g) * A_g W_g^T, accumulated group after group as
// acc = 256 * acc + A_g W_g^T (int32, wraps). The tile loop runs over G * KT k tiles; the
// first k tile of each later group shifts the accumulator left by 8 before adding.
//
// Memories (KT = ceil(k / R), NT = ceil(n / C)). A and W stay in the caller's memories (the
// ISA's input and weight memories in the accelerator), read through two ports in the ISA's
// layouts; word addresses are relative to the operand, data comes the cycle after the read:
//   input   (read port) words of R int8: word (r*G + g)*KT + kt, lane i = A_g[r][kt*R + i]
//   weight  (read port) words of C int8: word (g*k + kk)*NT + nt, lane j = W_g[nt*C + j][kk]
//   requant params    C lanes of ceil(RqDepth / C) words: column c = (mult, shift, bias) in
//                     lane c % C, word c / C, so an n tile's C columns share one word address
//   accumulator       AccDepth words of C int32: word r = the current n tile's row r
//   output buffer     OutDepth words of C int32: word r*NT + nt, lane j = out[r][nt*C + j]
// Input lanes past k and weight lanes past n are padding and may hold anything: the unit zeroes
// the matching weights (and does not read the weight rows past k), so they contribute nothing.
// Output lanes past n are don't-care.
//
// Schedule: the (k tile, n tile) pairs in order, n tiles outer, k tiles inner, back to back in
// slots of T = max(m, R, C) cycles. In slot cycle c the unit reads weight row c (c < R) of the
// tile into the PEs' shadow weights and activation row c (c < m) into the array; the first
// activation row carries the swap to the new weights through the array, so tile t+1's weights
// load while tile t streams, and tile t's drain overlaps tile t+1's stream:
//   StStream   KT*NT slots (the last one ends after its row m-1)
//   StDrain    R+C+2 cycles: memory read (1), activation register (1), skew + array +
//              de-skew (R+C-1), accumulator read-modify-write (1) of the last row
//   StFlush    2 cycles once at the end: requantiser pipeline empties into the output buffer
// busy cycles = (G*KT*NT - 1) * T + m + R + C + 4; see docs/cycle-model.md.
//
// Read-out: the accumulate stage adds the array output into the accumulator word of its row
// (the first k tile overwrites) and keeps its own tile position, since it runs R+C+2 cycles
// behind the memory reads. On the last k tile that sum also goes through C requantisers
// (psm_requant, 2 cycles: the column's bias is added to the int32 sum in 33 bits, then the
// product, one rounding and the saturation) into the output buffer. requant_en = 0 writes raw
// int32 sums (the requantiser runs with bias 0, mult = 1, shift = 0, out_bits = 32: the
// identity).
module psm_matmul #(
  parameter int unsigned ArrayRows = 2,    // R: k indices per tile
  parameter int unsigned ArrayCols = 4,    // C: output channels per tile
  parameter int unsigned InDepth   = 256,  // input memory words (address space): m * KT
  parameter int unsigned WgtDepth  = 256,  // weight memory words (address space): k * NT
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
  input  logic [1:0]                    digits_i,      // digit groups G, 1..3
  input  logic [5:0]                    out_bits_i,    // 2..32
  input  logic                          requant_en_i,  // 0: write raw int32 accumulators
  output logic                          busy_o,
  output logic                          done_o,        // one cycle, the last busy cycle
  // Input memory read port (int8 activations): rdata is the word read in the previous cycle
  output logic                          in_rd_o,
  output logic [InAddrWidth-1:0]        in_rd_addr_o,  // word (r * G + g) * KT + kt
  input  logic [ArrayRows*8-1:0]        in_rdata_i,
  // Weight memory read port (int8 W^T rows): rdata is the word read in the previous cycle
  output logic                          wgt_rd_o,
  output logic [WgtAddrWidth-1:0]       wgt_rd_addr_o, // word (g * k + kk) * NT + nt
  input  logic [ArrayCols*8-1:0]        wgt_rdata_i,
  // Per-column requant parameter write port: while idle, or in column order while busy, each
  // entry before the first row of its n tile is requantised (asserted below)
  input  logic                          rq_we_i,
  input  logic [RqAddrWidth-1:0]        rq_addr_i,     // output column
  input  logic [30:0]                   rq_mult_i,     // unsigned
  input  logic [5:0]                    rq_shift_i,    // 0..63
  input  logic signed [25:0]            rq_bias_i,     // added to the sum before the multiply
  // Output buffer read port: data valid the cycle after the address
  input  logic [OutAddrWidth-1:0]       out_addr_i,
  output logic [ArrayCols*32-1:0]       out_rdata_o,   // int32 lanes, sign-extended
  // The `saturated` counter: results clamped to out_bits, written to the buffer this cycle
  output logic [15:0]                   saturated_o,
  // Performance counters, cleared by start_i, held after done_o
  output logic [31:0]                   perf_busy_cycles_o,  // cycles with busy_o high
  output logic [31:0]                   perf_mac_cycles_o    // cycles an activation row enters
);
  localparam int unsigned RowBits = ArrayRows * 8;   // one input word
  localparam int unsigned WgtBits = ArrayCols * 8;   // one weight word (a PE row)
  localparam int unsigned ColBits = ArrayCols * 32;  // one accumulator / output word

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command registers                                                                        //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [DimWidth-1:0] m_q, k_q, n_q;
  logic [DimWidth-1:0] ktiles_q, ntiles_q;  // KT = ceil(k / R), NT = ceil(n / C)
  logic [DimWidth-1:0] gtiles_q;            // G * KT: k tiles per n tile
  logic [DimWidth-1:0] period_q;            // T = max(m, R, C): cycles per tile slot
  logic [5:0]          out_bits_q;
  logic                requant_en_q;

  logic start_cmd;  // a command is accepted (start_i while idle)

  // T >= C: a PE row's shadow weights are rewritten only after the previous tile's swap has
  // left the row's rightmost PE. T >= R: one weight row is read per cycle. T >= m: one
  // activation row per cycle.
  localparam int unsigned ArrayMax = (ArrayRows > ArrayCols) ? ArrayRows : ArrayCols;
  logic [DimWidth-1:0] cmd_period;
  assign cmd_period = (32'(m_i) > ArrayMax) ? m_i : DimWidth'(ArrayMax);

  always_ff @(posedge clk_i) begin  // configuration: no reset, loaded by a command
    if (start_cmd) begin
      m_q          <= m_i;
      k_q          <= k_i;
      n_q          <= n_i;
      ktiles_q     <= DimWidth'((32'(k_i) + ArrayRows - 1) / ArrayRows);
      gtiles_q     <= DimWidth'(32'(digits_i) * ((32'(k_i) + ArrayRows - 1) / ArrayRows));
      ntiles_q     <= DimWidth'((32'(n_i) + ArrayCols - 1) / ArrayCols);
      period_q     <= cmd_period;
      out_bits_q   <= out_bits_i;
      requant_en_q <= requant_en_i;
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control FSM                                                                              //
  //////////////////////////////////////////////////////////////////////////////////////////////

  typedef enum logic [1:0] {
    StIdle,     // wait for start_i
    StStream,   // tile slots: weight row and activation row slot_q of tile (kt_q, nt_q)
    StDrain,    // last tile: its last weight rows, then its last row into the accumulator
    StFlush     // wait until the requantiser pipeline has written the output buffer
  } mm_state_e;

  mm_state_e state_q, state_d;

  always_ff @(posedge clk_i) begin  // control: reset
    state_q <= rst_i ? StIdle : state_d;
  end

  logic [DimWidth-1:0] slot_q;       // cycle in the tile slot: weight row, activation row
  logic [DimWidth-1:0] kt_q, nt_q;   // tile being read from the memories (kt_q < G * KT)
  logic [DimWidth-1:0] ktin_q;       // its k tile within its digit group (< KT)
  logic [DimWidth-1:0] wbase_q;      // g * k: the group's first W^T row
  logic                last_kt, last_nt, last_tile, slot_end;
  logic                wgt_rd_en, in_rd_en, last_row_done;
  logic                rq_valid_q, rq_valid_q2;

  assign start_cmd = start_i && (state_q == StIdle);
  assign last_kt   = (kt_q == gtiles_q - 1'b1);
  assign last_nt   = (nt_q == ntiles_q - 1'b1);
  assign last_tile = last_kt && last_nt;
  assign slot_end  = (slot_q == period_q - 1'b1);
  // Weight row slot_q is loaded in every state that works on a tile (the last tile's weight
  // rows may outlast its activation rows when m < R); activation rows only while streaming.
  assign wgt_rd_en = (state_q == StStream || state_q == StDrain)
                     && (32'(slot_q) < ArrayRows);
  assign in_rd_en  = (state_q == StStream) && (slot_q < m_q);

  always_comb begin
    state_d = state_q;
    unique case (state_q)
      // Idle: the command is latched on start_i.
      StIdle: begin
        if (start_i) state_d = StStream;
      end
      // Stream: activation row slot_q; the last tile ends after its last row.
      StStream: begin
        if (last_tile && slot_q == m_q - 1'b1) state_d = StDrain;
      end
      // Drain: the array and the accumulate stage empty.
      StDrain: begin
        if (last_row_done) state_d = StFlush;
      end
      // Flush: stage 2 of the requantiser writes the last row in the cycle stage 1 is empty.
      StFlush: begin
        if (!rq_valid_q) state_d = StIdle;
      end
      default: state_d = StIdle;
    endcase
  end

  assign done_o = (state_q == StFlush) && !rq_valid_q;  // the cycle StFlush ends
  assign busy_o = (state_q != StIdle);

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_cmd) begin
      slot_q  <= '0;
      kt_q    <= '0;
      nt_q    <= '0;
      ktin_q  <= '0;
      wbase_q <= '0;
    end else if (state_q == StStream && slot_end && !last_tile) begin
      // Next slot: next k tile (of this digit group or the next), or the first k tile of the
      // next n tile.
      slot_q <= '0;
      kt_q   <= last_kt ? '0 : kt_q + 1'b1;
      if (last_kt) nt_q <= nt_q + 1'b1;
      if (last_kt) begin
        ktin_q  <= '0;
        wbase_q <= '0;
      end else if (ktin_q == ktiles_q - 1'b1) begin
        ktin_q  <= '0;
        wbase_q <= wbase_q + k_q;
      end else begin
        ktin_q <= ktin_q + 1'b1;
      end
    end else if (state_q == StStream || wgt_rd_en) begin
      // In the last tile slot_q runs on past m - 1 only until its weight rows are read (to R).
      slot_q <= slot_q + 1'b1;
    end
  end

  // First k index (within its digit group) and first output column of the current tile.
  logic [DimWidth-1:0] k_base, n_base;
  assign k_base = DimWidth'(ktin_q * ArrayRows);
  assign n_base = DimWidth'(nt_q * ArrayCols);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Weight preload: W^T word (k_base + row) * NT + nt -> PE row row's shadow, padding zeroed //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Row i of tile t is read in slot cycle i and written into the shadow registers one cycle
  // later; activation row 0 of the tile reaches PE (i, 0) in slot cycle i + 2 (memory read,
  // activation register), just after. The previous tile's swap left the row's rightmost PE in
  // slot cycle i + 1 + C - T <= i + 1 of this slot, so the shadow is free again (T >= C).
  logic [DimWidth-1:0]  wgt_kk;        // k index of the weight row
  logic                 wgt_kk_ok;     // wgt_kk < k (else the row is padding: zeros, no read)
  logic [ArrayCols-1:0] wgt_ok_q;      // lane j of the word read is a real weight
  logic [ArrayRows-1:0] wgt_load_q;    // one-hot PE row to load, one cycle after the read
  logic [WgtBits-1:0]   wgt_tile;      // masked weights for the PE row

  assign wgt_kk        = k_base + slot_q;
  assign wgt_kk_ok     = (wgt_kk < k_q);
  assign wgt_rd_o      = wgt_rd_en && wgt_kk_ok;
  assign wgt_rd_addr_o = WgtAddrWidth'((wbase_q + wgt_kk) * ntiles_q + nt_q);

  always_ff @(posedge clk_i) begin  // datapath: no reset
    for (int j = 0; j < ArrayCols; j++) begin
      // Lane j is output column nt*C + j; past n it is padding (garbage in the memory).
      wgt_ok_q[j] <= wgt_kk_ok && (32'(n_base) + 32'(j) < 32'(n_q));
    end
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i)          wgt_load_q <= '0;
    else if (wgt_rd_en) wgt_load_q <= ArrayRows'(1) << slot_q;
    else                wgt_load_q <= '0;
  end

  for (genvar j = 0; j < ArrayCols; j++) begin : g_n_mask
    assign wgt_tile[j*8+:8] = wgt_ok_q[j] ? wgt_rdata_i[j*8+:8] : 8'd0;
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Activation stream: input word row * KT + kt -> array (padding lanes meet zero weights)   //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Two register stages (memory read, then act_q2) so that a row read in the same slot cycle
  // as a weight row reaches the PEs after that row's shadow load.
  logic [RowBits-1:0] act_q2;
  logic               act_valid_q, act_valid_q2;  // in_rdata_i / act_q2 hold a row
  logic               act_swap_q, act_swap_q2;    // the row is its tile's first

  assign in_rd_o      = in_rd_en;
  assign in_rd_addr_o = InAddrWidth'(slot_q * gtiles_q + kt_q);

  always_ff @(posedge clk_i) begin  // datapath: no reset
    act_q2 <= in_rdata_i;
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      act_valid_q  <= 1'b0;
      act_valid_q2 <= 1'b0;
      act_swap_q   <= 1'b0;
      act_swap_q2  <= 1'b0;
    end else begin
      act_valid_q  <= in_rd_en;
      act_valid_q2 <= act_valid_q;
      act_swap_q   <= in_rd_en && (slot_q == '0);
      act_swap_q2  <= act_swap_q;
    end
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
    .act_valid_i(act_valid_q2),
    .act_swap_i (act_swap_q2),
    .act_i      (act_q2),
    .out_valid_o(arr_valid),
    .out_o      (arr_out)
  );

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Accumulate stage: acc[row] = (first k tile ? 0 : acc[row] (* 256 at a group)) + output  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The array delivers rows in the order they were read: m rows per tile, tiles in order. The
  // stage counts them to know the row, k tile and n tile of each output (it lags the reads).
  // Cycle A: the array output of row out_row_q is registered and its accumulator word read.
  // Cycle B: the sum is written back and, on the last k tile, enters the requantisers.
  // Row r of the next tile is read T >= 2 cycles after row r of this one, so its cycle A comes
  // after this one's cycle B (AccReadAfterWrite_A).
  logic [ColBits-1:0]  acc_mem [AccDepth];
  logic [DimWidth-1:0] out_row_q, out_kt_q, out_nt_q;  // position of the array output
  logic [DimWidth-1:0] out_ktin_q;                     // its k tile within its digit group
  logic                acc_valid_q;                    // cycle B holds a row
  logic [DimWidth-1:0] acc_row_q, acc_nt_q;
  logic                acc_first_q, acc_last_q;        // first / last k tile
  logic                acc_shift_q;                    // first k tile of a later digit group
  logic [ColBits-1:0]  psum_q, acc_rdata_q, acc_sum;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_cmd) begin
      out_row_q   <= '0;
      out_kt_q    <= '0;
      out_ktin_q  <= '0;
      out_nt_q    <= '0;
      acc_valid_q <= 1'b0;
    end else begin
      if (arr_valid) begin
        if (out_row_q == m_q - 1'b1) begin
          out_row_q <= '0;
          if (out_kt_q == gtiles_q - 1'b1) begin
            out_kt_q <= '0;
            out_nt_q <= out_nt_q + 1'b1;
          end else begin
            out_kt_q <= out_kt_q + 1'b1;
          end
          out_ktin_q <= (out_ktin_q == ktiles_q - 1'b1) ? '0 : out_ktin_q + 1'b1;
        end else begin
          out_row_q <= out_row_q + 1'b1;
        end
      end
      acc_valid_q <= arr_valid;
    end
  end

  // Cycle B's registers change only with an array output: every use is under acc_valid_q.
  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (arr_valid) begin
      acc_row_q   <= out_row_q;
      acc_nt_q    <= out_nt_q;
      acc_first_q <= (out_kt_q == '0);
      acc_shift_q <= (out_ktin_q == '0);
      acc_last_q  <= (out_kt_q == gtiles_q - 1'b1);
      psum_q      <= arr_out;
      acc_rdata_q <= acc_mem[AccAddrWidth'(out_row_q)];
    end
    if (acc_valid_q) acc_mem[AccAddrWidth'(acc_row_q)] <= acc_sum;
  end

  // The last tile's last row is written this cycle.
  assign last_row_done = acc_valid_q && acc_last_q && (acc_nt_q == ntiles_q - 1'b1)
                         && (acc_row_q == m_q - 1'b1);

  logic [DimWidth-1:0] acc_n_base;  // first output column of the accumulate stage's n tile
  assign acc_n_base = DimWidth'(acc_nt_q * ArrayCols);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Requantise the final sums (last k tile) into the output buffer                          //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // Requant parameters: one synchronous RAM per lane (block RAM on an FPGA), written by the
  // port while idle or, in column order, ahead of the rows that read them. Column c is lane
  // c % C, word c / C. Cycle A of a last-k-tile row reads the word of its n tile, so cycle B,
  // which requantises that row, has its C columns' parameters (other rows do not read:
  // rq_word_q matters only with acc_last_q and requant_en_q).
  localparam int unsigned RqLaneDepth     = (RqDepth + ArrayCols - 1) / ArrayCols;
  localparam int unsigned RqLaneAddrWidth = (RqLaneDepth > 1) ? $clog2(RqLaneDepth) : 1;
  localparam int unsigned RqWordBits      = 26 + 6 + 31;  // {bias, shift, mult}

  logic [RqLaneAddrWidth-1:0] rq_wr_word;
  logic [31:0]                rq_wr_lane;
  logic [RqWordBits-1:0]      rq_word_q [ArrayCols];  // cycle B: lane j's column parameters
  logic                       rq_rd;

  assign rq_rd = arr_valid && requant_en_q && (out_kt_q == gtiles_q - 1'b1);

  assign rq_wr_word = RqLaneAddrWidth'(32'(rq_addr_i) / ArrayCols);
  assign rq_wr_lane = 32'(rq_addr_i) % ArrayCols;

  for (genvar j = 0; j < ArrayCols; j++) begin : g_rq_lane
    logic [RqWordBits-1:0] rq_mem [RqLaneDepth];

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (rq_we_i && rq_wr_lane == j) rq_mem[rq_wr_word] <= {rq_bias_i, rq_shift_i, rq_mult_i};
      if (rq_rd) rq_word_q[j] <= rq_mem[RqLaneAddrWidth'(out_nt_q)];
    end
  end

  logic [ColBits-1:0]      rq_out;
  logic [ArrayCols-1:0]    rq_sat;  // per column: clamped to out_bits (never a padding column)
  logic [OutAddrWidth-1:0] out_addr_q, out_addr_q2;
  logic [ColBits-1:0]      out_mem [OutDepth];
  logic [ColBits-1:0]      out_rdata_q;

  // Cycle B of a last-k-tile row: the rows whose sums the requantisers take (rq_valid_q next).
  logic rq_in;
  assign rq_in = acc_valid_q && acc_last_q;

  for (genvar j = 0; j < ArrayCols; j++) begin : g_col
    logic signed [31:0] psum, acc_old, sum;
    logic [DimWidth-1:0] col;
    logic [30:0]         mult;
    logic [5:0]          shift, out_bits;
    logic signed [25:0]  bias;

    // int32 accumulator, wraps on overflow like the golden uint32 accumulation; a later digit
    // group's first k tile takes 256 * acc (Horner).
    assign psum    = psum_q[j*32+:32];
    assign acc_old = acc_rdata_q[j*32+:32];
    assign sum     = psum + (acc_first_q ? 32'sd0 : acc_shift_q ? (acc_old <<< 8) : acc_old);
    assign acc_sum[j*32+:32] = sum;

    assign col = acc_n_base + DimWidth'(j);
    always_comb begin
      mult     = 31'd1;  // raw int32: 1 * x, no shift, 32-bit saturation = identity
      shift    = 6'd0;
      bias     = 26'sd0;
      out_bits = 6'd32;
      if (requant_en_q) begin
        out_bits = out_bits_q;
        if (col < n_q) begin
          mult  = rq_word_q[j][30:0];
          shift = rq_word_q[j][36:31];
          bias  = $signed(rq_word_q[j][62:37]);
        end else begin
          mult  = 31'd0;  // padding column: writes 0
        end
      end
    end

    psm_requant u_requant (
      .clk_i,
      .en_i      (rq_in),  // a requantiser toggles only for a row it requantises
      .x_i       (sum),
      .bias_i    (bias),
      .mult_i    (mult),
      .shift_i   (shift),
      .out_bits_i(out_bits),
      .y_o       (rq_out[j*32+:32]),
      .sat_o     (rq_sat[j])
    );
  end

  always_ff @(posedge clk_i) begin  // control: reset
    rq_valid_q  <= !rst_i && rq_in;
    rq_valid_q2 <= !rst_i && rq_valid_q;
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    out_addr_q  <= OutAddrWidth'(acc_row_q * ntiles_q + acc_nt_q);
    out_addr_q2 <= out_addr_q;
    if (rq_valid_q2) out_mem[out_addr_q2] <= rq_out;
    out_rdata_q <= out_mem[out_addr_i];
  end

  assign out_rdata_o = out_rdata_q;

  always_comb begin
    saturated_o = '0;
    if (rq_valid_q2) begin
      for (int j = 0; j < ArrayCols; j++) saturated_o += 16'(rq_sat[j]);
    end
  end

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
      if (act_valid_q2) perf_mac_q <= perf_mac_q + 1'b1;
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
                  && 32'(n_i) <= RqDepth && digits_i != '0
                  && 32'(m_i) * 32'(digits_i) * ((32'(k_i) + ArrayRows - 1) / ArrayRows)
                     <= InDepth
                  && 32'(digits_i) * 32'(k_i) * ((32'(n_i) + ArrayCols - 1) / ArrayCols)
                     <= WgtDepth
                  && 32'(m_i) * ((32'(n_i) + ArrayCols - 1) / ArrayCols) <= OutDepth);
  CmdOutBits_A: assert property (@(posedge clk_i) disable iff (rst_i)
      start_i && requant_en_i |-> out_bits_i >= 6'd2 && out_bits_i <= 6'd32);
  AccReadAfterWrite_A: assert property (@(posedge clk_i) disable iff (rst_i)
      acc_valid_q && arr_valid |-> acc_row_q != out_row_q);
  // Requant entries are written while idle, or while busy in column order (the matmul stage's
  // copy-in under the run), each before the first row that reads its n tile.
  logic        rq_pre_q;   // entries written while idle: every later read may use them
  logic [31:0] rq_cnt_q;   // entries written in order since the start
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      rq_pre_q <= 1'b0;
      rq_cnt_q <= '0;
    end else begin
      if (!busy_o && rq_we_i) rq_pre_q <= 1'b1;
      if (start_cmd) begin
        rq_cnt_q <= '0;
      end else if (busy_o && rq_we_i) begin
        rq_cnt_q <= rq_cnt_q + 1;
        rq_pre_q <= 1'b0;
      end
    end
  end
  WriteInOrder_A: assert property (@(posedge clk_i) disable iff (rst_i)
      busy_o && rq_we_i |-> 32'(rq_addr_i) == rq_cnt_q);
  WriteBeforeRead_A: assert property (@(posedge clk_i) disable iff (rst_i)
      rq_rd && !rq_pre_q |-> rq_cnt_q >= ((32'(out_nt_q) + 1) * ArrayCols < 32'(n_q)
                                          ? (32'(out_nt_q) + 1) * ArrayCols : 32'(n_q)));
  // Past RqDepth a write would wrap onto a real column's word in its lane RAM.
  RqAddrInRange_A: assert property (@(posedge clk_i) disable iff (rst_i)
      rq_we_i |-> 32'(rq_addr_i) < RqDepth);
`endif

endmodule : psm_matmul
