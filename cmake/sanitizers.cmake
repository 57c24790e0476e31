# SPDX-License-Identifier: Apache-2.0
# PASSIM_SANITIZE=ON builds everything with ASan + UBSan; any UB report aborts the test.
# The options are directory-wide, so they reach every target: the runtime, sim/, the Verilator
# runtime and the sources verilate() generates for each model, and the testbenches. Debian's
# libsystemc.so stays uninstrumented (tests/README.md, "Under the sanitizers").
if(PASSIM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
