# SPDX-License-Identifier: Apache-2.0
# The single-pass vector units psm_silu, psm_rope, psm_eltwise (ADD, MUL, EMBED) and psm_attn
# (ATTN_SCORE, ATTN_VALUE), each Verilated with Lanes = 2 (tiny) and Lanes = 3 (odd: a pair of
# RoPE values or a row stride that is not a power of two) and tested against passim::CpuDevice
# by tests/sim/<unit>_rtl_test.cpp. Included from tests/sim/CMakeLists.txt.

# RTL sources of each unit, package first, in dependency order.
set(PASSIM_VECTOR_PKG ${PASSIM_RTL_DIR}/pkg/psm_pkg.sv)
set(PASSIM_ROW_WALK_RTL ${PASSIM_RTL_DIR}/common/psm_row_tail.sv
  ${PASSIM_RTL_DIR}/common/psm_row_walk.sv)
set(PASSIM_SILU_RTL ${PASSIM_VECTOR_PKG} ${PASSIM_ROW_WALK_RTL}
  ${PASSIM_RTL_DIR}/common/psm_requant.sv
  ${PASSIM_RTL_DIR}/common/psm_iexp_pkg.sv
  ${PASSIM_RTL_DIR}/common/psm_iexp.sv
  ${PASSIM_RTL_DIR}/common/psm_divider.sv
  ${PASSIM_RTL_DIR}/common/psm_gated_act.sv
  ${PASSIM_RTL_DIR}/common/psm_gated_lane.sv
  ${PASSIM_RTL_DIR}/silu/psm_silu.sv)
set(PASSIM_ROPE_RTL ${PASSIM_VECTOR_PKG} ${PASSIM_ROW_WALK_RTL}
  ${PASSIM_RTL_DIR}/rope/psm_rope.sv)
set(PASSIM_ELTWISE_RTL ${PASSIM_VECTOR_PKG} ${PASSIM_ROW_WALK_RTL}
  ${PASSIM_RTL_DIR}/common/psm_requant.sv
  ${PASSIM_RTL_DIR}/eltwise/psm_eltwise.sv)
set(PASSIM_ATTN_RTL ${PASSIM_VECTOR_PKG} ${PASSIM_ROW_WALK_RTL}
  ${PASSIM_RTL_DIR}/common/psm_requant.sv
  ${PASSIM_RTL_DIR}/attn/psm_attn.sv)

set(passim_vector_tests "")
foreach(unit silu rope eltwise attn)
  string(TOUPPER ${unit} UNIT)
  set(models "")
  foreach(lanes 2 3)
    set(model vpsm_${unit}_l${lanes})
    passim_verilated_model(${model} TOP psm_${unit} PREFIX Vpsm_${unit}_l${lanes}
      SOURCES ${PASSIM_${UNIT}_RTL} PARAMS Lanes=${lanes})
    # Verilator headers are SYSTEM includes for the testbench (they do not build
    # under -Wconversion -Werror).
    get_target_property(model_includes ${model} INTERFACE_INCLUDE_DIRECTORIES)
    set_property(TARGET ${model} APPEND PROPERTY
      INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${model_includes})
    list(APPEND models ${model})
  endforeach()
  passim_sim_test(${unit}_rtl_test MODEL ${models} SOURCES ${unit}_rtl_test.cpp)
  list(APPEND passim_vector_tests ${unit}_rtl_test)

  # Synthesis as a test (default parameters, Lanes = 2): Yosys must elaborate and map the unit,
  # and `check -assert` fails on undriven wires, multiple drivers or combinational loops.
  if(YOSYS)
    string(REPLACE ";" " " rtl "${PASSIM_${UNIT}_RTL}")
    add_test(NAME ${unit}_synth
      COMMAND ${YOSYS} -q -p "read_verilog -sv -I${PASSIM_RTL_INCLUDE_DIR} ${rtl}; \
synth -top psm_${unit}; check -assert")
    set_tests_properties(${unit}_synth PROPERTIES LABELS sim TIMEOUT 600)
  endif()
endforeach()

# `cmake --build --preset release --target passim_vector_rtl_tests` builds the four tests.
add_custom_target(passim_vector_rtl_tests DEPENDS ${passim_vector_tests})
