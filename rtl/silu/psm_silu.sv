// SPDX-License-Identifier: Apache-2.0
// SiLU on int16 rows in the vector scratchpad, one word (Lanes elements) at a time.
// Golden model: passim::kernels::silu_i16() and sigmoid_q15() in runtime/src/kernels/silu.cpp,
// as called by passim::CpuDevice::vector_op().
//
// Per element x (the low 16 bits of a lane, int16):
//   t   = requantize(x, to_q10, 32)                      Q.10           (psm_requant)
//   e   = iexp_q10(-min(|t|, 2^30))                      exp(-|t|)      (psm_iexp)
//   pos = floor(kExpOne * 2^15 / (kExpOne + e))          sigmoid(|t|)   (psm_divider)
//   s   = (t >= 0) ? pos : 2^15 - pos                    Q0.15, 1.0 = 2^15
//   out = requantize(x * s, out_rq, 16)                  int16, written sign-extended
// The rows, the sequence of the two requantisations and the scratchpad port are
// psm_gated_act's; each lane is a psm_gated_lane (x and its requantiser) and the sigmoid gate:
// its own i-exp and divider. The two Requant steps are inputs, as the controller reads them
// from param_addr and param_addr + 1.
//
// Cycles per word (one word in flight at a time):
//   read, load, to_q10 round, sigmoid (divider start), 20 divide, out_rq round, write = 26
// done_o pulses in the cycle after the last write, with busy_o already low.
// Ports: the vector-unit groups `PSM_VEC_* of rtl/common/psm_vector_port.svh; scratchpad
// data: int16 x in, int16 out, each sign-extended to 32 bits.
`include "psm_vector_port.svh"
module psm_silu #(
  `PSM_VEC_PARAMS
) (
  `PSM_VEC_START_PORTS,
  `PSM_VEC_ROW_PORTS,
  input  logic [63:0]          to_q10_i,  // Requant entry: mult [30:0], shift [37:32]
  input  logic [63:0]          out_rq_i,  // Requant entry: mult [30:0], shift [37:32]
  `PSM_VEC_DONE_PORTS,
  output logic [1:0]           pass_o,    // always 0: one pass per row
  `PSM_VEC_MEM_PORTS
);
  localparam logic [22:0] ExpOne = 23'd2924389;  // kExpOne = kExpB^2 + kExpC (fixed_point.hpp)
  localparam int unsigned SigFracBits = psm_pkg::SIGMOID_FRAC_BITS;  // 15
  // The dividend kExpOne * 2^15 < 2^37; the quotient is in [2^14, 2^15].
  localparam int unsigned DivWidth = 37;
  localparam logic [DivWidth-1:0] SigNum = DivWidth'(ExpOne) << SigFracBits;
  localparam logic signed [32:0] MagMax = 33'sd1073741824;  // 2^30: clamp of |t|

  logic                load, scale, gate_start;  // gate_start: every lane starts its divider
  logic [30:0]         rq_mult;
  logic [5:0]          rq_shift, rq_bits;
  logic [Lanes-1:0]    div_done;                 // the same cycle in every lane
  logic [Lanes*32-1:0] lane_out;                 // requantised results, sign-extended
  logic [Lanes-1:0]    lane_sat;                 // ... clamped to 16 bits

  psm_gated_act #(
    .Lanes(Lanes), .AddrWidth(AddrWidth), .LenWidth(LenWidth), .OutBits(16)
  ) u_act (
    .clk_i, .rst_i, .start_i, .src_addr_i, .dst_addr_i, .len_i, .rows_i,
    .to_q10_mult_i (to_q10_i[psm_pkg::PARAM_RQ_MULT_LSB +: 31]),
    .to_q10_shift_i(to_q10_i[psm_pkg::PARAM_RQ_SHIFT_LSB +: 6]),
    .out_mult_i    (out_rq_i[psm_pkg::PARAM_RQ_MULT_LSB +: 31]),
    .out_shift_i   (out_rq_i[psm_pkg::PARAM_RQ_SHIFT_LSB +: 6]),
    .busy_o, .done_o, .load_o(load), .gate_start_o(gate_start), .gate_valid_i(div_done[0]),
    .scale_o(scale), .rq_mult_o(rq_mult), .rq_shift_o(rq_shift), .rq_bits_o(rq_bits),
    .lane_out_i(lane_out), .lane_sat_i(lane_sat), .mem_req_o, .mem_we_o, .mem_addr_o,
    .mem_wdata_o, .mem_wmask_o, .mem_wsat_o
  );

  assign pass_o = 2'd0;

  //////////////////////////////////////////////////////////////////////////////////////////////
  // Lanes: x * sigmoid(x)                                                                   //
  //////////////////////////////////////////////////////////////////////////////////////////////

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [31:0]         t_l;       // requantize(x, to_q10, 32), Q.10; then the result
    logic        [16:0]         s;         // sigmoid(t), Q0.15, in [0, 2^15]
    logic signed [32:0]         mag;       // |t|, exact in 33 bits
    logic signed [32:0]         mag_clamped;
    logic signed [31:0]         neg;       // -min(|t|, 2^30), in [-2^30, 0]
    logic        [21:0]         e;         // iexp_q10(neg), <= kExpOne
    logic        [DivWidth-1:0] divisor;   // kExpOne + e, sampled with gate_start
    logic                       t_neg_q;   // t < 0
    logic        [DivWidth-1:0] quotient;  // floor(kExpOne * 2^15 / (kExpOne + e))
    logic                       div_busy;  // implied by the gate wait

    psm_gated_lane #(.XBits(16)) u_lane (
      .clk_i, .load_i(load), .scale_i(scale), .x_i(mem_rdata_i[l*32 +: 16]), .g_i(s),
      .rq_mult_i(rq_mult), .rq_shift_i(rq_shift), .rq_bits_i(rq_bits), .y_o(t_l),
      .sat_o(lane_sat[l])
    );
    assign lane_out[l*32 +: 32] = t_l;

    // The gate: sigmoid of |t| through i-exp, evaluated only when the dividers sample it.
    always_comb begin
      {mag, mag_clamped, neg, e, divisor} = '0;
      if (gate_start) begin
        mag         = (t_l < 32'sd0) ? -(33'(t_l)) : 33'(t_l);
        mag_clamped = (mag > MagMax) ? MagMax : mag;
        neg         = -mag_clamped[31:0];
        e           = psm_iexp_pkg::iexp_q10(neg);
        divisor     = DivWidth'(ExpOne) + DivWidth'(e);  // in [kExpOne, 2 kExpOne]
      end
    end

    psm_divider #(.Width(DivWidth)) u_divider (
      .clk_i, .rst_i, .start_i(gate_start), .dividend_i(SigNum), .divisor_i(divisor),
      .busy_o(div_busy), .done_o(div_done[l]), .quotient_o(quotient)
    );

    always_ff @(posedge clk_i) begin  // datapath: no reset
      if (gate_start) t_neg_q <= (t_l < 32'sd0);
    end

    // The sign of t picks sigmoid(|t|) or 1 - sigmoid(|t|) when the quotient is valid.
    always_comb begin
      s = '0;
      if (div_done[l]) s = t_neg_q ? 17'd32768 - {1'b0, quotient[15:0]} : {1'b0, quotient[15:0]};
    end

    // The quotient is at most 2^15 (asserted); mag_clamped <= 2^30 leaves bit 32 a copy of 31.
    logic unused_bits;
    assign unused_bits = ^{quotient[DivWidth-1:16], mag_clamped[32], div_busy,
                           mem_rdata_i[l*32+16 +: 16]};

`ifndef SYNTHESIS
    QuotientFits_A : assert property (@(posedge clk_i) disable iff (rst_i)
        div_done[l] |-> quotient <= DivWidth'(32768))
      else $error("psm_silu: lane %0d: sigmoid quotient %0d above 2^15", l, quotient);
`endif
  end : g_lane

  // Every lane's divider runs in lock step with lane 0's; only the Requant fields of the two
  // parameter entries are used (bit 31 and [63:38] are zero).
  logic unused_bits;
  assign unused_bits = ^{div_done, to_q10_i[63:38], to_q10_i[31], out_rq_i[63:38],
                         out_rq_i[31]};

`ifndef SYNTHESIS
  RqMultBit31_A : assert property (@(posedge clk_i) disable iff (rst_i)
      (start_i && !busy_o) |-> (!to_q10_i[31] && !out_rq_i[31]))
    else $error("psm_silu: Requant entry with bit 31 set");
`endif
endmodule : psm_silu
