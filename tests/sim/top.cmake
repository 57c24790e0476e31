# SPDX-License-Identifier: Apache-2.0
# The whole accelerator (rtl/top/psm_accel.sv, tiny configuration from sim/):
#   dma_rtl_test     memory port, DMA and host registers on a plain loop with a random-latency
#                    memory (no SystemC), against CpuDevice
#   accel_rtl_test   directed programs through SimDevice (SystemC/TLM-2.0) against CpuDevice,
#                    counters, errors, the simulation watchdog, tracing
#   accel_model_test the compiled stories260K model on tiny and small: DeviceBackend on
#                    SimDevice == CpuBackend
#   gpt_model_rtl_test the project's LayerNorm and BatchNorm GPTs on tiny, the same way
#   resident_rtl_test resident and streamed weights (a random GPT on tiny, stories260K on base)
#                    against CpuBackend, weight-tile DMA only in the preload when resident
#   encoder_rtl_test   the random post-norm encoder without a mask on tiny, the same way
#   saturation_rtl_test the `saturated` counter and records of clamping units against CpuDevice
#   sim_device_test  SimDevice under AddressSanitizer: the main stack stays known to ASan
# SimDevice elaborates SystemC once per process; ctest runs every test case in its own process.
if(NOT TARGET passim_accel_tiny)
  return()
endif()

function(passim_top_test name)
  cmake_parse_arguments(T "" "LABELS" "SOURCES" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  # GoogleTest's main first: libsystemc.so has a main() of its own.
  target_link_libraries(${name} PRIVATE GTest::gtest_main passim_accel_tiny passim_app)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/sim/common
                                             ${PROJECT_SOURCE_DIR}/tests/common)
  target_compile_definitions(${name} PRIVATE PASSIM_DATA_DIR="${PASSIM_DATA}"
    PASSIM_MODELS_DIR="${PROJECT_SOURCE_DIR}/models")
  passim_warnings(${name})
  passim_test_code(${name})
  gtest_discover_tests(${name} PROPERTIES LABELS "${T_LABELS}" DISCOVERY_TIMEOUT 120
                       ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)
endfunction()

passim_top_test(dma_rtl_test LABELS sim SOURCES ${CMAKE_CURRENT_LIST_DIR}/dma_rtl_test.cpp)
passim_top_test(accel_rtl_test LABELS sim SOURCES ${CMAKE_CURRENT_LIST_DIR}/accel_rtl_test.cpp)
target_link_libraries(accel_rtl_test PRIVATE passim_accel_small  # the gated-clock recovery test
                      passim_accel_any)  # --trace-scope's units
# The FST test reads the waveform back with the FST reader Verilator ships (gtkwave/fstapi.h),
# linked through the tiny model's trace variant.
target_include_directories(accel_rtl_test SYSTEM PRIVATE ${VERILATOR_ROOT}/include)
passim_top_test(saturation_rtl_test LABELS sim
                SOURCES ${CMAKE_CURRENT_LIST_DIR}/saturation_rtl_test.cpp)
passim_top_test(sim_device_test LABELS sim SOURCES ${CMAKE_CURRENT_LIST_DIR}/sim_device_test.cpp)
passim_top_test(accel_model_test LABELS "sim;slow"
                SOURCES ${CMAKE_CURRENT_LIST_DIR}/accel_model_test.cpp)
target_link_libraries(accel_model_test PRIVATE passim_accel_small)
passim_top_test(gpt_model_rtl_test LABELS "sim;slow"
                SOURCES ${CMAKE_CURRENT_LIST_DIR}/gpt_model_rtl_test.cpp)
passim_top_test(resident_rtl_test LABELS sim
                SOURCES ${CMAKE_CURRENT_LIST_DIR}/resident_rtl_test.cpp)
target_link_libraries(resident_rtl_test PRIVATE passim_accel_base)
passim_top_test(encoder_rtl_test LABELS "sim;slow"
                SOURCES ${CMAKE_CURRENT_LIST_DIR}/encoder_rtl_test.cpp)

# The CLI end to end on the simulated accelerator (tiny): same text as the cpu backend, and a
# cycle report whose class totals sum to the total.
add_test(NAME cli_rtl_tiny
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_rtl_check.sh $<TARGET_FILE:passim> ${PASSIM_DATA}
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_rtl_tiny)
set_tests_properties(cli_rtl_tiny PROPERTIES LABELS "sim;e2e" SKIP_RETURN_CODE 77
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 600)
# The online Softmax (--softmax online) on tiny: cpu and rtl agree, 2 Softmax passes per row.
add_test(NAME cli_rtl_tiny_online
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_rtl_check.sh $<TARGET_FILE:passim> ${PASSIM_DATA}
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_rtl_tiny_online tiny online)
set_tests_properties(cli_rtl_tiny_online PROPERTIES LABELS "sim;e2e" SKIP_RETURN_CODE 77
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 600)
# The same on base (16x16, 16 lanes): its model is built for the CLI anyway.
add_test(NAME cli_rtl_base
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_rtl_check.sh $<TARGET_FILE:passim> ${PASSIM_DATA}
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_rtl_base base)
set_tests_properties(cli_rtl_base PROPERTIES LABELS "sim;e2e" SKIP_RETURN_CODE 77
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 600)
# --max-cycles stops a run: a clear error, and still the cycle tables and a partial report.
add_test(NAME cli_rtl_watchdog
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_watchdog_check.sh $<TARGET_FILE:passim>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_rtl_watchdog)
set_tests_properties(cli_rtl_watchdog PROPERTIES LABELS "sim;e2e"
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 600)
# Determinism: two identical runs write the same report bytes but for the wall-clock fields.
add_test(NAME cli_determinism
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_determinism_check.sh $<TARGET_FILE:passim>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_determinism)
set_tests_properties(cli_determinism PROPERTIES LABELS "sim;e2e"
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 600)
# `passim encode`: the random post-norm encoder through the CLI on tiny, cpu == rtl.
add_test(NAME cli_encode_tiny
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_encode_check.sh $<TARGET_FILE:passim>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_encode_tiny)
set_tests_properties(cli_encode_tiny PROPERTIES LABELS "sim;e2e"
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 600)
# The project's character GPTs (committed under models/, no ../shared needed) through the CLI
# on tiny: LayerNorm 3, BatchNorm 1, folded BatchNorm 0 norm passes in the report records.
add_test(NAME cli_rtl_gpt_tiny
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_rtl_gpt_check.sh $<TARGET_FILE:passim>
                 ${PROJECT_SOURCE_DIR}/models ${CMAKE_CURRENT_BINARY_DIR}/cli_rtl_gpt_tiny)
