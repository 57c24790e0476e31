# SPDX-License-Identifier: Apache-2.0
# psm_rmsnorm (Lanes = 2), psm_rsqrt and psm_isqrt against rmsnorm_i8() / rsqrt_requant() /
# isqrt_u64().
set(PASSIM_RSQRT_RTL
  ${PASSIM_RTL_DIR}/common/psm_isqrt.sv
  ${PASSIM_RTL_DIR}/common/psm_divider.sv
  ${PASSIM_RTL_DIR}/common/psm_rsqrt.sv)

set(PASSIM_RMSNORM_RTL ${PASSIM_RSQRT_RTL} ${PASSIM_RTL_DIR}/common/psm_row_tail.sv
  ${PASSIM_RTL_DIR}/common/psm_row_walk.sv ${PASSIM_RTL_DIR}/common/psm_row_walk_one.sv
  ${PASSIM_RTL_DIR}/rmsnorm/psm_rmsnorm.sv)

passim_verilated_model(vpsm_rmsnorm_l2 TOP psm_rmsnorm PREFIX Vpsm_rmsnorm_l2
  SOURCES ${PASSIM_RMSNORM_RTL} PARAMS Lanes=2)
passim_verilated_model(vpsm_rsqrt TOP psm_rsqrt PREFIX Vpsm_rsqrt SOURCES ${PASSIM_RSQRT_RTL})
if(NOT TARGET vpsm_isqrt)
  passim_verilated_model(vpsm_isqrt TOP psm_isqrt PREFIX Vpsm_isqrt
    SOURCES ${PASSIM_RTL_DIR}/common/psm_isqrt.sv)
endif()

# Verilator headers are SYSTEM includes for the testbench (they do not build
# under -Wconversion -Werror). TODO: move into passim_verilated_model() in cmake/verilate.cmake.
foreach(model vpsm_rmsnorm_l2 vpsm_rsqrt vpsm_isqrt)
  get_target_property(model_includes ${model} INTERFACE_INCLUDE_DIRECTORIES)
  set_property(TARGET ${model} APPEND PROPERTY
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${model_includes})
endforeach()

passim_sim_test(rmsnorm_rtl_test MODEL vpsm_rmsnorm_l2 vpsm_rsqrt vpsm_isqrt
  SOURCES rmsnorm_rtl_test.cpp)

# Synthesis as a test (default parameters, Lanes = 2): Yosys must elaborate and map the unit, and
# `check -assert` fails on undriven wires, multiple drivers or combinational loops.
if(YOSYS)
  string(REPLACE ";" " " rmsnorm_rtl "${PASSIM_RMSNORM_RTL}")
  add_test(NAME rmsnorm_synth
    COMMAND ${YOSYS} -q -p "read_verilog -sv -I${PASSIM_RTL_INCLUDE_DIR} ${rmsnorm_rtl}; \
synth -top psm_rmsnorm; check -assert")
  set_tests_properties(rmsnorm_synth PROPERTIES LABELS sim TIMEOUT 600)
endif()
