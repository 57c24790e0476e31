# SPDX-License-Identifier: Apache-2.0
# psm_gelu, Verilated with Lanes = 2 (tiny) and Lanes = 4, against gelu_i8(), and its
# psm_gelu_phi against gelu_phi_q16(), in tests/sim/gelu_rtl_test.cpp; plus a Yosys synthesis
# test. Included from tests/sim/CMakeLists.txt.
set(PASSIM_GELU_RTL
  ${PASSIM_RTL_DIR}/common/psm_requant.sv
  ${PASSIM_RTL_DIR}/common/psm_row_tail.sv
  ${PASSIM_RTL_DIR}/common/psm_row_walk.sv
  ${PASSIM_RTL_DIR}/common/psm_gated_act.sv
  ${PASSIM_RTL_DIR}/common/psm_gated_lane.sv
  ${PASSIM_RTL_DIR}/gelu/psm_gelu_phi_pkg.sv
  ${PASSIM_RTL_DIR}/gelu/psm_gelu.sv)

foreach(lanes 2 4)
  passim_verilated_model(vpsm_gelu_l${lanes} TOP psm_gelu PREFIX Vpsm_gelu_l${lanes}
    SOURCES ${PASSIM_GELU_RTL} PARAMS Lanes=${lanes})
endforeach()
passim_verilated_model(vpsm_gelu_phi TOP psm_gelu_phi PREFIX Vpsm_gelu_phi
  SOURCES ${PASSIM_RTL_DIR}/gelu/psm_gelu_phi_pkg.sv ${PASSIM_RTL_DIR}/gelu/psm_gelu_phi.sv)
passim_sim_test(gelu_rtl_test MODEL vpsm_gelu_l2 vpsm_gelu_l4 vpsm_gelu_phi
  SOURCES gelu_rtl_test.cpp)

# Synthesis as a test (default parameters, Lanes = 2): Yosys must elaborate and map the unit, and
# `check -assert` fails on undriven wires, multiple drivers or combinational loops.
if(YOSYS)
  string(REPLACE ";" " " gelu_rtl "${PASSIM_GELU_RTL}")
  add_test(NAME gelu_synth
    COMMAND ${YOSYS} -q -p "read_verilog -sv -I${PASSIM_RTL_INCLUDE_DIR} ${gelu_rtl}; \
synth -top psm_gelu; check -assert")
  set_tests_properties(gelu_synth PROPERTIES LABELS sim TIMEOUT 600)
endif()