set_tests_properties(cli_rtl_gpt_tiny PROPERTIES LABELS "sim;e2e"
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 600)
# `passim report show` and `passim report compare` on rtl reports of the committed GPTs (tiny,
# small): tables, per-layer deltas, refusal of two models, the --threshold exit codes.
add_test(NAME cli_report
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_report_check.sh $<TARGET_FILE:passim>
                 ${PROJECT_SOURCE_DIR}/models ${CMAKE_CURRENT_BINARY_DIR}/cli_report)
set_tests_properties(cli_report PROPERTIES LABELS "sim;e2e"
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 600)

# --config beyond the named configurations: limits (exit 2), a config Verilated on first use
# into a cache of the test's own, == cpu bit for bit, the cache reused, a JSON config file.
add_test(NAME cli_config
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_config_check.sh $<TARGET_FILE:passim>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_config)
set_tests_properties(cli_config PROPERTIES LABELS "sim;e2e"
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 900)
# Ctrl-C (SIGINT) and SIGTERM during an rtl run: the waveform closed, a partial report, a word.
foreach(sig INT TERM)
  add_test(NAME cli_interrupt_${sig}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_interrupt_check.sh $<TARGET_FILE:passim>
                   ${CMAKE_CURRENT_BINARY_DIR}/cli_interrupt_${sig} ${sig})
  set_tests_properties(cli_interrupt_${sig} PROPERTIES LABELS "sim;e2e"
                       ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 600)
endforeach()
# --backend model through the CLI: the same cycle report as rtl, on tiny, small and a config
# Verilated on first use, for a decoder run and an encoder pass.
add_test(NAME cli_model
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_model_check.sh $<TARGET_FILE:passim>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_model)
set_tests_properties(cli_model PROPERTIES LABELS "sim;e2e"
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 900)
# --trace-scope and --trace-window through the CLI: the FST read back (fst_scopes) holds only
# the unit's signals, from the window's first cycle to its last.
add_executable(fst_scopes ${CMAKE_CURRENT_LIST_DIR}/fst_scopes.cpp)
target_link_libraries(fst_scopes PRIVATE passim_accel_tiny)  # the FST reader, as accel_rtl_test
target_include_directories(fst_scopes SYSTEM PRIVATE ${VERILATOR_ROOT}/include)
add_test(NAME cli_trace_scope
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_trace_scope_check.sh $<TARGET_FILE:passim>
                 $<TARGET_FILE:fst_scopes> ${CMAKE_CURRENT_BINARY_DIR}/cli_trace_scope)
set_tests_properties(cli_trace_scope PROPERTIES LABELS "sim;e2e"
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 900)
# `passim sweep`: four points through GNU parallel, `sweep collect`'s CSV, tools/plot.py's PNG
# and SVG files, bad grids.
add_test(NAME cli_sweep
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_sweep_check.sh $<TARGET_FILE:passim>
                 ${PROJECT_SOURCE_DIR}/tools/plot.py ${CMAKE_CURRENT_BINARY_DIR}/cli_sweep)
set_tests_properties(cli_sweep PROPERTIES LABELS "sim;e2e"
                     ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 TIMEOUT 600)

# Random co-simulation (tests/gen): seeded random valid and invalid programs on SimDevice
# (tiny) against CpuDevice. The campaign over tiny, small and base is cosim_campaign.sh.
passim_top_test(cosim_rtl_test LABELS sim SOURCES ${CMAKE_CURRENT_LIST_DIR}/cosim_rtl_test.cpp)
target_link_libraries(cosim_rtl_test PRIVATE passim_program_gen)
# passim_cosim: the campaign driver (--config tiny|small|base, --seed, --instructions, --invalid).
add_executable(passim_cosim ${CMAKE_CURRENT_LIST_DIR}/cosim_tool.cpp)
target_link_libraries(passim_cosim PRIVATE passim_app passim_program_gen passim_sim
                      passim_accel_tiny passim_accel_small passim_accel_base CLI11::CLI11)
passim_warnings(passim_cosim)
set_target_properties(passim_cosim PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# The analytical cycle model (ModelDevice) against the RTL: every instruction's record and
# every counter equal, on random programs and the shipped models' programs (tiny and small;
# base in model_device_base_test).
passim_top_test(model_device_test LABELS sim
                SOURCES ${CMAKE_CURRENT_LIST_DIR}/model_device_test.cpp)
target_link_libraries(model_device_test PRIVATE passim_accel_small passim_program_gen)
passim_top_test(model_device_base_test LABELS sim
                SOURCES ${CMAKE_CURRENT_LIST_DIR}/model_device_base_test.cpp)
target_link_libraries(model_device_base_test PRIVATE passim_accel_base passim_accel_small
                      passim_program_gen)
