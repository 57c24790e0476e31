# SPDX-License-Identifier: Apache-2.0
# Synthesis checks of the tiny (2x4) psm_matmul: a ctest runs Yosys's generic synthesis with
# `check -assert`, so a synthesis failure is a test failure, and another counts the array's
# SB_MAC16 cells under `synth_ice40 -dsp`. The unit's testbench runs against its mapped iCE40
# netlist at the depths below (MatmulIce40Netlist2x4, tests/sim/ice40.cmake); that netlist test
# stands for post-synthesis behaviour, so the generic netlist is checked, not simulated.
# Skipped when Yosys is not installed (YOSYS comes from find_program in the top level).
if(NOT YOSYS OR NOT COMMAND passim_matmul_test)
  return()
endif()

# Small depths keep synthesis in seconds and the netlist small; the test reads the same
# numbers (CONFIG below) and skips the fixed shapes that do not fit.
set(PASSIM_MATMUL_TINY_CONFIG 2 4 64 64 8 32 16)  # R C InDepth WgtDepth AccDepth OutDepth RqDepth
set(PASSIM_MATMUL_TINY_PARAMS
  "-set ArrayRows 2 -set ArrayCols 4 -set InDepth 64 -set WgtDepth 64 -set AccDepth 8 \
-set OutDepth 32 -set RqDepth 16 -set DimWidth 8")

# Reads the RTL, fixes the parameters, synthesises to generic gates (flattened), then runs
# <tail> (a Yosys command list).
function(passim_matmul_tiny_yosys_script out_var tail)
  string(REPLACE ";" " " rtl "${PASSIM_MATMUL_RTL}")
  set(${out_var} "read_verilog -sv ${rtl}; chparam ${PASSIM_MATMUL_TINY_PARAMS} psm_matmul; \
synth -flatten -top psm_matmul; ${tail}" PARENT_SCOPE)
endfunction()

# Synthesis as a test: Yosys must elaborate and map the design, and `check -assert` fails on
# undriven wires, multiple drivers or combinational loops. Writes its own netlist and stats.
set(synth_dir ${CMAKE_CURRENT_BINARY_DIR}/synth_check)
file(MAKE_DIRECTORY ${synth_dir})
passim_matmul_tiny_yosys_script(passim_matmul_tiny_check
  "check -assert; tee -o ${synth_dir}/psm_matmul_tiny_stat.txt stat; \
write_verilog -noattr ${synth_dir}/psm_matmul_tiny_check.v")
add_test(NAME matmul_synth_tiny COMMAND ${YOSYS} -q -p "${passim_matmul_tiny_check}")
set_tests_properties(matmul_synth_tiny PROPERTIES LABELS sim TIMEOUT 600)

# The array alone under `synth_ice40 -dsp`: one SB_MAC16 per PE (an 8 x 8 product each), no
# more (a 32 x 32 product takes three) and no fewer (a PE lost to register packing).
add_test(NAME matmul_array_ice40_dsp_count
  COMMAND ${YOSYS} -q -p "read_verilog -sv ${PASSIM_RTL_DIR}/matmul/psm_systolic_array.sv; \
chparam -set ArrayRows 2 -set ArrayCols 4 psm_systolic_array; \
synth_ice40 -dsp -top psm_systolic_array; select -assert-count 8 t:SB_MAC16")
set_tests_properties(matmul_array_ice40_dsp_count PROPERTIES LABELS sim TIMEOUT 300)

# The tiny unit's iCE40 netlist test (MatmulIce40Netlist2x4) is in tests/sim/ice40.cmake.
