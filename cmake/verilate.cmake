# SPDX-License-Identifier: Apache-2.0
# passim_verilated_model(<target> TOP <module> PREFIX <class> SOURCES <sv...>
#                        [PARAMS Name=Value...] [ARGS <verilator args...>] [NO_ASSERT])
# Verilates one RTL top ONCE into a static library; tests, benchmarks and tools link it.
# Assertions are compiled in (--assert) unless NO_ASSERT is given.
# PASSIM_VERILATOR_EXTRA_ARGS (cache list) adds arguments to every model, e.g. -fno-inline to
# profile per module. Every build is a lint gate: -Wall with the waivers in rtl/lint/passim.vlt, warnings fatal.
# Build cost: the code Verilator files as slow (construction, initial blocks, the first settle;
# it runs once) is compiled at -O1; the per-cycle code keeps the build type's flags unless the
# calling directory sets PASSIM_MODEL_OPT_FAST (tests/sim does, for the unit models).
# PASSIM_RTL_INCLUDE_DIR: the RTL's include directory (rtl/common: psm_vector_port.svh, the vector
# units' port groups), given to every Verilator run here and to every Yosys read_verilog (-I).
set(PASSIM_RTL_INCLUDE_DIR ${PROJECT_SOURCE_DIR}/rtl/common)
function(passim_verilated_model target)
  cmake_parse_arguments(V "NO_ASSERT" "TOP;PREFIX" "SOURCES;PARAMS;ARGS" ${ARGN})
  set(gparams "")
  foreach(p IN LISTS V_PARAMS)
    list(APPEND gparams "-G${p}")
  endforeach()
  set(assert_arg --assert)
  if(V_NO_ASSERT)
    set(assert_arg "")
  endif()
  set(opt_fast "")
  if(PASSIM_MODEL_OPT_FAST)
    set(opt_fast OPT_FAST ${PASSIM_MODEL_OPT_FAST})
  endif()
  add_library(${target} STATIC)
  verilate(${target}
    SOURCES ${PROJECT_SOURCE_DIR}/rtl/lint/passim.vlt ${V_SOURCES}
    TOP_MODULE ${V_TOP}
    PREFIX ${V_PREFIX}
    VERILATOR_ARGS -Wall ${assert_arg} -x-assign fast -x-initial fast -I${PASSIM_RTL_INCLUDE_DIR}
                   ${gparams} ${V_ARGS}
                   ${PASSIM_VERILATOR_EXTRA_ARGS}
    OPT_SLOW -O1 ${opt_fast})
  passim_share_verilated_runtime(${target})
  # Verilated code is generated: no project warnings on it, and its headers are SYSTEM
  # includes for the testbenches (they do not build under -Wconversion -Werror).
  target_compile_options(${target} PRIVATE -w)
  get_target_property(model_includes ${target} INTERFACE_INCLUDE_DIRECTORIES)
  if(model_includes)
    set_property(TARGET ${target} APPEND PROPERTY
      INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${model_includes})
  endif()
endfunction()

# passim_verilated_runtime(): the Verilator runtime (verilated.cpp, verilated_threads.cpp) as
# one static library. verilate() compiles it into every model's library, once per model (about
# 7 s each, over 40 models in a full build); the models link this one copy instead
# (passim_share_verilated_runtime). Neither file reads a model's VM_* macros.
function(passim_verilated_runtime)
  add_library(passim_verilated_runtime STATIC ${VERILATOR_ROOT}/include/verilated.cpp
    ${VERILATOR_ROOT}/include/verilated_threads.cpp)
  target_include_directories(passim_verilated_runtime SYSTEM PUBLIC
    ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
  target_compile_options(passim_verilated_runtime PRIVATE -w)
  target_link_libraries(passim_verilated_runtime PUBLIC Threads::Threads)
endfunction()

# passim_share_verilated_runtime(<target>): drops the runtime sources verilate() added to the
# model library <target> and links passim_verilated_runtime in their place.
function(passim_share_verilated_runtime target)
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources EXCLUDE REGEX "/include/verilated(_threads)?\\.cpp$")
  set_property(TARGET ${target} PROPERTY SOURCES ${sources})
  target_link_libraries(${target} PUBLIC passim_verilated_runtime)
endfunction()

# passim_sim_test(<name> MODEL <lib...> SOURCES <files...> [TEST_PREFIX <p>] [FILTER <f>]):
# a GoogleTest driving models; its tests become ctest tests <p><suite>.<test>, only those the
# gtest filter <f> selects when given.
function(passim_sim_test name)
  cmake_parse_arguments(T "" "TEST_PREFIX;FILTER" "MODEL;SOURCES" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_MODEL} passim_runtime GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/sim/common)
  passim_warnings(${name})
  passim_test_code(${name})
  set(discover_args "")
  if(T_TEST_PREFIX)
    list(APPEND discover_args TEST_PREFIX ${T_TEST_PREFIX})
  endif()
  if(T_FILTER)
    list(APPEND discover_args TEST_FILTER ${T_FILTER})
  endif()
  gtest_discover_tests(${name} ${discover_args} PROPERTIES LABELS sim DISCOVERY_TIMEOUT 120)
endfunction()

# passim_yosys_netlist(<netlist.v> SCRIPT <yosys commands> DEPENDS <files...> COMMENT <text>):
# a netlist that Yosys writes from SCRIPT (which must write <netlist.v>). verilate() reads its
# sources at configure time, so the first configure synthesises once; later builds
# re-synthesise when a file in DEPENDS changes.
function(passim_yosys_netlist netlist)
  # SCRIPT's commands are separated by semicolons, which CMake splits into list items.
  cmake_parse_arguments(Y "" "COMMENT" "SCRIPT;DEPENDS" ${ARGN})
  list(JOIN Y_SCRIPT ";" script)
  if(NOT EXISTS ${netlist})
    message(STATUS "${Y_COMMENT} (first configure)")
    execute_process(COMMAND ${YOSYS} -q -p "${script}" COMMAND_ERROR_IS_FATAL ANY)
  endif()
  if(NOT EXISTS ${netlist})
    message(FATAL_ERROR "Yosys did not write ${netlist}; the script must write it: ${script}")
  endif()
  add_custom_command(OUTPUT ${netlist}
    COMMAND ${YOSYS} -q -p "${script}"
    DEPENDS ${Y_DEPENDS}
    COMMENT "${Y_COMMENT}"
    VERBATIM)
endfunction()
