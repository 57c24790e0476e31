# SPDX-License-Identifier: Apache-2.0
# spec/passim.json: the generated files must match it (and the checks must be able to fail),
# the generated SV package must pass Verilator -Wall and Yosys 0.23, and the generated C++
# header must agree with the runtime's constants.
find_package(Python3 3.8 REQUIRED COMPONENTS Interpreter)
set(PASSIM_GEN_SPEC ${PROJECT_SOURCE_DIR}/tools/gen_spec.py)
set(PASSIM_PKG_SV ${PASSIM_RTL_DIR}/pkg/psm_pkg.sv)
set(PASSIM_PKG_CHECK_SV ${CMAKE_CURRENT_BINARY_DIR}/spec/psm_pkg_check.sv)

# Drift: regenerate in memory and diff against the committed files.
add_test(NAME spec_generated_up_to_date
         COMMAND ${Python3_EXECUTABLE} ${PASSIM_GEN_SPEC} --check)
# The checks can fail: broken copies of the spec and hand-edited outputs in a temp dir.
add_test(NAME spec_generator_selftest
         COMMAND ${Python3_EXECUTABLE} ${PASSIM_GEN_SPEC} --selftest)
set_tests_properties(spec_generated_up_to_date spec_generator_selftest
                     PROPERTIES LABELS runtime)

# The C++ header: constants equal the runtime's, kTiny fits 8 DSPs, field helpers work.
passim_add_test(passim_spec_tests LABEL runtime SOURCES ${CMAKE_CURRENT_LIST_DIR}/spec_test.cpp)

# Lint. A package alone has no top module, so name it; psm_pkg_check (written by the
# generator) uses every struct, enum and field localparam like a unit would.
find_program(PASSIM_VERILATOR verilator HINTS $ENV{VERILATOR_ROOT}/bin)
add_test(NAME spec_pkg_write_check_module
         COMMAND ${Python3_EXECUTABLE} ${PASSIM_GEN_SPEC} --sv-check ${PASSIM_PKG_CHECK_SV})
set_tests_properties(spec_pkg_write_check_module PROPERTIES
                     LABELS sim FIXTURES_SETUP spec_pkg_check)
add_test(NAME spec_pkg_lint_verilator
         COMMAND ${PASSIM_VERILATOR} --lint-only -Wall --top-module psm_pkg ${PROJECT_SOURCE_DIR}/rtl/lint/passim.vlt ${PASSIM_PKG_SV})
add_test(NAME spec_pkg_lint_verilator_user
         COMMAND ${PASSIM_VERILATOR} --lint-only -Wall ${PROJECT_SOURCE_DIR}/rtl/lint/passim.vlt ${PASSIM_PKG_SV} ${PASSIM_PKG_CHECK_SV})
set_tests_properties(spec_pkg_lint_verilator_user PROPERTIES FIXTURES_REQUIRED spec_pkg_check)
set_tests_properties(spec_pkg_lint_verilator spec_pkg_lint_verilator_user PROPERTIES LABELS sim)

if(YOSYS)
  add_test(NAME spec_pkg_yosys
           COMMAND ${YOSYS} -q -p "read_verilog -sv ${PASSIM_PKG_SV}")
  # Every packed struct field sits where its _LSB/_WIDTH localparams say (a SAT proof).
  add_test(NAME spec_pkg_yosys_layout
           COMMAND ${YOSYS} -q -p "read_verilog -sv ${PASSIM_PKG_SV} ${PASSIM_PKG_CHECK_SV}; \
prep -top psm_pkg_check; sat -verify -prove mismatch_o 0")
  set_tests_properties(spec_pkg_yosys_layout PROPERTIES FIXTURES_REQUIRED spec_pkg_check)
  set_tests_properties(spec_pkg_yosys spec_pkg_yosys_layout PROPERTIES LABELS sim)
else()
  message(STATUS "yosys not found: skipping the spec_pkg_yosys tests")
endif()
