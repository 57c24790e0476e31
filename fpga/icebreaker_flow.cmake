# SPDX-License-Identifier: Apache-2.0
# iCEBreaker (iCE40 UP5K-SG48) flow, run as a CMake script:
#   cmake -DYOSYS=... -DNEXTPNR=... [-DICEPACK=...] -DTOP=<module> -DSOURCES="a.sv;b.sv"
#         [-DCHPARAM="-set ArrayRows 2 ..."] [-DPCF=board.pcf] -DOUT_DIR=<dir> [-DFREQ=12]
#         [-DPACK_ONLY=ON] -P icebreaker_flow.cmake
# Steps: Yosys `synth_ice40 -dsp` (FPGA defines: PSM_NO_CLOCK_GATING), nextpnr-ice40 place and
# route at FREQ MHz (it fails on over-use of any resource and on a missed FREQ), icepack
# bitstream. PACK_ONLY stops after nextpnr's packer: resource counts for a design without a
# board top. Writes <OUT_DIR>/<TOP>_yosys_stat.txt, <TOP>_nextpnr.json (utilisation, Fmax),
# <TOP>_nextpnr.log and <TOP>.bin, and prints a utilisation and Fmax summary.
foreach(var YOSYS NEXTPNR TOP SOURCES OUT_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "icebreaker_flow: ${var} is not set")
  endif()
endforeach()
if(NOT DEFINED FREQ)
  set(FREQ 12)
endif()
foreach(tool YOSYS NEXTPNR)
  if(NOT EXISTS "${${tool}}")
    message(FATAL_ERROR "icebreaker_flow: ${tool} = '${${tool}}': no such program (give its full path)")
  endif()
endforeach()
if(DEFINED ICEPACK AND NOT ICEPACK STREQUAL "" AND NOT EXISTS "${ICEPACK}")
  message(FATAL_ERROR "icebreaker_flow: ICEPACK = '${ICEPACK}': no such program (give its full path)")
endif()
if(NOT PACK_ONLY AND (NOT DEFINED PCF OR NOT EXISTS "${PCF}" OR IS_DIRECTORY "${PCF}"))
  message(FATAL_ERROR "icebreaker_flow: PCF = '${PCF}': no such file (a pin constraints file "
    "is needed to place and route; PACK_ONLY=ON packs without one)")
endif()
file(MAKE_DIRECTORY ${OUT_DIR})
set(prefix ${OUT_DIR}/${TOP})
# Nothing from an earlier run may be mistaken for this run's results.
file(REMOVE ${prefix}.json ${prefix}_yosys_stat.txt ${prefix}_nextpnr.json ${prefix}_nextpnr.log
  ${prefix}.asc ${prefix}.bin)

string(REPLACE ";" " " sources "${SOURCES}")
# The RTL's include directory (rtl/common/psm_vector_port.svh), as in cmake/verilate.cmake.
set(rtl_include ${CMAKE_CURRENT_LIST_DIR}/../rtl/common)
set(chparam "")
if(DEFINED CHPARAM AND NOT CHPARAM STREQUAL "")
  set(chparam "chparam ${CHPARAM} ${TOP}; ")
endif()
execute_process(
  COMMAND ${YOSYS} -q -l ${prefix}_yosys.log -p
    "read_verilog -sv -DPSM_NO_CLOCK_GATING -I${rtl_include} ${sources}; ${chparam}\
synth_ice40 -dsp -top ${TOP} -json ${prefix}.json; tee -q -o ${prefix}_yosys_stat.txt stat"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "icebreaker_flow: Yosys failed on ${TOP} (exit ${rc}); see ${prefix}_yosys.log")
endif()

set(pnr_args --up5k --package sg48 --json ${prefix}.json --freq ${FREQ}
  --report ${prefix}_nextpnr.json -l ${prefix}_nextpnr.log -q)
if(PACK_ONLY)
  list(APPEND pnr_args --pack-only --pcf-allow-unconstrained)
else()
  list(APPEND pnr_args --pcf ${PCF} --asc ${prefix}.asc)
endif()
execute_process(COMMAND ${NEXTPNR} ${pnr_args} RESULT_VARIABLE pnr_rc)

# Utilisation (and Fmax after routing) from nextpnr's JSON report, when it got that far.
if(EXISTS ${prefix}_nextpnr.json)
  file(READ ${prefix}_nextpnr.json report)
  set(over "")
  foreach(bel ICESTORM_LC ICESTORM_DSP ICESTORM_RAM ICESTORM_SPRAM SB_IO SB_GB)
    string(JSON used ERROR_VARIABLE err GET "${report}" utilization ${bel} used)
    string(JSON avail ERROR_VARIABLE err GET "${report}" utilization ${bel} available)
    if(NOT err)
      message(STATUS "${TOP}: ${bel} ${used} / ${avail}")
      # Without a board top every port is a pin: I/O counts only in a placed design.
      if(used GREATER avail AND NOT (PACK_ONLY AND bel STREQUAL "SB_IO"))
        list(APPEND over "${bel} ${used} > ${avail}")
      endif()
    endif()
  endforeach()
  if(over)
    string(REPLACE ";" ", " over "${over}")
    message(STATUS "${TOP}: does not fit the UP5K: ${over}")
  elseif(PACK_ONLY)
    message(STATUS "${TOP}: packed within the UP5K's logic cells, DSPs and RAMs")
  endif()
  string(JSON nclk ERROR_VARIABLE err LENGTH "${report}" fmax)
  if(NOT err AND nclk GREATER 0)
    math(EXPR last "${nclk} - 1")
    foreach(i RANGE ${last})
      string(JSON clk MEMBER "${report}" fmax ${i})
      string(JSON achieved GET "${report}" fmax ${clk} achieved)
      string(REGEX REPLACE "^([0-9]+)(\\.[0-9])?.*$" "\\1\\2" achieved "${achieved}")
      message(STATUS "${TOP}: Fmax ${achieved} MHz (target ${FREQ} MHz)")
    endforeach()
  endif()
endif()
if(NOT pnr_rc EQUAL 0)
  set(errors "")
  if(EXISTS ${prefix}_nextpnr.log)
    file(STRINGS ${prefix}_nextpnr.log errors REGEX "ERROR")
  endif()
  message(FATAL_ERROR "icebreaker_flow: nextpnr-ice40 failed on ${TOP} (exit ${pnr_rc}): "
    "${errors}; see ${prefix}_nextpnr.log")
endif()

if(NOT PACK_ONLY AND DEFINED ICEPACK AND NOT ICEPACK STREQUAL "")
  execute_process(COMMAND ${ICEPACK} ${prefix}.asc ${prefix}.bin RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "icebreaker_flow: icepack failed on ${TOP} (exit ${rc})")
  endif()
  file(SIZE ${prefix}.bin bin_size)
  message(STATUS "${TOP}: bitstream ${prefix}.bin (${bin_size} bytes)")
endif()
