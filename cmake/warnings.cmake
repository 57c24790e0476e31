# SPDX-License-Identifier: Apache-2.0
# passim_warnings(<target>): the project's warning set (-Werror with PASSIM_WERROR=ON).
function(passim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wconversion -Wshadow)
  if(PASSIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
