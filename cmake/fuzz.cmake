# SPDX-License-Identifier: Apache-2.0
# PASSIM_BUILD_FUZZ=ON (the `fuzz` preset, clang): every object in the build carries libFuzzer's
# coverage instrumentation with ASan + UBSan, and any UB report aborts. Programs link the
# sanitizer runtimes; the fuzz targets (tests/fuzz) add libFuzzer itself (-fsanitize=fuzzer).
if(PASSIM_BUILD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "PASSIM_BUILD_FUZZ needs clang (libFuzzer), found "
                        "${CMAKE_CXX_COMPILER_ID}; use the `fuzz` preset (clang++-14)")
  endif()
  if(PASSIM_SANITIZE)
    message(FATAL_ERROR "PASSIM_BUILD_FUZZ builds with ASan + UBSan already: leave "
                        "PASSIM_SANITIZE off")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                      -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
