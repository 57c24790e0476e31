// SPDX-License-Identifier: Apache-2.0
// DMA engine: DMA_LOAD / DMA_STORE (docs/isa.md) between DRAM, reached through ONE memory
// port of 64-bit beats, and the input, weight, vector and param memories.
// Golden model: passim::CpuDevice::dma() in runtime/src/device/cpu_device.cpp.
//
// Row r of an instruction covers DRAM bytes [dram_addr + r * dram_stride, + row_len << elem_size)
// at any byte alignment, and scratchpad words spad_addr + r * W .. + W - 1 with
// W = ceil(row_len / E) (E elements per word of the target memory). Rows are contiguous in the
// scratchpad, so the scratchpad address simply counts up.
//
// Both directions stream bytes through one byte buffer (BufBytes = largest word + one beat):
//   load:  read beats -> response FIFO -> keep the row's bytes of each beat -> buffer ->
//          one word per cycle: elements sign-extended to the memory's element width, lanes
//          past the end of the row zero (the zero tail) -> scratchpad write
//   store: scratchpad read (one word per cycle) -> low 2^elem_size bytes of each element ->
//          buffer -> one beat per cycle with byte strobes for the row's bytes -> DRAM write
//   store with `requant` (vector memory only): first read param entry 0 (its mult and shift;
//          StPrmRead, StPrmWait), then each word read goes through one psm_requant per lane
//          (2 cycles, saturating to 8 << elem_size bits) before its low bytes enter the buffer
// The memory port is pipelined: up to RspDepth requests may be outstanding, and responses
// (read data or write acknowledgements) come back in request order.
//
// Throughput: one beat (8 bytes) or one scratchpad word per cycle, whichever is smaller.
// An error response stops issuing, waits for the outstanding responses and ends the
// instruction with err_o; abort_i does the same without an error.
module psm_dma #(
  parameter int unsigned ArrayRows = 2,
  parameter int unsigned ArrayCols = 4,
  parameter int unsigned Lanes     = 2,
  parameter int unsigned RspDepth  = 8,   // outstanding memory requests (power of two)
  // Derived: the widest scratchpad word, in bits and in DRAM bytes (4 bytes per vector lane)
  localparam int unsigned SpadWidth    = psm_dma_max4(ArrayRows * 8, ArrayCols * 8, Lanes * 32, 64),
  localparam int unsigned WordBytesMax = psm_dma_max4(ArrayRows, ArrayCols, Lanes * 4, 8)
) (
  input  logic                          clk_i,
  input  logic                          rst_i,           // synchronous, active high
  // Command: one-cycle start_i with the instruction (DMA_LOAD or DMA_STORE, checked)
  input  logic                          start_i,
  input  logic [psm_pkg::INSTR_WIDTH-1:0] instr_i,
  input  logic                          abort_i,         // stop after the outstanding responses
  output logic                          busy_o,
  output logic                          done_o,          // one cycle, after the last response
  output logic                          pass_o,          // a row starts (its first request)
  output logic                          err_o,           // one cycle: a response had an error
  output logic                          stall_o,         // waiting for the memory port only
  output logic [15:0]                   saturated_o,     // requant store: lanes clamped, this
                                                         // cycle (the `saturated` counter)
  // Memory port (DRAM), byte addresses of 8-byte beats
  output logic                          mem_req_valid_o,
  input  logic                          mem_req_ready_i,
  output logic                          mem_req_we_o,
  output logic [31:0]                   mem_req_addr_o,  // 8-byte aligned
  output logic [63:0]                   mem_req_wdata_o,
  output logic [7:0]                    mem_req_wstrb_o,
  input  logic                          mem_rsp_valid_i,
  input  logic [63:0]                   mem_rsp_rdata_i,
  input  logic                          mem_rsp_err_i,
  // Scratchpad port to the memory selected by spad_mem_o (a psm_pkg::mem_e value)
  output logic [2:0]                    spad_mem_o,
  output logic                          spad_req_o,
  output logic                          spad_we_o,
  output logic [15:0]                   spad_addr_o,
  output logic [SpadWidth-1:0]          spad_wdata_o,    // full words: no write mask
  input  logic                          spad_gnt_i,
  input  logic [SpadWidth-1:0]          spad_rdata_i     // the cycle after a granted read
);
  localparam int unsigned BufBytes = WordBytesMax + 8;
  localparam int unsigned BufBits  = BufBytes * 8;
  localparam int unsigned CntWidth = $clog2(BufBytes + 1);
  localparam int unsigned OsWidth  = $clog2(RspDepth + 1);
  localparam int unsigned PtrWidth = (RspDepth > 1) ? $clog2(RspDepth) : 1;
  localparam int unsigned AppBits  = WordBytesMax * 8;

  function automatic int unsigned psm_dma_max4(input int unsigned a, input int unsigned b,
                                               input int unsigned c, input int unsigned d);
    int unsigned m;
    m = a;
    if (b > m) m = b;
    if (c > m) m = c;
    if (d > m) m = d;
    psm_dma_max4 = m;
  endfunction

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  psm_pkg::dma_load_instr_t cmd;  // DMA_LOAD and DMA_STORE share one layout
  assign cmd = instr_i;  // no type cast: Yosys 0.23 rejects casts to package types

  logic start_requant;  // a DMA_STORE with `requant` (bit 26, reserved in DMA_LOAD)
  assign start_requant = (cmd.opcode == psm_pkg::OpDmaStore)
                         && instr_i[psm_pkg::DMA_STORE_REQUANT_LSB];

  logic        load_q;       // 1: DRAM -> scratchpad
  logic        requant_q;    // DMA_STORE requant: requantise each element with param entry 0
  logic [2:0]  mem_q;
  logic [1:0]  esize_q;      // log2 bytes per DRAM element
  logic [15:0] rows_q, row_len_q;
  logic [31:0] stride_q;
  logic [7:0]  elems_q;      // E: elements per scratchpad word
  logic [19:0] row_bytes_q;  // row_len << esize
  logic [8:0]  word_bytes_q; // E << esize

  logic [7:0]  start_elems;
  logic [19:0] start_row_bytes;
  always_comb begin
    unique case (cmd.mem)
      psm_pkg::MemInput:  start_elems = 8'(ArrayRows);
      psm_pkg::MemWeight: start_elems = 8'(ArrayCols);
      psm_pkg::MemVector: start_elems = 8'(Lanes);
      default:            start_elems = 8'd1;
    endcase
  end
  assign start_row_bytes = 20'(cmd.row_len) << cmd.elem_size;

  always_ff @(posedge clk_i) begin  // configuration: no reset, loaded by start_i
    if (start_i) begin
      load_q       <= (cmd.opcode == psm_pkg::OpDmaLoad);
      requant_q    <= start_requant;
      mem_q        <= cmd.mem;
      esize_q      <= cmd.elem_size;
      rows_q       <= cmd.rows;
      row_len_q    <= cmd.row_len;
      stride_q     <= 32'(cmd.dram_stride);
      elems_q      <= start_elems;
      row_bytes_q  <= start_row_bytes;
      word_bytes_q <= 9'(start_elems) << cmd.elem_size;
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // State                                                                                   //
  //////////////////////////////////////////////////////////////////////////////////////////////

  typedef enum logic [2:0] {
    StIdle,     // wait for start_i
    StPrmRead,  // requant store: read param entry 0 (until granted)
    StPrmWait,  // requant store: its data arrives; keep the param memory selected
    StRun,      // move the rows
    StStop      // error or abort: wait for the outstanding responses, then drop the rest
  } dma_state_e;

  dma_state_e state_q, state_d;

  always_ff @(posedge clk_i) begin  // control: reset
    state_q <= rst_i ? StIdle : state_d;
  end

  logic [OsWidth-1:0]  os_q;       // requests without a response yet
  logic [OsWidth-1:0]  fifo_cnt_q; // read beats waiting in the response FIFO
  logic                req_fire, rsp_fire;
  logic                finished;   // the instruction's work is complete

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Beat walker: the sequence of 8-byte beats of every row (requests, and load responses)   //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // One walk for the requests and one for the load responses; bytes [lo, hi] of a beat belong
  // to its row.
  logic [28:0] rq_beat, cs_beat;    // DRAM address >> 3
  logic        rq_first, cs_first;  // the beat is its row's first
  logic        rq_last, cs_last;    // ... its row's last
  logic [2:0]  rq_lo, rq_hi, cs_lo, cs_hi;
  logic        rq_adv, cs_adv;      // one beat done this cycle
  logic [15:0] rq_row_q;            // row of the next request
  logic        rq_done_q;           // every beat has been requested

  psm_dma_beat_walk u_rq_walk (
    .clk_i, .rst_i, .start_i, .start_addr_i(cmd.dram_addr), .start_bytes_i(start_row_bytes),
    .stride_i(stride_q), .row_bytes_i(row_bytes_q), .adv_i(rq_adv), .beat_o(rq_beat),
    .first_o(rq_first), .last_o(rq_last), .lo_o(rq_lo), .hi_o(rq_hi)
  );
  psm_dma_beat_walk u_cs_walk (
    .clk_i, .rst_i, .start_i, .start_addr_i(cmd.dram_addr), .start_bytes_i(start_row_bytes),
    .stride_i(stride_q), .row_bytes_i(row_bytes_q), .adv_i(cs_adv), .beat_o(cs_beat),
    .first_o(cs_first), .last_o(cs_last), .lo_o(cs_lo), .hi_o(cs_hi)
  );

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_i) begin
      rq_row_q  <= '0;
      rq_done_q <= rst_i;
    end else if (rq_adv && rq_last) begin
      rq_row_q  <= rq_row_q + 16'd1;
      rq_done_q <= (rq_row_q == rows_q - 16'd1);
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Byte buffer                                                                             //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [BufBits-1:0]  buf_q;
  logic [CntWidth-1:0] cnt_q;       // valid bytes at the bottom of buf_q; the rest is zero
  logic [CntWidth-1:0] pop_n, app_n;
  logic [AppBits-1:0]  app_data;    // app_n bytes, zero above

  // The low n bytes of a vector (n may exceed the width: then all of it).
  function automatic logic [AppBits-1:0] low_bytes(input logic [AppBits-1:0] v,
                                                   input logic [CntWidth-1:0] n);
    logic [AppBits-1:0] mask;
    mask = '1;
    if (32'(n) < WordBytesMax) mask = ~({AppBits{1'b1}} << (32'(n) * 8));
    low_bytes = v & mask;
  endfunction

  always_ff @(posedge clk_i) begin
    if (rst_i || start_i) begin  // control: the count resets, the data is masked by it
      cnt_q <= '0;
      buf_q <= '0;
    end else if (state_q == StStop) begin
      cnt_q <= '0;
      buf_q <= '0;
    end else if (pop_n != '0 || app_n != '0) begin  // otherwise both are unchanged
      cnt_q <= cnt_q - pop_n + app_n;
      buf_q <= (buf_q >> (32'(pop_n) * 8))
               | (BufBits'(app_data) << ((32'(cnt_q) - 32'(pop_n)) * 8));
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Load: response FIFO -> buffer -> scratchpad words                                        //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [63:0]         fifo_q [RspDepth];
  logic [PtrWidth-1:0] fifo_wr_q, fifo_rd_q;
  logic                fifo_push, fifo_pop;
  logic [63:0]         fifo_head;

  assign fifo_push = rsp_fire && load_q && state_q == StRun;
  assign fifo_head = fifo_q[fifo_rd_q];

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (fifo_push) fifo_q[fifo_wr_q] <= mem_rsp_rdata_i;
  end

  // Consume one beat when the buffer has room for a whole beat.
  logic [3:0] cs_n;
  assign cs_n     = 4'(cs_hi) - 4'(cs_lo) + 4'd1;
  assign fifo_pop = state_q == StRun && load_q && fifo_cnt_q != '0
                    && 32'(cnt_q) + 8 <= BufBytes;
  assign cs_adv   = fifo_pop;

  // Packer: one word of the current row when its bytes are in the buffer.
  logic [15:0] pk_row_q;       // rows fully written
  logic [19:0] pk_left_q;      // bytes of the current row not yet written
  logic [15:0] spad_addr_q;    // next scratchpad word
  logic        pk_done;
  logic [19:0] pk_bytes;       // bytes of this word: min(word_bytes, pk_left)
  logic        pk_req;
  logic [8:0]  pk_elems;       // elements in this word

  assign pk_done  = (pk_row_q == rows_q);
  assign pk_bytes = (20'(word_bytes_q) < pk_left_q) ? 20'(word_bytes_q) : pk_left_q;
  assign pk_elems = 9'(pk_bytes >> esize_q);
  assign pk_req   = state_q == StRun && load_q && !pk_done && 20'(cnt_q) >= pk_bytes;

  // Build the word: element e from bytes [e << esize, +2^esize), sign-extended.
  logic [SpadWidth-1:0] pk_word;
  always_comb begin  // only a load's write request carries it (0 otherwise)
    pk_word = '0;
    if (pk_req) unique case (mem_q)
      psm_pkg::MemInput: begin
        for (int e = 0; e < ArrayRows; e++) begin
          if (9'(e) < pk_elems) pk_word[e*8 +: 8] = buf_q[e*8 +: 8];
        end
      end
      psm_pkg::MemWeight: begin
        for (int e = 0; e < ArrayCols; e++) begin
          if (9'(e) < pk_elems) pk_word[e*8 +: 8] = buf_q[e*8 +: 8];
        end
      end
      psm_pkg::MemVector: begin
        for (int e = 0; e < Lanes; e++) begin
          if (9'(e) < pk_elems) begin
            unique case (esize_q)
              2'd0:    pk_word[e*32 +: 32] = 32'($signed(buf_q[e*8 +: 8]));
              2'd1:    pk_word[e*32 +: 32] = 32'($signed(buf_q[e*16 +: 16]));
              default: pk_word[e*32 +: 32] = buf_q[e*32 +: 32];
            endcase
          end
        end
      end
      default: pk_word[63:0] = buf_q[63:0];  // param: one 64-bit element
    endcase
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      pk_row_q    <= '0;
      pk_left_q   <= '0;
      spad_addr_q <= '0;
    end else if (start_i) begin
      pk_row_q    <= '0;
      pk_left_q   <= start_row_bytes;
      spad_addr_q <= cmd.spad_addr;
    end else if (spad_req_o && spad_gnt_i && (state_q == StRun)) begin
      spad_addr_q <= spad_addr_q + 16'd1;
      if (load_q) begin
        if (pk_left_q == pk_bytes) begin
          pk_row_q  <= pk_row_q + 16'd1;
          pk_left_q <= row_bytes_q;
        end else begin
          pk_left_q <= pk_left_q - pk_bytes;
        end
      end
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Store: scratchpad words -> buffer -> beats                                               //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [15:0] rd_row_q;       // rows fully read
  logic [15:0] rd_left_q;      // elements of the current row not yet read
  logic        rd_done;
  logic [15:0] rd_elems;       // elements of this word: min(E, rd_left)
  logic        rd_row_end;     // this word ends its row
  logic [8:0]  rd_bytes;
  logic        rd_req;
  logic        rd_valid_q;     // a granted read's word is on spad_rdata_i
  logic [8:0]  rd_bytes_q;

  assign rd_done    = (rd_row_q == rows_q);
  assign rd_elems   = (16'(elems_q) < rd_left_q) ? 16'(elems_q) : rd_left_q;
  assign rd_bytes   = 9'(rd_elems) << esize_q;
  assign rd_row_end = (rd_left_q == rd_elems);
  // Room in the buffer for every word in flight (read, or in the requantisers) and this one.
  logic [31:0] rd_inflight;
  assign rd_inflight = (rd_valid_q ? 32'(rd_bytes_q) : 32'd0)
                       + (rqv1_q ? 32'(rqb1_q) : 32'd0) + (rqv2_q ? 32'(rqb2_q) : 32'd0);
  assign rd_req     = state_q == StRun && !load_q && !rd_done
                      && 32'(cnt_q) + rd_inflight + 32'(word_bytes_q) <= BufBytes;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      rd_row_q   <= '0;
      rd_left_q  <= '0;
      rd_valid_q <= 1'b0;
      rd_bytes_q <= '0;
    end else if (start_i) begin
      rd_row_q   <= '0;
      rd_left_q  <= cmd.row_len;
      rd_valid_q <= 1'b0;
    end else begin
      rd_valid_q <= rd_req && spad_gnt_i;
      rd_bytes_q <= rd_bytes;
      if (rd_req && spad_gnt_i) begin
        rd_row_q  <= rd_row_q + 16'(rd_row_end);
        rd_left_q <= rd_row_end ? row_len_q : rd_left_q - rd_elems;
      end
    end
  end

  // The low 2^esize bytes of each 32-bit lane of a vector-memory word, packed.
  function automatic logic [AppBits-1:0] lane_bytes(input logic [Lanes*32-1:0] word,
                                                    input logic [1:0] esize);
    lane_bytes = '0;
    for (int e = 0; e < Lanes; e++) begin
      unique case (esize)
        2'd0:    lane_bytes[e*8 +: 8]   = word[e*32 +: 8];
        2'd1:    lane_bytes[e*16 +: 16] = word[e*32 +: 16];
        default: lane_bytes[e*32 +: 32] = word[e*32 +: 32];
      endcase
    end
  endfunction

  // The low 2^esize bytes of each element of the word read, packed.
  logic [AppBits-1:0] st_bytes;
  always_comb begin  // only used when a store's read word arrives (0 otherwise)
    st_bytes = '0;
    if (!load_q && !requant_q && rd_valid_q) unique case (mem_q)
      psm_pkg::MemInput: begin
        for (int e = 0; e < ArrayRows; e++) st_bytes[e*8 +: 8] = spad_rdata_i[e*8 +: 8];
      end
      psm_pkg::MemWeight: begin
        for (int e = 0; e < ArrayCols; e++) st_bytes[e*8 +: 8] = spad_rdata_i[e*8 +: 8];
      end
      psm_pkg::MemVector: st_bytes = lane_bytes(spad_rdata_i[Lanes*32-1:0], esize_q);
      default: st_bytes[63:0] = spad_rdata_i[63:0];
    endcase
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Store with requant: param entry 0, then one psm_requant per lane                         //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic        prm_phase;        // StPrmRead or StPrmWait: the port reads the param memory
  logic [30:0] st_rq_mult_q;     // param entry 0: mult [30:0], shift [37:32]; the bias bits
  logic [5:0]  st_rq_shift_q;    // [63:38] are ignored (only the matmul adds a bias)
  logic        rqv1_q, rqv2_q;   // a word is in requantiser stage 1 / on the outputs
  logic [8:0]  rqb1_q, rqb2_q;   // its bytes (as rd_bytes_q)
  logic [5:0]  st_out_bits;      // 8 << elem_size
  logic [Lanes*32-1:0] st_rq_y;  // the requantised lanes, sign-extended
  logic [Lanes-1:0]    st_rq_sat;  // ... clamped to st_out_bits

  assign prm_phase   = (state_q == StPrmRead) || (state_q == StPrmWait);
  assign st_out_bits = 6'd8 << esize_q;

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (state_q == StPrmWait) begin
      st_rq_mult_q  <= spad_rdata_i[30:0];
      st_rq_shift_q <= spad_rdata_i[37:32];
    end
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i || start_i || state_q == StStop) begin
      rqv1_q <= 1'b0;
      rqv2_q <= 1'b0;
      rqb1_q <= '0;
      rqb2_q <= '0;
    end else begin
      rqv1_q <= requant_q && rd_valid_q;
      rqv2_q <= rqv1_q;
      rqb1_q <= rd_bytes_q;
      rqb2_q <= rqb1_q;
    end
  end

  for (genvar e = 0; e < Lanes; e++) begin : g_st_rq
    psm_requant u_requant (
      .clk_i,
      .en_i      (requant_q && rd_valid_q),  // a word read for a requant store
      .x_i       (spad_rdata_i[e*32 +: 32]),
      .bias_i    (26'sd0),
      .mult_i    (st_rq_mult_q),
      .shift_i   (st_rq_shift_q),
      .out_bits_i(st_out_bits),
      .y_o       (st_rq_y[e*32 +: 32]),
      .sat_o     (st_rq_sat[e])
    );
  end

  // Clamped elements of the word leaving the requantisers: its first rqb2_q >> esize lanes.
  always_comb begin
    saturated_o = '0;
    if (rqv2_q) begin
      for (int e = 0; e < Lanes; e++) begin
        if (32'(e) < (32'(rqb2_q) >> esize_q)) saturated_o += 16'(st_rq_sat[e]);
      end
    end
  end

  // The low 2^esize bytes of each requantised element (saturated, so they are its value).
  logic [AppBits-1:0] rq_bytes;
  always_comb begin  // only used when a requantised word leaves the pipeline (0 otherwise)
    rq_bytes = '0;
    if (rqv2_q) rq_bytes = lane_bytes(st_rq_y, esize_q);
  end

  // Beat writer: the next beat needs rq_n bytes of the buffer.
  logic [3:0] rq_n;
  assign rq_n = 4'(rq_hi) - 4'(rq_lo) + 4'd1;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Buffer traffic and the scratchpad port                                                  //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [63:0] head_bytes;  // the row's bytes of the head beat, moved to the bottom
  assign head_bytes = fifo_head >> (32'(cs_lo) * 8);

  always_comb begin
    pop_n    = '0;
    app_n    = '0;
    app_data = '0;
    if (load_q) begin
      if (pk_req && spad_gnt_i) pop_n = CntWidth'(pk_bytes);
      if (fifo_pop) begin
        app_n    = CntWidth'(cs_n);
        app_data = low_bytes(AppBits'(head_bytes), CntWidth'(cs_n));
      end
    end else begin
      if (req_fire) pop_n = CntWidth'(rq_n);
      if (requant_q) begin
        if (rqv2_q) begin
          app_n    = CntWidth'(rqb2_q);
          app_data = low_bytes(rq_bytes, CntWidth'(rqb2_q));
        end
      end else if (rd_valid_q) begin
        app_n    = CntWidth'(rd_bytes_q);
        app_data = low_bytes(st_bytes, CntWidth'(rd_bytes_q));
      end
    end
  end

  assign spad_mem_o   = prm_phase ? 3'(psm_pkg::MemParam) : mem_q;
  assign spad_req_o   = (state_q == StPrmRead) || (load_q ? pk_req : rd_req);
  assign spad_we_o    = load_q;
  assign spad_addr_o  = prm_phase ? 16'd0 : spad_addr_q;
  assign spad_wdata_o = pk_word;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Memory port                                                                             //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [63:0] beat_bytes;
  assign beat_bytes = buf_q[63:0] << (32'(rq_lo) * 8);

  always_comb begin
    mem_req_valid_o = 1'b0;
    if (state_q == StRun && !rq_done_q) begin
      if (load_q) mem_req_valid_o = (32'(os_q) + 32'(fifo_cnt_q)) < RspDepth;
      else        mem_req_valid_o = (32'(os_q) < RspDepth) && (cnt_q >= CntWidth'(rq_n));
    end
  end
  assign mem_req_we_o    = !load_q;
  assign mem_req_addr_o  = {rq_beat, 3'b000};
  assign mem_req_wdata_o = beat_bytes;
  assign mem_req_wstrb_o = 8'((9'(1) << rq_n) - 9'd1) << rq_lo;

  assign req_fire = mem_req_valid_o && mem_req_ready_i;
  assign rsp_fire = mem_rsp_valid_i;
  assign rq_adv   = req_fire;
  assign pass_o   = req_fire && rq_first;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      fifo_cnt_q <= '0;
      fifo_wr_q  <= '0;
      fifo_rd_q  <= '0;
    end else begin
      if (state_q == StStop) begin
        fifo_cnt_q <= '0;
        fifo_rd_q  <= fifo_wr_q;
      end else begin
        fifo_cnt_q <= fifo_cnt_q + OsWidth'(fifo_push) - OsWidth'(fifo_pop);
        if (fifo_push) fifo_wr_q <= fifo_wr_q + PtrWidth'(1);
        if (fifo_pop)  fifo_rd_q <= fifo_rd_q + PtrWidth'(1);
      end
    end
  end

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) os_q <= '0;
    else       os_q <= os_q + OsWidth'(req_fire) - OsWidth'(rsp_fire);
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic err_seen;  // an error response arrives this cycle
  assign err_seen = rsp_fire && mem_rsp_err_i;
  assign finished = load_q ? pk_done : (rq_done_q && os_q == '0);

  always_comb begin
    state_d = state_q;
    done_o  = 1'b0;
    unique case (state_q)
      // Wait for an instruction; a requant store reads its step first.
      StIdle: begin
        if (start_i) begin
          state_d = start_requant ? StPrmRead : StRun;
        end
      end
      // Read param entry 0.
      StPrmRead: begin
        if (abort_i)         state_d = StStop;
        else if (spad_gnt_i) state_d = StPrmWait;
      end
      // Its data is on spad_rdata_i (captured at this edge).
      StPrmWait: state_d = abort_i ? StStop : StRun;
      // Move bytes; an error response or an abort stops the instruction.
      StRun: begin
        if (err_seen || abort_i) begin
          state_d = StStop;
        end else if (finished) begin
          state_d = StIdle;
          done_o  = 1'b1;
        end
      end
      // Drain: every outstanding request still gets its response.
      StStop: begin
        if (os_q == OsWidth'(rsp_fire)) begin
          state_d = StIdle;
          done_o  = 1'b1;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  assign busy_o  = (state_q != StIdle);
  assign err_o   = err_seen && (state_q == StRun);
  // Waiting for the memory port: nothing moved on the port or in the scratchpad this cycle,
  // and a request is refused or responses are still owed.
  assign stall_o = busy_o && !req_fire && !rsp_fire && !(spad_req_o && spad_gnt_i)
                   && (mem_req_valid_o || os_q != '0);

  // Header fields are the controller's; a response needs only the bytes of its beat.
  logic unused_bits;
  assign unused_bits = ^{cmd.rsvd_31_26, cmd.rsvd_23_23, cmd.op_class, cmd.layer, cs_beat,
                         cs_first, cs_last};

`ifndef SYNTHESIS
  NoResponseWithoutRequest_A: assert property (@(posedge clk_i) disable iff (rst_i)
      rsp_fire |-> os_q != '0);
  StartWhenIdle_A: assert property (@(posedge clk_i) disable iff (rst_i)
      start_i |-> state_q == StIdle);
  FifoNoOverflow_A: assert property (@(posedge clk_i) disable iff (rst_i)
      fifo_push |-> 32'(fifo_cnt_q) < RspDepth);
`endif
endmodule : psm_dma
