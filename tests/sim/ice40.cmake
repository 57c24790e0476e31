# SPDX-License-Identifier: Apache-2.0
# iCE40 netlist tests: a unit mapped by Yosys's `synth_ice40 -dsp -flatten` (the netlist a board
# build uses: multipliers on SB_MAC16, memories on SB_RAM40_4K, logic on SB_LUT4/SB_CARRY/SB_DFF*)
# runs the unit's own testbench, simulated by Verilator together with the iCE40 cell models of
# the same Yosys installation (share/yosys/ice40/cells_sim.v). The model keeps the RTL model's
# class name, so the testbench source is unchanged; the test binary links the netlist in place
# of that RTL model. Included from tests/sim/CMakeLists.txt after the units' own files.
#
# Yosys writes multi-bit wires whose bits are driven and read by different cells (an SB_MAC16
# output feeding the next one's C port, say). Verilator 5.006 schedules each such wire as one
# signal and sees combinational loops that are not there (UNOPTFLAT); it then stops with
# "Settle region did not converge" (psm_silu, psm_softmax) or leaves bits stale (psm_eltwise,
# psm_rmsnorm, psm_layernorm fail their tests). Yosys `splitnets` (one wire per bit, ports
# kept as vectors) removes the false loops, and all of them pass. -fno-dfg: Verilator's DFG
# pass mis-simulates some Yosys netlists too (tests/sim/synth.cmake).
#
# Cost: nine netlists, synthesised once at the first configure (verilate() reads its sources
# then) and compiled at -O0, a large share of the suite's build. -DPASSIM_ICE40_TESTS=OFF
# leaves them out.
option(PASSIM_ICE40_TESTS "Build and run the iCE40 netlist tests (needs Yosys)" ON)
if(NOT YOSYS OR NOT PASSIM_ICE40_TESTS)
  return()
endif()

# The cell models of the Yosys that synthesises (share/yosys next to its bin directory); set
# PASSIM_ICE40_CELLS_SIM to point elsewhere.
get_filename_component(passim_yosys_bin_dir ${YOSYS} DIRECTORY)
find_file(PASSIM_ICE40_CELLS_SIM ice40/cells_sim.v
  HINTS ${passim_yosys_bin_dir}/../share/yosys NO_DEFAULT_PATH)
if(NOT PASSIM_ICE40_CELLS_SIM)
  message(STATUS "Yosys iCE40 cell models (share/yosys/ice40/cells_sim.v) not found: "
                 "skipping the iCE40 netlist tests")
  return()
endif()

# Verilator arguments for a Yosys iCE40 netlist. NO_ICE40_DEFAULT_ASSIGNMENTS: the cell models
# give some ports default values for instances that leave them open (a netlist connects every
# port), a form Verilator 5.006 rejects. Verilator elaborates only the cells the netlist uses.
set(PASSIM_ICE40_VERILATOR_ARGS -fno-dfg -Wno-fatal -Wno-lint -Wno-style
  -x-assign fast -x-initial fast -DNO_ICE40_DEFAULT_ASSIGNMENTS)

# passim_ice40_netlist(<target> TOP <module> PREFIX <class> SOURCES <sv...> [CHPARAM <args>])
# Synthesises <module> from SOURCES (Yosys `chparam` arguments in CHPARAM, e.g.
# "-set Lanes 2") with `synth_ice40 -dsp -flatten`, then `splitnets`, into <target>.v, and
# Verilates it with the cell models into the static library <target> (model class <class>).
# The first configure synthesises once, since verilate() reads its sources at configure time;
# later builds re-synthesise when an RTL source or this file changes.
function(passim_ice40_netlist target)
  cmake_parse_arguments(N "" "TOP;PREFIX;CHPARAM" "SOURCES" ${ARGN})
  set(netlist ${CMAKE_CURRENT_BINARY_DIR}/${target}.v)
  string(REPLACE ";" " " rtl "${N_SOURCES}")
  set(script "read_verilog -sv -I${PASSIM_RTL_INCLUDE_DIR} ${rtl}")
  if(N_CHPARAM)
    string(APPEND script "; chparam ${N_CHPARAM} ${N_TOP}")
  endif()
  string(APPEND script "; synth_ice40 -dsp -flatten -top ${N_TOP}; splitnets")
  string(APPEND script "; write_verilog -noattr ${netlist}")
  passim_yosys_netlist(${netlist} SCRIPT "${script}"
    DEPENDS ${N_SOURCES} ${PASSIM_RTL_INCLUDE_DIR}/psm_vector_port.svh
      ${CMAKE_CURRENT_FUNCTION_LIST_FILE}
    COMMENT "Synthesising ${N_TOP} for iCE40 with Yosys (${target})")
  # Gate-level C++ is large and only tests run it: compiled at -O0.
  add_library(${target} STATIC)
  verilate(${target}
    SOURCES ${netlist} ${PASSIM_ICE40_CELLS_SIM}
    TOP_MODULE ${N_TOP}
    PREFIX ${N_PREFIX}
    VERILATOR_ARGS ${PASSIM_ICE40_VERILATOR_ARGS}
    OPT_SLOW -O0 OPT_FAST -O0)
  passim_share_verilated_runtime(${target})
  target_compile_options(${target} PRIVATE -w)
  get_target_property(model_includes ${target} INTERFACE_INCLUDE_DIRECTORIES)
  set_property(TARGET ${target} APPEND PROPERTY
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${model_includes})
endfunction()

