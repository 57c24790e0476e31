# SPDX-License-Identifier: Apache-2.0
# The ISA additions for GPT-style models on the whole accelerator (rtl/top/psm_accel.sv, tiny
# and small, stepped by LoopDevice) against CpuDevice: accel_gpt_rtl_test (MATMUL biases,
# DMA_STORE requant, LAYERNORM, BATCHNORM, GELU). Included from tests/sim/CMakeLists.txt after
# top.cmake (passim_top_test).
if(NOT COMMAND passim_top_test OR NOT TARGET passim_accel_small)
  return()
endif()

passim_top_test(accel_gpt_rtl_test LABELS sim
                SOURCES ${CMAKE_CURRENT_LIST_DIR}/accel_gpt_rtl_test.cpp)
target_link_libraries(accel_gpt_rtl_test PRIVATE passim_accel_small)
