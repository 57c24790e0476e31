// SPDX-License-Identifier: Apache-2.0
// Beat walk of psm_dma: the 8-byte DRAM beats of every row of a DMA instruction, in order, and
// which bytes of each beat belong to its row. Row r covers bytes [addr + r * stride, + row_bytes)
// at any byte alignment. psm_dma walks its requests with one and its load responses with another.
// Golden model: none (addressing only; passim::CpuDevice::dma() checks every byte moved).
module psm_dma_beat_walk (
  input  logic        clk_i,
  input  logic        rst_i,            // synchronous, active high
  // An instruction: the first row, sampled with start_i
  input  logic        start_i,
  input  logic [31:0] start_addr_i,     // byte address of row 0
  input  logic [19:0] start_bytes_i,    // bytes per row
  // The rows after it (the instruction's latched fields)
  input  logic [31:0] stride_i,         // bytes from one row to the next
  input  logic [19:0] row_bytes_i,      // bytes per row
  input  logic        adv_i,            // the beat is done: on to the next
  output logic [28:0] beat_o,           // DRAM byte address >> 3 of the beat
  output logic        first_o,          // the beat is its row's first
  output logic        last_o,           // the beat is its row's last
  output logic [2:0]  lo_o,             // bytes lo_o .. hi_o of the beat are the row's
  output logic [2:0]  hi_o
);
  logic [31:0] row_addr_q;  // byte address of the row
  logic [28:0] beat_q;
  logic [28:0] last_q;      // last beat of the row
  logic        first_q;

  // A row's first and last beats: the byte address of its start and of its last byte, >> 3
  // (evaluated only when a row starts).
  function automatic logic [57:0] row_beats(input logic [31:0] addr, input logic [19:0] bytes);
    row_beats = {addr[31:3], 29'((addr + 32'(bytes) - 32'd1) >> 3)};
  endfunction

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i)        first_q <= 1'b0;
    else if (start_i) first_q <= 1'b1;
    else if (adv_i)   first_q <= last_o;
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (start_i) begin
      row_addr_q       <= start_addr_i;
      {beat_q, last_q} <= row_beats(start_addr_i, start_bytes_i);
    end else if (adv_i && last_o) begin
      row_addr_q       <= row_addr_q + stride_i;
      {beat_q, last_q} <= row_beats(row_addr_q + stride_i, row_bytes_i);
    end else if (adv_i) begin
      beat_q <= beat_q + 29'd1;
    end
  end

  logic [2:0] row_end;  // low bits of the row's last byte address
  assign row_end = row_addr_q[2:0] + row_bytes_i[2:0] - 3'd1;

  assign beat_o  = beat_q;
  assign first_o = first_q;
  assign last_o  = (beat_q == last_q);
  assign lo_o    = first_q ? row_addr_q[2:0] : 3'd0;
  assign hi_o    = last_o ? row_end : 3'd7;
endmodule : psm_dma_beat_walk
