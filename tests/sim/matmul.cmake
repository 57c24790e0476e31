# SPDX-License-Identifier: Apache-2.0
# psm_matmul: Verilated in three configurations (tiny 2x4, 4x4, 3x5), each tested against
# passim::kernels::matmul_i8 + passim::requantize by tests/sim/matmul_rtl_test.cpp.
# Included from tests/sim/CMakeLists.txt (PASSIM_RTL_DIR is set there).

# RTL sources of the matmul unit, in dependency order (tests/sim/synth.cmake reuses them).
set(PASSIM_MATMUL_RTL
  ${PASSIM_RTL_DIR}/common/psm_requant.sv
  ${PASSIM_RTL_DIR}/matmul/psm_systolic_array.sv
  ${PASSIM_RTL_DIR}/matmul/psm_matmul.sv)

# passim_matmul_test(<test> MODEL <lib> PREFIX <class> SUITE <gtest suite>
#                    CONFIG <R> <C> <InDepth> <WgtDepth> <AccDepth> <OutDepth> <RqDepth>)
# Builds tests/sim/matmul_rtl_test.cpp against one Verilated psm_matmul (RTL or netlist).
function(passim_matmul_test name)
  cmake_parse_arguments(T "" "MODEL;PREFIX;SUITE" "CONFIG" ${ARGN})
  list(GET T_CONFIG 0 rows)
  list(GET T_CONFIG 1 cols)
  list(GET T_CONFIG 2 in_depth)
  list(GET T_CONFIG 3 wgt_depth)
  list(GET T_CONFIG 4 acc_depth)
  list(GET T_CONFIG 5 out_depth)
  list(GET T_CONFIG 6 rq_depth)
  passim_sim_test(${name} MODEL ${T_MODEL}
    SOURCES ${PROJECT_SOURCE_DIR}/tests/sim/matmul_rtl_test.cpp)
  # Verilator's runtime headers are not -Wconversion clean: include them as SYSTEM headers
  # (GCC then ignores the plain -I the model library exports for the same directories).
  target_include_directories(${name} SYSTEM PRIVATE
    ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
  target_compile_definitions(${name} PRIVATE
    PSM_MM_MODEL=${T_PREFIX} PSM_MM_HEADER="${T_PREFIX}.h" PSM_MM_SUITE=${T_SUITE}
    PSM_MM_ROWS=${rows} PSM_MM_COLS=${cols} PSM_MM_IN_DEPTH=${in_depth}
    PSM_MM_WGT_DEPTH=${wgt_depth} PSM_MM_ACC_DEPTH=${acc_depth}
    PSM_MM_OUT_DEPTH=${out_depth} PSM_MM_RQ_DEPTH=${rq_depth})
endfunction()

# The RTL configurations keep the module's default depths (InDepth 256, WgtDepth 256,
# AccDepth 64, OutDepth 256, RqDepth 64).
set(PASSIM_MATMUL_DEPTHS 256 256 64 256 64)

passim_verilated_model(psm_matmul_2x4 TOP psm_matmul PREFIX Vpsm_matmul_2x4
  SOURCES ${PASSIM_MATMUL_RTL}
  PARAMS ArrayRows=2 ArrayCols=4)
passim_matmul_test(passim_matmul_rtl_tests_2x4 MODEL psm_matmul_2x4 PREFIX Vpsm_matmul_2x4
  SUITE MatmulRtl2x4 CONFIG 2 4 ${PASSIM_MATMUL_DEPTHS})

passim_verilated_model(psm_matmul_4x4 TOP psm_matmul PREFIX Vpsm_matmul_4x4
  SOURCES ${PASSIM_MATMUL_RTL}
  PARAMS ArrayRows=4 ArrayCols=4)
passim_matmul_test(passim_matmul_rtl_tests_4x4 MODEL psm_matmul_4x4 PREFIX Vpsm_matmul_4x4
  SUITE MatmulRtl4x4 CONFIG 4 4 ${PASSIM_MATMUL_DEPTHS})

# Neither dimension a power of two: the tile address arithmetic and the requant parameter lanes
# (column c in lane c % 5, word c / 5, 13 words for RqDepth 64) on odd sizes.
passim_verilated_model(psm_matmul_3x5 TOP psm_matmul PREFIX Vpsm_matmul_3x5
  SOURCES ${PASSIM_MATMUL_RTL}
  PARAMS ArrayRows=3 ArrayCols=5)
passim_matmul_test(passim_matmul_rtl_tests_3x5 MODEL psm_matmul_3x5 PREFIX Vpsm_matmul_3x5
  SUITE MatmulRtl3x5 CONFIG 3 5 ${PASSIM_MATMUL_DEPTHS})

# RTL models are Verilated with --assert (the netlist has no assertions).
foreach(t passim_matmul_rtl_tests_2x4 passim_matmul_rtl_tests_4x4 passim_matmul_rtl_tests_3x5)
  target_compile_definitions(${t} PRIVATE PSM_MM_HAS_ASSERTIONS=1)
endforeach()

# psm_requant on its own (full int32 range, every shift), in the 2x4 executable only. The model
# may already exist if another unit's tests verilated it first.
if(NOT TARGET psm_requant_model)
  passim_verilated_model(psm_requant_model TOP psm_requant PREFIX Vpsm_requant
    SOURCES ${PASSIM_RTL_DIR}/common/psm_requant.sv)
endif()
target_link_libraries(passim_matmul_rtl_tests_2x4 PRIVATE psm_requant_model)
target_compile_definitions(passim_matmul_rtl_tests_2x4 PRIVATE PSM_MM_WITH_REQUANT_MODEL=1)

# `cmake --build --preset release --target passim_matmul_rtl_tests` builds all three.
add_custom_target(passim_matmul_rtl_tests
  DEPENDS passim_matmul_rtl_tests_2x4 passim_matmul_rtl_tests_4x4 passim_matmul_rtl_tests_3x5)