# passim_ice40_netlist_test(<name> NETLIST <lib> [MODELS <libs...>] SOURCES <test.cpp>
#                           FILTER <gtest filter>)
# The unit's testbench against the netlist library NETLIST (plus the RTL models it also uses,
# MODELS); the tests FILTER selects become ctest tests Ice40.<suite>.<test>. `ctest -R Ice40`
# runs every iCE40 netlist test (the matmul unit's are MatmulIce40Netlist2x4.*).
function(passim_ice40_netlist_test name)
  cmake_parse_arguments(T "" "NETLIST;FILTER" "MODELS;SOURCES" ${ARGN})
  passim_sim_test(${name} MODEL ${T_NETLIST} ${T_MODELS} SOURCES ${T_SOURCES}
    TEST_PREFIX Ice40. FILTER ${T_FILTER})
endfunction()

set(passim_ice40_tests "")

# The tiny (2x4) psm_matmul at the depths of its generic netlist test (tests/sim/synth.cmake).
if(COMMAND passim_matmul_test)
  passim_ice40_netlist(psm_matmul_tiny_ice40 TOP psm_matmul PREFIX Vpsm_matmul_tiny_ice40
    SOURCES ${PASSIM_MATMUL_RTL} CHPARAM "${PASSIM_MATMUL_TINY_PARAMS}")
  passim_matmul_test(passim_matmul_ice40_tests MODEL psm_matmul_tiny_ice40
    PREFIX Vpsm_matmul_tiny_ice40 SUITE MatmulIce40Netlist2x4
    CONFIG ${PASSIM_MATMUL_TINY_CONFIG})
  list(APPEND passim_ice40_tests passim_matmul_ice40_tests)
endif()

# passim_ice40_unit(<unit> SOURCES <sv...> MODELS <libs...> FILTER <gtest filter>)
# psm_<unit> with Lanes = 2 as netlist psm_<unit>_l2_ice40 (class Vpsm_<unit>_l2, the RTL
# model's), tested by tests/sim/<unit>_rtl_test.cpp as <unit>_ice40_test.
function(passim_ice40_unit unit)
  cmake_parse_arguments(U "" "FILTER" "SOURCES;MODELS" ${ARGN})
  passim_ice40_netlist(psm_${unit}_l2_ice40 TOP psm_${unit} PREFIX Vpsm_${unit}_l2
    SOURCES ${U_SOURCES} CHPARAM "-set Lanes 2")
  passim_ice40_netlist_test(${unit}_ice40_test NETLIST psm_${unit}_l2_ice40 MODELS ${U_MODELS}
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${unit}_rtl_test.cpp FILTER ${U_FILTER})
  set(passim_ice40_tests ${passim_ice40_tests} ${unit}_ice40_test PARENT_SCOPE)
endfunction()

# Single-pass vector units (vector.cmake, gelu.cmake) and the multi-pass ones (softmax.cmake,
# rmsnorm.cmake, layernorm.cmake). The exhaustive int16 sweeps are left out: they take minutes
# at gate level.
foreach(unit eltwise attn rope)
  string(TOUPPER ${unit} UNIT)
  passim_ice40_unit(${unit} SOURCES ${PASSIM_${UNIT}_RTL} MODELS vpsm_${unit}_l3
    FILTER "*Lanes2*")
endforeach()
passim_ice40_unit(silu SOURCES ${PASSIM_SILU_RTL} MODELS vpsm_silu_l3
  FILTER "*Lanes2*:-*EveryInt16Value*")
passim_ice40_unit(gelu SOURCES ${PASSIM_GELU_RTL} MODELS vpsm_gelu_l4 vpsm_gelu_phi
  FILTER "GeluRtl/Lanes2*")
passim_ice40_unit(softmax SOURCES ${PASSIM_SOFTMAX_RTL}
  MODELS vpsm_softmax_l4 vpsm_iexp vpsm_divider64 FILTER "SoftmaxRtl/Lanes2*")
passim_ice40_unit(rmsnorm SOURCES ${PASSIM_RMSNORM_RTL} MODELS vpsm_rsqrt vpsm_isqrt
  FILTER "RmsNormRtl*")
passim_ice40_unit(layernorm SOURCES ${PASSIM_LAYERNORM_RTL} MODELS vpsm_layernorm_l4
  FILTER "*Lanes2*:-*EveryInt16Value*")
# BATCHNORM runs on the same netlist (psm_layernorm's mode_i = 1).
passim_ice40_netlist_test(batchnorm_ice40_test NETLIST psm_layernorm_l2_ice40
  MODELS vpsm_layernorm_l4 SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/batchnorm_rtl_test.cpp
  FILTER "*Lanes2*:-*EveryInt16Value*")
list(APPEND passim_ice40_tests batchnorm_ice40_test)

# `cmake --build --preset release --target passim_ice40_tests` builds every netlist test.
add_custom_target(passim_ice40_tests DEPENDS ${passim_ice40_tests})
