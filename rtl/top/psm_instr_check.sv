// SPDX-License-Identifier: Apache-2.0
// Decodes one instruction: which unit runs it, and whether its operands are legal
// (docs/isa.md "STATUS.error codes"). Purely combinational.
// Golden model: the operand checks of passim::CpuDevice in runtime/src/device/cpu_device.cpp.
//
// Checks, in order of precedence: the opcode (ErrBadOpcode), then sizes and enumerations
// (ErrBadOperand: a size is 0 or too large, a bad mem, elem_size, out_bits, op_class, odd
// ROPE length, RMSNORM / LAYERNORM gain_frac_bits > 13, DMA_STORE requant from a memory other
// than the vector scratchpad), then every memory range an operand touches (ErrSpadRange). A
// row of n elements spans ceil(n / E) words of its memory.
module psm_instr_check #(
  parameter psm_cfg_pkg::cfg_t Cfg = psm_cfg_pkg::Tiny  // the accelerator's sizes
) (
  input  logic [psm_pkg::INSTR_WIDTH-1:0] instr_i,
  output logic [1:0]                      unit_o,   // 0 control, 1 dma, 2 matmul, 3 vector
  output logic [7:0]                      error_o   // a psm_pkg::error_e value
);
  // The sizes most checks use.
  localparam int unsigned Lanes       = Cfg.lanes;
  localparam int unsigned VectorDepth = Cfg.vector_depth;
  localparam int unsigned ParamDepth  = Cfg.param_depth;

  localparam logic [1:0] UnitControl = 2'd0;
  localparam logic [1:0] UnitDma     = 2'd1;
  localparam logic [1:0] UnitMatmul  = 2'd2;
  localparam logic [1:0] UnitVector  = 2'd3;

  function automatic logic [31:0] ceil_div(input logic [31:0] a, input int unsigned b);
    ceil_div = (a + 32'(b) - 32'd1) / 32'(b);
  endfunction

  // "base + words <= depth" without overflow (all operands are far below 2^31).
  function automatic logic fits(input logic [31:0] base, input logic [31:0] words,
                                input int unsigned depth);
    fits = (base + words) <= 32'(depth);
  endfunction

  logic [7:0]  opcode;
  logic [3:0]  op_class;
  assign opcode   = instr_i[psm_pkg::INSTR_OPCODE_LSB +: 8];
  assign op_class = instr_i[psm_pkg::INSTR_OP_CLASS_LSB +: 4];

  // Opcode -> unit; known = a defined opcode. The checks of each opcode group below are
  // evaluated only for an instruction of that group.
  logic known;
  always_comb begin
    unit_o = UnitControl;
    known  = 1'b1;
    unique case (opcode)
      psm_pkg::OpNop, psm_pkg::OpEnd, psm_pkg::OpBarrier: unit_o = UnitControl;
      psm_pkg::OpDmaLoad, psm_pkg::OpDmaStore:              unit_o = UnitDma;
      psm_pkg::OpMatmul, psm_pkg::OpMatmulHeads, psm_pkg::OpMatmulAct: unit_o = UnitMatmul;
      psm_pkg::OpSoftmax, psm_pkg::OpRmsnorm, psm_pkg::OpSilu, psm_pkg::OpRope,
      psm_pkg::OpAdd, psm_pkg::OpMul, psm_pkg::OpEmbed, psm_pkg::OpAttnScore,
      psm_pkg::OpAttnValue, psm_pkg::OpLayernorm, psm_pkg::OpBatchnorm, psm_pkg::OpGelu:
        unit_o = UnitVector;
      default: known = 1'b0;
    endcase
  end

  logic is_dma, is_mm, is_vec;
  assign is_dma = (unit_o == UnitDma);
  assign is_mm  = (unit_o == UnitMatmul);
  assign is_vec = (unit_o == UnitVector);

  // Fields shared by the DMA opcodes and by the vector opcodes (one layout each).
  psm_pkg::dma_load_instr_t dma;
  psm_pkg::rmsnorm_instr_t  vec;
  psm_pkg::matmul_instr_t   mm;
  assign dma = instr_i;  // no type cast: Yosys 0.23 rejects casts to package types
  assign vec = instr_i;  // no type cast: Yosys 0.23 rejects casts to package types
  assign mm  = instr_i;  // no type cast: Yosys 0.23 rejects casts to package types

  //////////////////////////////////////////////////////////////////////////////////////////////
  // DMA                                                                                      //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // rows * ceil(row_len / E) words of the memory named by mem, each with its element sizes.
  logic [7:0]  dma_err;
  logic [31:0] dma_row_words;  // ceil(row_len / E) of that memory
  logic [31:0] dma_depth;      // its words
  logic        dma_elem_ok;    // elem_size is one the memory holds
  always_comb begin
    dma_err       = psm_pkg::ErrNone;
    dma_row_words = '0;
    dma_depth     = '0;
    dma_elem_ok   = 1'b0;
    if (is_dma) begin
      unique case (dma.mem)
        psm_pkg::MemInput: begin
          dma_row_words = ceil_div(32'(dma.row_len), Cfg.array_rows);
          dma_depth     = 32'(Cfg.input_depth);
          dma_elem_ok   = (dma.elem_size == 2'd0);
        end
        psm_pkg::MemWeight: begin
          dma_row_words = ceil_div(32'(dma.row_len), Cfg.array_cols);
          dma_depth     = 32'(Cfg.weight_depth);
          dma_elem_ok   = (dma.elem_size == 2'd0);
        end
        psm_pkg::MemVector: begin
          dma_row_words = ceil_div(32'(dma.row_len), Lanes);
          dma_depth     = 32'(VectorDepth);
          dma_elem_ok   = (dma.elem_size != 2'd3);
        end
        psm_pkg::MemParam: begin
          dma_row_words = 32'(dma.row_len);
          dma_depth     = 32'(ParamDepth);
          dma_elem_ok   = (dma.elem_size == 2'd3);
        end
        default: ;  // no such memory: a bad operand
      endcase
      // DMA_STORE requant reads int32 lanes: the vector scratchpad only (bit 26 is reserved in
      // DMA_LOAD, and reserved bits are not checked).
      if (!dma_elem_ok || dma.rows == '0 || dma.row_len == '0
          || (opcode == psm_pkg::OpDmaStore && instr_i[psm_pkg::DMA_STORE_REQUANT_LSB]
              && dma.mem != psm_pkg::MemVector)) begin
        dma_err = psm_pkg::ErrBadOperand;
      end else if (32'(dma.spad_addr) + 32'(dma.rows) * dma_row_words > dma_depth) begin
        dma_err = psm_pkg::ErrSpadRange;
      end
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // MATMUL                                                                                   //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // MATMUL_HEADS has the same fields, with head_size where MATMUL has dst_stride; its rows
  // are ceil(n / head_size) heads of ceil(head_size / L) words each, packed. MATMUL_ACT has
  // digits (G, 1..3) and transpose there: G groups of k in a's rows and in W^T, and, with
  // transpose, n result rows of ceil(m / L) words.
  logic [7:0]  mm_err;
  logic [31:0] mm_kt, mm_nt_w, mm_nt_c, mm_nt_l, mm_span, mm_g;
  logic        mm_heads, mm_act, mm_trans;
  psm_pkg::matmul_act_instr_t mm_a;
  assign mm_a     = instr_i;
  assign mm_heads = (opcode == psm_pkg::OpMatmulHeads);
  assign mm_act   = (opcode == psm_pkg::OpMatmulAct);
  assign mm_trans = mm_act && mm_a.transpose;
  assign mm_g     = mm_act ? 32'(mm_a.digits) : 32'd1;
  always_comb begin
    mm_err  = psm_pkg::ErrNone;
    mm_span = '0;
    mm_kt   = '0;
    mm_nt_w = '0;
    mm_nt_c = '0;
    mm_nt_l = '0;
    if (!is_mm) begin
      // not a MATMUL: no checks
    end else if (mm.m == '0 || mm.k == '0 || mm.n == '0
                 || mm.out_bits == 6'd1 || mm.out_bits > 6'd32
                 || (mm_heads && mm.dst_stride == '0)
                 || (mm_act && mm_a.digits == '0)
                 || (!mm_heads && !mm_act && mm.dst_stride != '0
                     && 32'(mm.dst_stride) < ceil_div(32'(mm.n), Lanes))
                 || 32'(mm.m) > Cfg.acc_depth || 32'(mm.n) > ParamDepth) begin
      mm_err = psm_pkg::ErrBadOperand;
    end else begin
      mm_kt   = ceil_div(32'(mm.k), Cfg.array_rows);  // input words per row of a
      mm_nt_w = ceil_div(32'(mm.n), Cfg.array_cols);  // weight words per row of W^T
      mm_nt_c = mm_nt_w;                               // psm_matmul output words per row
      mm_nt_l = mm_heads                               // vector words per result row
                ? (32'(mm.n) + 32'(mm.dst_stride) - 32'd1) / 32'(mm.dst_stride)
                  * ceil_div(32'(mm.dst_stride), Lanes)
                : ceil_div(mm_trans ? 32'(mm.m) : 32'(mm.n), Lanes);
      mm_span = mm_trans ? 32'(mm.n) * mm_nt_l
              : (32'(mm.m) - 32'd1) * (!mm_heads && !mm_act && mm.dst_stride != '0
                                       ? 32'(mm.dst_stride) : mm_nt_l) + mm_nt_l;
      if (32'(mm.m) * mm_nt_c > Cfg.mm_out_depth) begin
        mm_err = psm_pkg::ErrBadOperand;
      end else if (!fits(32'(mm.a_addr), 32'(mm.m) * mm_g * mm_kt, Cfg.input_depth)
                   || !fits(32'(mm.w_addr), mm_g * 32'(mm.k) * mm_nt_w, Cfg.weight_depth)
                   || !fits(32'(mm.dst_addr), mm_span, VectorDepth)
                   || (mm.out_bits != '0 && !fits(32'(mm.rq_addr), 32'(mm.n), ParamDepth))) begin
        mm_err = psm_pkg::ErrSpadRange;
      end
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Vector opcodes (one operand layout: src, src2, dst, param_addr, len, rows)               //
  //////////////////////////////////////////////////////////////////////////////////////////////

  // The common case: rows rows of len at src and at dst. Only for a vector instruction.
  logic [31:0] w_len, w_rows, rows_w_len;
  logic        in_ok, out_ok;
  always_comb begin
    w_len      = '0;
    w_rows     = '0;
    rows_w_len = '0;
    in_ok      = 1'b0;
    out_ok     = 1'b0;
    if (is_vec) begin
      w_len      = ceil_div(32'(vec.len), Lanes);
      w_rows     = ceil_div(32'(vec.rows), Lanes);
      rows_w_len = 32'(vec.rows) * w_len;
      in_ok      = fits(src_at, rows_w_len, VectorDepth);
      out_ok     = fits(dst_at, rows_w_len, VectorDepth);
    end
  end

  // What each opcode reads and writes beyond that: src2 words and parameter entries.
  logic [31:0] src_at, src2_at, dst_at, prm_at;
  assign src_at  = 32'(vec.src_addr);
  assign src2_at = 32'(vec.src2_addr);
  assign dst_at  = 32'(vec.dst_addr);
  assign prm_at  = 32'(vec.param_addr);

  logic vec_bad;       // an operand value the opcode does not take
  logic vec_range_ok;  // every row the opcode touches fits its memory
  always_comb begin
    vec_bad      = 1'b0;
    vec_range_ok = 1'b1;
    if (is_vec) unique case (opcode)
      psm_pkg::OpSoftmax: vec_range_ok = in_ok && out_ok;
      psm_pkg::OpAdd: vec_range_ok = in_ok && out_ok && fits(src2_at, rows_w_len, VectorDepth);
      psm_pkg::OpMul: begin  // a step per channel
        vec_range_ok = in_ok && out_ok && fits(src2_at, rows_w_len, VectorDepth)
                       && fits(prm_at, 32'(vec.len), ParamDepth);
      end
      psm_pkg::OpEmbed: begin  // a step per row
        vec_range_ok = in_ok && out_ok && fits(prm_at, 32'(vec.rows), ParamDepth);
      end
      psm_pkg::OpSilu, psm_pkg::OpGelu: begin  // to_q10, out_rq
        vec_range_ok = in_ok && out_ok && fits(prm_at, 32'd2, ParamDepth);
      end
      psm_pkg::OpRmsnorm: begin  // the gain row; eps
        vec_bad      = vec.gain_frac_bits > 4'd13;
        vec_range_ok = in_ok && out_ok && fits(src2_at, w_len, VectorDepth)
                       && fits(prm_at, 32'd1, ParamDepth);
      end
      psm_pkg::OpLayernorm, psm_pkg::OpBatchnorm: begin  // the gain row, then the bias row
        vec_bad      = opcode == psm_pkg::OpLayernorm && vec.gain_frac_bits > 4'd13;
        vec_range_ok = in_ok && out_ok && fits(src2_at, 2 * w_len, VectorDepth)
                       && fits(prm_at, 32'd1, ParamDepth);
      end
      psm_pkg::OpRope: begin  // the cos table, then the sin table
        vec_bad      = vec.len[0] || vec.len < 16'd2;
        vec_range_ok = in_ok && out_ok
                       && fits(src2_at, 2 * ceil_div(32'(vec.len) >> 1, Lanes), VectorDepth);
      end
      psm_pkg::OpAttnScore: begin  // q (len), K (rows x len) -> scores (rows)
        vec_range_ok = fits(src_at, w_len, VectorDepth) && fits(src2_at, rows_w_len, VectorDepth)
                       && fits(dst_at, w_rows, VectorDepth) && fits(prm_at, 32'd1, ParamDepth);
      end
      psm_pkg::OpAttnValue: begin  // p (rows), V (rows x len) -> out (len)
        vec_range_ok = fits(src_at, w_rows, VectorDepth) && fits(src2_at, rows_w_len, VectorDepth)
                       && fits(dst_at, w_len, VectorDepth) && fits(prm_at, 32'd1, ParamDepth);
      end
      default: ;
    endcase
  end

  logic [7:0] vec_err;
  always_comb begin
    vec_err = psm_pkg::ErrNone;
    if (is_vec) begin
      if (vec.len == '0 || vec.rows == '0 || vec_bad) vec_err = psm_pkg::ErrBadOperand;
      else if (!vec_range_ok)                          vec_err = psm_pkg::ErrSpadRange;
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Error of the instruction                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  always_comb begin
    unique case (unit_o)
      UnitDma:    error_o = dma_err;
      UnitMatmul: error_o = mm_err;
      UnitVector: error_o = vec_err;
      default:    error_o = known ? psm_pkg::ErrNone : psm_pkg::ErrBadOpcode;
    endcase
    if (error_o == psm_pkg::ErrNone && 32'(op_class) > 32'(psm_pkg::OpClassControl)) begin
      error_o = psm_pkg::ErrBadOperand;
    end
  end

  // Reserved fields are not checked; the layer is for reports only (the hardware ignores it).
  logic unused_fields;
  assign unused_fields = ^{dma.dram_addr, dma.dram_stride, dma.rsvd_23_23, dma.rsvd_31_26,
                           dma.layer, dma.opcode, dma.op_class, vec.rsvd_31_24,
                           vec.rsvd_95_92, vec.layer, vec.opcode, vec.op_class,
                           mm.layer, mm.opcode, mm.op_class, mm_a};
endmodule : psm_instr_check
