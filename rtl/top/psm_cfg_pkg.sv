// SPDX-License-Identifier: Apache-2.0
// The accelerator's configuration as one value: psm_accel's parameters (a named config of
// spec/passim.json, see psm_pkg) and the sizes derived from them. psm_accel builds it once with
// make() and passes it as the one parameter `Cfg` to the submodules that need most of it
// (psm_controller, psm_instr_check, psm_matmul_stage, psm_vector_unit).
package psm_cfg_pkg;

  typedef struct packed {
    int unsigned array_rows;      // R: int8 elements per input word
    int unsigned array_cols;      // C: int8 elements per weight word
    int unsigned lanes;           // L: int32 elements per vector word
    int unsigned input_depth;     // words of each memory
    int unsigned weight_depth;
    int unsigned vector_depth;
    int unsigned param_depth;
    int unsigned acc_depth;       // most rows m of a MATMUL
    int unsigned prog_depth;      // instructions
    // Derived
    int unsigned mm_out_depth;    // psm_matmul's private output buffer (words)
    int unsigned in_addr_width;   // word address widths of the four memories
    int unsigned wgt_addr_width;
    int unsigned vec_addr_width;
    int unsigned prm_addr_width;
  } cfg_t;

  localparam int unsigned CfgBits = 14 * 32;

  // The configuration of psm_accel's parameters. psm_matmul's output buffer holds every MATMUL
  // result that fits the vector scratchpad (psm_instr_check rejects the others with
  // ErrBadOperand). The result is a plain vector: Yosys 0.23 has no struct-typed functions.
  function automatic logic [CfgBits-1:0] make(
      input int unsigned array_rows, input int unsigned array_cols, input int unsigned lanes,
      input int unsigned input_depth, input int unsigned weight_depth,
      input int unsigned vector_depth, input int unsigned param_depth,
      input int unsigned acc_depth, input int unsigned prog_depth);
    int unsigned mm_out_depth;
    mm_out_depth = 1 << $clog2(vector_depth * lanes / array_cols + acc_depth);
    make = {array_rows, array_cols, lanes, input_depth, weight_depth, vector_depth, param_depth,
            acc_depth, prog_depth, mm_out_depth, 32'($clog2(input_depth)),
            32'($clog2(weight_depth)), 32'($clog2(vector_depth)), 32'($clog2(param_depth))};
  endfunction

  // The submodules' default: the tiny config (psm_pkg's TINY_* values, written out: in Yosys
  // 0.23 a package reads no other package's names).
  localparam cfg_t Tiny = make(2, 4, 2, 1024, 2048, 1024, 256, 128, 256);

endpackage : psm_cfg_pkg
