# SPDX-License-Identifier: Apache-2.0
# PASSIM_SANITIZE=ON builds everything with ASan + UBSan; any UB report aborts the test.
if(PASSIM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
