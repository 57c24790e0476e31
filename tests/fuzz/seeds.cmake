# SPDX-License-Identifier: Apache-2.0
# passim_fuzz_seeds (seeds.cpp), the seed writer of the fuzz targets: built by the `fuzz` preset
# (tests/fuzz/CMakeLists.txt) and by the normal test build, whose fuzz smoke test uses it.
if(NOT TARGET passim_fuzz_seeds)
  add_executable(passim_fuzz_seeds ${CMAKE_CURRENT_LIST_DIR}/seeds.cpp)
  target_link_libraries(passim_fuzz_seeds PRIVATE passim_runtime)
  target_include_directories(passim_fuzz_seeds PRIVATE ${PROJECT_SOURCE_DIR}/tests/io
                                                       ${PROJECT_SOURCE_DIR}/tests/common)
  passim_warnings(passim_fuzz_seeds)
  passim_test_code(passim_fuzz_seeds)
endif()
