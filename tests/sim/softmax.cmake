# SPDX-License-Identifier: Apache-2.0
# psm_softmax (Lanes = 2 and 4), psm_iexp and psm_divider against softmax_i16(), iexp_q10()
# and C++ unsigned division.
set(PASSIM_SOFTMAX_RTL
  ${PASSIM_RTL_DIR}/common/psm_iexp_pkg.sv
  ${PASSIM_RTL_DIR}/common/psm_iexp.sv
  ${PASSIM_RTL_DIR}/common/psm_divider.sv
  ${PASSIM_RTL_DIR}/common/psm_row_tail.sv
  ${PASSIM_RTL_DIR}/common/psm_row_walk.sv
  ${PASSIM_RTL_DIR}/common/psm_row_walk_one.sv
  ${PASSIM_RTL_DIR}/softmax/psm_softmax.sv)

passim_verilated_model(vpsm_softmax_l2 TOP psm_softmax PREFIX Vpsm_softmax_l2
  SOURCES ${PASSIM_SOFTMAX_RTL} PARAMS Lanes=2)
passim_verilated_model(vpsm_softmax_l4 TOP psm_softmax PREFIX Vpsm_softmax_l4
  SOURCES ${PASSIM_SOFTMAX_RTL} PARAMS Lanes=4)
# psm_iexp is shared with other vector units (SiLU): define its model once.
if(NOT TARGET vpsm_iexp)
  passim_verilated_model(vpsm_iexp TOP psm_iexp PREFIX Vpsm_iexp
    SOURCES ${PASSIM_RTL_DIR}/common/psm_iexp_pkg.sv ${PASSIM_RTL_DIR}/common/psm_iexp.sv)
endif()
passim_verilated_model(vpsm_divider64 TOP psm_divider PREFIX Vpsm_divider
  SOURCES ${PASSIM_RTL_DIR}/common/psm_divider.sv PARAMS Width=64)

# Verilator headers are SYSTEM includes for the testbench (they do not build
# under -Wconversion -Werror). TODO: move into passim_verilated_model() in cmake/verilate.cmake.
foreach(model vpsm_softmax_l2 vpsm_softmax_l4 vpsm_iexp vpsm_divider64)
  get_target_property(model_includes ${model} INTERFACE_INCLUDE_DIRECTORIES)
  set_property(TARGET ${model} APPEND PROPERTY
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${model_includes})
endforeach()

passim_sim_test(softmax_rtl_test MODEL vpsm_softmax_l2 vpsm_softmax_l4 vpsm_iexp vpsm_divider64
  SOURCES softmax_rtl_test.cpp)

# Synthesis as a test (default parameters, Lanes = 2): Yosys must elaborate and map the unit, and
# `check -assert` fails on undriven wires, multiple drivers or combinational loops.
if(YOSYS)
  string(REPLACE ";" " " softmax_rtl "${PASSIM_SOFTMAX_RTL}")
  add_test(NAME softmax_synth
    COMMAND ${YOSYS} -q -p "read_verilog -sv -I${PASSIM_RTL_INCLUDE_DIR} ${softmax_rtl}; \
synth -top psm_softmax; check -assert")
  set_tests_properties(softmax_synth PROPERTIES LABELS sim TIMEOUT 600)
endif()
