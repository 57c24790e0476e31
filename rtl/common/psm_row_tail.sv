// SPDX-License-Identifier: Apache-2.0
// Row tail of psm_row_walk: the lanes of the current vector-scratchpad word (or step of words)
// that belong to the row, and the elements left after it. A row of `left_i` remaining elements
// covers lane l of the current word when l < left_i; the tail word may be partial.
// Golden model: none (addressing only; the units' golden twins check every element).
//
// Combinational. Evaluated only while en_i (the unit runs): an idle unit's simulator cost is
// one test. Outputs are 0 while en_i is low.
module psm_row_tail #(
  parameter int unsigned Lanes    = 2,
  parameter int unsigned LenWidth = 16  // bits of a row length
) (
  input  logic                en_i,
  input  logic [LenWidth-1:0] left_i,        // elements of the row not yet walked
  output logic [Lanes-1:0]    mask_o,        // lanes of this word inside the row
  output logic [LenWidth-1:0] left_after_o   // left_i after this word (0 at the row's end)
);
  always_comb begin
    mask_o       = '0;
    left_after_o = '0;
    if (en_i) begin
      for (int l = 0; l < Lanes; l++) mask_o[l] = (LenWidth'(l) < left_i);
      left_after_o = (left_i > LenWidth'(Lanes)) ? left_i - LenWidth'(Lanes) : '0;
    end
  end
endmodule : psm_row_tail
