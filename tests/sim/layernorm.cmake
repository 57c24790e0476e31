# SPDX-License-Identifier: Apache-2.0
# psm_layernorm (LAYERNORM and BATCHNORM, the latter psm_batchnorm alone), Verilated with Lanes = 2
# (tiny) and Lanes = 4, against layernorm_i8() in tests/sim/layernorm_rtl_test.cpp and
# batchnorm_i8() in tests/sim/batchnorm_rtl_test.cpp (one testbench, tests/sim/common/
# layernorm_fixture.hpp); plus a Yosys synthesis test. Included from tests/sim/CMakeLists.txt.
set(PASSIM_LAYERNORM_RTL
  ${PASSIM_RTL_DIR}/common/psm_requant.sv
  ${PASSIM_RTL_DIR}/common/psm_divider.sv
  ${PASSIM_RTL_DIR}/common/psm_row_tail.sv
  ${PASSIM_RTL_DIR}/common/psm_row_walk.sv
  ${PASSIM_RTL_DIR}/common/psm_row_walk_one.sv
  ${PASSIM_RTL_DIR}/common/psm_isqrt.sv
  ${PASSIM_RTL_DIR}/common/psm_rsqrt.sv
  ${PASSIM_RTL_DIR}/batchnorm/psm_batchnorm.sv
  ${PASSIM_RTL_DIR}/layernorm/psm_layernorm.sv)

foreach(lanes 2 4)
  passim_verilated_model(vpsm_layernorm_l${lanes} TOP psm_layernorm
    PREFIX Vpsm_layernorm_l${lanes} SOURCES ${PASSIM_LAYERNORM_RTL} PARAMS Lanes=${lanes})
endforeach()
passim_sim_test(layernorm_rtl_test MODEL vpsm_layernorm_l2 vpsm_layernorm_l4
  SOURCES layernorm_rtl_test.cpp)
passim_sim_test(batchnorm_rtl_test MODEL vpsm_layernorm_l2 vpsm_layernorm_l4
  SOURCES batchnorm_rtl_test.cpp)

# Synthesis as a test (default parameters, Lanes = 2): Yosys must elaborate and map the unit, and
# `check -assert` fails on undriven wires, multiple drivers or combinational loops.
if(YOSYS)
  string(REPLACE ";" " " layernorm_rtl "${PASSIM_LAYERNORM_RTL}")
  add_test(NAME layernorm_synth
    COMMAND ${YOSYS} -q -p "read_verilog -sv -I${PASSIM_RTL_INCLUDE_DIR} ${layernorm_rtl}; \
synth -top psm_layernorm; check -assert")
  set_tests_properties(layernorm_synth PROPERTIES LABELS sim TIMEOUT 600)
endif()
