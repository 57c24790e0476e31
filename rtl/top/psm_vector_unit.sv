// SPDX-License-Identifier: Apache-2.0
// The vector unit: runs one vector instruction (SOFTMAX, RMSNORM, LAYERNORM, BATCHNORM, SILU,
// GELU, ROPE, ADD, MUL, EMBED, ATTN_SCORE, ATTN_VALUE; docs/isa.md) on the matching row unit
// (rtl/softmax, rtl/rmsnorm, rtl/layernorm with rtl/batchnorm, rtl/silu, rtl/gelu, rtl/rope,
// rtl/eltwise, rtl/attn), and shares their vector-scratchpad and parameter-memory ports.
// Golden model: passim::CpuDevice::vector_op() in runtime/src/device/cpu_device.cpp.
//
// Sequence: read the instruction's constant parameters (RMSNORM, LAYERNORM: eps at param_addr;
// BATCHNORM: its step at param_addr; SILU, GELU: to_q10 and out_rq at param_addr,
// param_addr + 1), then start the unit once per row, with row r at src/src2/dst + r *
// ceil(len / L) (EMBED: its step at param_addr + r; the RMSNORM gain, the LAYERNORM / BATCHNORM
// gain and bias rows and the ROPE tables: the same rows for every r). ATTN_SCORE / ATTN_VALUE
// run as one command.
// Passes (counters): one when a unit starts, one more each time its pass_o advances
// (SOFTMAX 3, or 2 with `online`, RMSNORM 2 and LAYERNORM 3 per row, the others 1); ATTN_* one
// per cached position.
module psm_vector_unit #(
  parameter psm_cfg_pkg::cfg_t Cfg = psm_cfg_pkg::Tiny,  // the accelerator's sizes
  // Derived
  localparam int unsigned Lanes        = Cfg.lanes,
  localparam int unsigned VecAddrWidth = Cfg.vec_addr_width,
  localparam int unsigned PrmAddrWidth = Cfg.prm_addr_width
) (
  input  logic                            clk_i,
  input  logic                            rst_i,        // synchronous, active high (and abort)
  // Command (a checked vector instruction)
  input  logic                            start_i,
  input  logic [psm_pkg::INSTR_WIDTH-1:0] instr_i,
  output logic                            busy_o,
  output logic [23:0]                     passes_o,     // passes started this cycle
  output logic [23:0]                     saturated_o,  // results clamped, written this cycle
  // Parameter memory port (highest priority: never stalls), data the next cycle
  output logic                            prm_req_o,
  output logic [PrmAddrWidth-1:0]         prm_addr_o,
  input  logic [63:0]                     prm_rdata_i,
  // Vector scratchpad port (highest priority: never stalls), docs/accelerator.md
  output logic                            mem_req_o,
  output logic                            mem_we_o,
  output logic [VecAddrWidth-1:0]         mem_addr_o,
  output logic [Lanes*32-1:0]             mem_wdata_o,
  output logic [Lanes-1:0]                mem_wmask_o,
  input  logic [Lanes*32-1:0]             mem_rdata_i
);
  // Row units, in port order.
  localparam int unsigned USoftmax = 0;
  localparam int unsigned URmsnorm = 1;
  localparam int unsigned USilu    = 2;
  localparam int unsigned URope    = 3;
  localparam int unsigned UElt     = 4;
  localparam int unsigned UAttn    = 5;
  localparam int unsigned ULnorm   = 6;  // LAYERNORM and BATCHNORM
  localparam int unsigned UGelu    = 7;
  localparam int unsigned NumUnits = 8;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Command                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  psm_pkg::rmsnorm_instr_t cmd;  // every vector opcode shares this operand layout
  assign cmd = instr_i;  // no type cast: Yosys 0.23 rejects casts to package types

  psm_pkg::opcode_e        op_q;
  logic [2:0]              unit_q;
  logic [VecAddrWidth-1:0] src_q, src2_q, dst_q;
  logic [PrmAddrWidth-1:0] prm_q;
  logic [15:0]             len_q, rows_q;
  logic [3:0]              gfb_q;
  logic                    online_q;  // SOFTMAX `online` (bit 20, where RMSNORM keeps gfb)
  logic [VecAddrWidth-1:0] words_q;   // ceil(len / L): the row stride
  logic [63:0]             p0_q, p1_q;

  // The opcode as the enum the units take, without a cast (Yosys 0.23 rejects casts to package
  // types); only vector opcodes reach this unit.
  psm_pkg::opcode_e start_op;
  always_comb begin
    unique case (cmd.opcode)
      psm_pkg::OpSoftmax:   start_op = psm_pkg::OpSoftmax;
      psm_pkg::OpRmsnorm:   start_op = psm_pkg::OpRmsnorm;
      psm_pkg::OpSilu:      start_op = psm_pkg::OpSilu;
      psm_pkg::OpRope:      start_op = psm_pkg::OpRope;
      psm_pkg::OpMul:       start_op = psm_pkg::OpMul;
      psm_pkg::OpEmbed:     start_op = psm_pkg::OpEmbed;
      psm_pkg::OpAttnScore: start_op = psm_pkg::OpAttnScore;
      psm_pkg::OpAttnValue: start_op = psm_pkg::OpAttnValue;
      psm_pkg::OpLayernorm: start_op = psm_pkg::OpLayernorm;
      psm_pkg::OpBatchnorm: start_op = psm_pkg::OpBatchnorm;
      psm_pkg::OpGelu:      start_op = psm_pkg::OpGelu;
      default:              start_op = psm_pkg::OpAdd;
    endcase
  end

  logic [2:0] start_unit;
  always_comb begin
    unique case (start_op)
      psm_pkg::OpSoftmax:                        start_unit = 3'(USoftmax);
      psm_pkg::OpRmsnorm:                        start_unit = 3'(URmsnorm);
      psm_pkg::OpSilu:                           start_unit = 3'(USilu);
      psm_pkg::OpRope:                           start_unit = 3'(URope);
      psm_pkg::OpAttnScore, psm_pkg::OpAttnValue: start_unit = 3'(UAttn);
      psm_pkg::OpLayernorm, psm_pkg::OpBatchnorm: start_unit = 3'(ULnorm);
      psm_pkg::OpGelu:                           start_unit = 3'(UGelu);
      default:                                   start_unit = 3'(UElt);  // ADD, MUL, EMBED
    endcase
  end

  always_ff @(posedge clk_i) begin  // configuration: no reset, loaded by start_i
    if (start_i) begin
      op_q     <= start_op;
      unit_q   <= start_unit;
      src_q    <= VecAddrWidth'(cmd.src_addr);
      src2_q   <= VecAddrWidth'(cmd.src2_addr);
      dst_q    <= VecAddrWidth'(cmd.dst_addr);
      prm_q    <= PrmAddrWidth'(cmd.param_addr);
      len_q    <= cmd.len;
      rows_q   <= cmd.rows;
      gfb_q    <= cmd.gain_frac_bits;
      online_q <= instr_i[psm_pkg::SOFTMAX_ONLINE_LSB];
      words_q  <= VecAddrWidth'((32'(cmd.len) + Lanes - 1) / Lanes);
    end
  end

  typedef enum logic [2:0] {
    StIdle,      // wait for start_i
    StPrm0,      // read the first constant parameter
    StPrm1,      // capture it; read the second (SILU, GELU)
    StPrm2,      // capture the second
    StRowStart,  // start the row unit on row r
    StRowWait    // wait for its done_o
  } vec_state_e;

  vec_state_e state_q, state_d;

  logic [15:0]             row_q;     // row being worked on
  logic [VecAddrWidth-1:0] off_q;     // row_q * words_q
  logic                    row_last;  // this is the instruction's last command

  assign row_last = (unit_q == 3'(UAttn)) || (row_q + 16'd1 == rows_q);

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Row units                                                                               //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic [NumUnits-1:0]             u_start, u_busy, u_done;
  logic [NumUnits*2-1:0]           u_pass;
  logic [NumUnits-1:0]             u_req, u_we;
  logic [NumUnits*VecAddrWidth-1:0] u_addr;
  // Write data: one signal per unit (a packed NumUnits x Lanes x 32-bit bus would be
  // assembled by a simulator in every cycle).
  logic [Lanes*32-1:0] wd_softmax, wd_rmsnorm, wd_lnorm, wd_silu, wd_gelu, wd_rope, wd_elt,
                       wd_attn;
  logic [NumUnits*Lanes-1:0]       u_wmask;
  logic [NumUnits*Lanes-1:0]       u_wsat;   // per lane: the result was clamped
  logic                            elt_prm_req, attn_prm_req;
  logic [PrmAddrWidth-1:0]         elt_prm_addr, attn_prm_addr;

  logic [VecAddrWidth-1:0] row_src, row_src2, row_dst;
  assign row_src  = src_q + off_q;
  assign row_src2 = src2_q + off_q;
  assign row_dst  = dst_q + off_q;

  psm_softmax #(.Lanes(Lanes), .AddrWidth(VecAddrWidth), .LenWidth(16)) u_softmax (
    .clk_i, .rst_i, .start_i(u_start[USoftmax]), .src_addr_i(row_src), .dst_addr_i(row_dst),
    .len_i(len_q), .online_i(online_q), .busy_o(u_busy[USoftmax]), .done_o(u_done[USoftmax]),
    .pass_o(u_pass[USoftmax*2 +: 2]), .mem_req_o(u_req[USoftmax]), .mem_we_o(u_we[USoftmax]),
    .mem_addr_o(u_addr[USoftmax*VecAddrWidth +: VecAddrWidth]), .mem_wdata_o(wd_softmax),
    .mem_wmask_o(u_wmask[USoftmax*Lanes +: Lanes]),
    .mem_wsat_o(u_wsat[USoftmax*Lanes +: Lanes]), .mem_rdata_i
  );

  psm_rmsnorm #(.Lanes(Lanes), .AddrWidth(VecAddrWidth), .LenWidth(16)) u_rmsnorm (
    .clk_i, .rst_i, .start_i(u_start[URmsnorm]), .src_addr_i(row_src), .gain_addr_i(src2_q),
    .dst_addr_i(row_dst), .len_i(len_q), .eps_i(p0_q), .gain_frac_bits_i(gfb_q),
    .busy_o(u_busy[URmsnorm]), .done_o(u_done[URmsnorm]), .pass_o(u_pass[URmsnorm*2 +: 2]),
    .mem_req_o(u_req[URmsnorm]), .mem_we_o(u_we[URmsnorm]),
    .mem_addr_o(u_addr[URmsnorm*VecAddrWidth +: VecAddrWidth]), .mem_wdata_o(wd_rmsnorm),
    .mem_wmask_o(u_wmask[URmsnorm*Lanes +: Lanes]),
    .mem_wsat_o(u_wsat[URmsnorm*Lanes +: Lanes]), .mem_rdata_i
  );

  // LAYERNORM (mode 0: eps in p0) and BATCHNORM (mode 1: the step's mult and shift in p0). The
  // gain row and, right after it, the bias row are the same for every row.
  psm_layernorm #(.Lanes(Lanes), .AddrWidth(VecAddrWidth), .LenWidth(16)) u_layernorm (
    .clk_i, .rst_i, .start_i(u_start[ULnorm]), .mode_i(op_q == psm_pkg::OpBatchnorm),
    .src_addr_i(row_src), .gain_addr_i(src2_q), .dst_addr_i(row_dst), .len_i(len_q), .eps_i(p0_q),
    .gain_frac_bits_i(gfb_q), .rq_mult_i(p0_q[30:0]), .rq_shift_i(p0_q[37:32]),
    .busy_o(u_busy[ULnorm]), .done_o(u_done[ULnorm]), .pass_o(u_pass[ULnorm*2 +: 2]),
    .mem_req_o(u_req[ULnorm]), .mem_we_o(u_we[ULnorm]),
    .mem_addr_o(u_addr[ULnorm*VecAddrWidth +: VecAddrWidth]), .mem_wdata_o(wd_lnorm),
    .mem_wmask_o(u_wmask[ULnorm*Lanes +: Lanes]),
    .mem_wsat_o(u_wsat[ULnorm*Lanes +: Lanes]), .mem_rdata_i
  );

  psm_silu #(.Lanes(Lanes), .AddrWidth(VecAddrWidth), .LenWidth(16)) u_silu (
    .clk_i, .rst_i, .start_i(u_start[USilu]), .src_addr_i(row_src), .dst_addr_i(row_dst),
    .len_i(len_q), .rows_i(16'd1), .to_q10_i(p0_q), .out_rq_i(p1_q), .busy_o(u_busy[USilu]),
    .done_o(u_done[USilu]), .pass_o(u_pass[USilu*2 +: 2]), .mem_req_o(u_req[USilu]),
    .mem_we_o(u_we[USilu]), .mem_addr_o(u_addr[USilu*VecAddrWidth +: VecAddrWidth]),
    .mem_wdata_o(wd_silu), .mem_wmask_o(u_wmask[USilu*Lanes +: Lanes]),
    .mem_wsat_o(u_wsat[USilu*Lanes +: Lanes]), .mem_rdata_i
  );

  psm_gelu #(.Lanes(Lanes), .AddrWidth(VecAddrWidth), .LenWidth(16)) u_gelu (
    .clk_i, .rst_i, .start_i(u_start[UGelu]), .src_addr_i(row_src), .dst_addr_i(row_dst),
    .len_i(len_q), .rows_i(16'd1), .to_q10_mult_i(p0_q[30:0]), .to_q10_shift_i(p0_q[37:32]),
    .out_rq_mult_i(p1_q[30:0]), .out_rq_shift_i(p1_q[37:32]), .busy_o(u_busy[UGelu]),
    .done_o(u_done[UGelu]), .pass_o(u_pass[UGelu*2 +: 2]), .mem_req_o(u_req[UGelu]),
    .mem_we_o(u_we[UGelu]), .mem_addr_o(u_addr[UGelu*VecAddrWidth +: VecAddrWidth]),
    .mem_wdata_o(wd_gelu), .mem_wmask_o(u_wmask[UGelu*Lanes +: Lanes]),
    .mem_wsat_o(u_wsat[UGelu*Lanes +: Lanes]), .mem_rdata_i
  );

  psm_rope #(.Lanes(Lanes), .AddrWidth(VecAddrWidth), .LenWidth(16)) u_rope (
    .clk_i, .rst_i, .start_i(u_start[URope]), .src_addr_i(row_src), .src2_addr_i(src2_q),
    .dst_addr_i(row_dst), .len_i(len_q), .rows_i(16'd1), .busy_o(u_busy[URope]),
    .done_o(u_done[URope]), .pass_o(u_pass[URope*2 +: 2]), .mem_req_o(u_req[URope]),
    .mem_we_o(u_we[URope]), .mem_addr_o(u_addr[URope*VecAddrWidth +: VecAddrWidth]),
    .mem_wdata_o(wd_rope), .mem_wmask_o(u_wmask[URope*Lanes +: Lanes]),
    .mem_wsat_o(u_wsat[URope*Lanes +: Lanes]), .mem_rdata_i
  );

  // MUL: one step per channel, the same for every row; EMBED: one step per row.
  logic [PrmAddrWidth-1:0] elt_prm_base;
  assign elt_prm_base = (op_q == psm_pkg::OpEmbed) ? prm_q + PrmAddrWidth'(row_q) : prm_q;

  psm_eltwise #(
    .Lanes(Lanes), .AddrWidth(VecAddrWidth), .LenWidth(16), .ParamAddrWidth(PrmAddrWidth)
  ) u_eltwise (
    .clk_i, .rst_i, .start_i(u_start[UElt]), .op_i(op_q), .src_addr_i(row_src),
    .src2_addr_i(row_src2), .dst_addr_i(row_dst), .param_addr_i(elt_prm_base), .len_i(len_q),
    .rows_i(16'd1), .busy_o(u_busy[UElt]), .done_o(u_done[UElt]), .pass_o(u_pass[UElt*2 +: 2]),
    .prm_req_o(elt_prm_req), .prm_addr_o(elt_prm_addr), .prm_rdata_i, .mem_req_o(u_req[UElt]),
    .mem_we_o(u_we[UElt]), .mem_addr_o(u_addr[UElt*VecAddrWidth +: VecAddrWidth]),
    .mem_wdata_o(wd_elt), .mem_wmask_o(u_wmask[UElt*Lanes +: Lanes]),
    .mem_wsat_o(u_wsat[UElt*Lanes +: Lanes]), .mem_rdata_i
  );

  psm_attn #(
    .Lanes(Lanes), .AddrWidth(VecAddrWidth), .LenWidth(16), .ParamAddrWidth(PrmAddrWidth)
  ) u_attn (
    .clk_i, .rst_i, .start_i(u_start[UAttn]), .op_i(op_q), .src_addr_i(src_q),
    .src2_addr_i(src2_q), .dst_addr_i(dst_q), .param_addr_i(prm_q), .len_i(len_q), .rows_i(rows_q),
    .busy_o(u_busy[UAttn]), .done_o(u_done[UAttn]), .pass_o(u_pass[UAttn*2 +: 2]),
    .prm_req_o(attn_prm_req), .prm_addr_o(attn_prm_addr), .prm_rdata_i, .mem_req_o(u_req[UAttn]),
    .mem_we_o(u_we[UAttn]), .mem_addr_o(u_addr[UAttn*VecAddrWidth +: VecAddrWidth]),
    .mem_wdata_o(wd_attn), .mem_wmask_o(u_wmask[UAttn*Lanes +: Lanes]),
    .mem_wsat_o(u_wsat[UAttn*Lanes +: Lanes]), .mem_rdata_i
  );

  // Only the unit of the current instruction is busy: its port is the vector unit's port.
  // The running unit owns the scratchpad port; its wide write data is copied only when it
  // writes.
  always_comb begin
    mem_req_o   = 1'b0;
    mem_we_o    = 1'b0;
    mem_addr_o  = '0;
    mem_wdata_o = '0;
    mem_wmask_o = '0;
    for (int u = 0; u < NumUnits; u++) begin
      if (state_q == StRowWait && unit_q == 3'(u)) begin
        mem_req_o   = u_req[u];
        mem_we_o    = u_we[u];
        mem_addr_o  = u_addr[u*VecAddrWidth +: VecAddrWidth];
        mem_wmask_o = u_wmask[u*Lanes +: Lanes];
      end
    end
    if (state_q == StRowWait && u_req[unit_q] && u_we[unit_q]) begin
      unique case (unit_q)
        3'(USoftmax): mem_wdata_o = wd_softmax;
        3'(URmsnorm): mem_wdata_o = wd_rmsnorm;
        3'(USilu):    mem_wdata_o = wd_silu;
        3'(URope):    mem_wdata_o = wd_rope;
        3'(UElt):     mem_wdata_o = wd_elt;
        3'(UAttn):    mem_wdata_o = wd_attn;
        3'(ULnorm):   mem_wdata_o = wd_lnorm;
        3'(UGelu):    mem_wdata_o = wd_gelu;
        default:      mem_wdata_o = '0;
      endcase
    end
  end

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Control                                                                                 //
  //////////////////////////////////////////////////////////////////////////////////////////////

  logic       own_prm_req;   // this wrapper's own parameter reads
  logic [1:0] pass_q;        // pass_o of the running unit, last cycle
  logic [1:0] cur_pass;
  assign cur_pass = u_pass[32'(unit_q)*2 +: 2];

  always_comb begin
    state_d     = state_q;
    u_start     = '0;
    own_prm_req = 1'b0;
    prm_addr_o  = prm_q;
    unique case (state_q)
      // Wait for an instruction: constant parameters first (RMSNORM, LAYERNORM, BATCHNORM, SILU,
      // GELU).
      StIdle: begin
        if (start_i) begin
          if (start_unit == 3'(URmsnorm) || start_unit == 3'(USilu)
              || start_unit == 3'(ULnorm) || start_unit == 3'(UGelu)) begin
            state_d = StPrm0;
          end else begin
            state_d = StRowStart;
          end
        end
      end
      // Read param_addr.
      StPrm0: begin
        own_prm_req = 1'b1;
        state_d     = StPrm1;
      end
      // p0 arrives; SILU and GELU read param_addr + 1.
      StPrm1: begin
        if (unit_q == 3'(USilu) || unit_q == 3'(UGelu)) begin
          own_prm_req = 1'b1;
          prm_addr_o  = prm_q + PrmAddrWidth'(1);
          state_d     = StPrm2;
        end else begin
          state_d = StRowStart;
        end
      end
      // p1 arrives.
      StPrm2: state_d = StRowStart;
      // Start the unit on row row_q.
      StRowStart: begin
        u_start[unit_q] = 1'b1;
        state_d         = StRowWait;
      end
      // The unit's done_o ends the row; then the next row or the end.
      StRowWait: begin
        if (u_done[unit_q]) state_d = row_last ? StIdle : StRowStart;
      end
      default: state_d = StIdle;
    endcase
    if (elt_prm_req)  prm_addr_o = elt_prm_addr;
    if (attn_prm_req) prm_addr_o = attn_prm_addr;
  end

  assign prm_req_o = own_prm_req || elt_prm_req || attn_prm_req;

  always_ff @(posedge clk_i) begin  // control: reset
    if (rst_i) begin
      state_q <= StIdle;
      row_q   <= '0;
      off_q   <= '0;
      pass_q  <= '0;
    end else begin
      state_q <= state_d;
      pass_q  <= cur_pass;
      if (start_i) begin
        row_q <= '0;
        off_q <= '0;
      end else if (state_q == StRowWait && u_done[unit_q]) begin
        row_q <= row_q + 16'd1;
        off_q <= off_q + words_q;
      end
    end
  end

  always_ff @(posedge clk_i) begin  // datapath: no reset
    if (state_q == StPrm1) p0_q <= prm_rdata_i;
    if (state_q == StPrm2) p1_q <= prm_rdata_i;
  end

  // The `saturated` counter: clamped results among the lanes the running unit writes.
  always_comb begin
    saturated_o = '0;
    if (state_q == StRowWait && u_req[unit_q] && u_we[unit_q]) begin
      for (int l = 0; l < Lanes; l++) begin
        saturated_o += 24'(u_wsat[32'(unit_q)*Lanes + l] && u_wmask[32'(unit_q)*Lanes + l]);
      end
    end
  end

  always_comb begin
    passes_o = '0;
    if (state_q == StRowStart) passes_o = (unit_q == 3'(UAttn)) ? 24'(rows_q) : 24'd1;
    else if (u_busy[unit_q] && cur_pass != pass_q) passes_o = 24'd1;
  end

  assign busy_o = (state_q != StIdle);

  logic unused_bits;
  assign unused_bits = ^{cmd.rsvd_31_24, cmd.rsvd_95_92, cmd.layer, cmd.op_class};
endmodule : psm_vector_unit
