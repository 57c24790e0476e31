# SPDX-License-Identifier: Apache-2.0
# passim_warnings(<target>): the project's warning set (-Werror with PASSIM_WERROR=ON).
# passim_test_code(<target>): a test executable's own code builds at -O1 in Release. It is glue
# around the runtime and the Verilated models (which keep -O3); -O1 halves its compile time.
function(passim_test_code target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O1>)
endfunction()

function(passim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wconversion -Wshadow)
  if(PASSIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
