// SPDX-License-Identifier: Apache-2.0
/// \file Co-simulation of one generated program: the same DRAM image and program on the
/// reference `CpuDevice` and on a device under test, then every observable compared: the DRAM
/// bytes, the counters CpuDevice models (instret, passes_<class>, saturated), the hardware's
/// trace records against the program, and for an invalid program the error code and index.
/// Plain C++ (no GoogleTest), so that tests and the campaign tool share it.
#pragma once

#include <cstdint>
#include <string>

#include "passim/device/device.hpp"
#include "program_gen.hpp"

namespace passim::gen {

/// The outcome of one program on both devices.
struct CaseResult {
  std::string mismatch;     ///< the first difference found; empty when the devices agree
  std::uint64_t retired = 0;  ///< instructions retired (instret) in a clean run, else 0
  bool errored = false;     ///< both devices stopped with the same DeviceError
  [[nodiscard]] bool ok() const noexcept { return mismatch.empty(); }
};

/// Writes `c.image` at `c.write_addr` on both devices, runs `c.len` instructions from
/// `c.prog_addr` on each, and compares. Both devices must have exactly `compare_bytes` of
/// DRAM (the bus-error cases depend on its end) holding the same bytes before the call; a
/// clean run leaves them equal again. A valid case must run cleanly on both; an invalid one
/// must raise DeviceError(c.expected, c.expected_index) on both. Any other exception is a
/// mismatch, reported with its message. After an invalid case the devices' memories may
/// differ (the hardware aborts the units mid-instruction): resynchronise before comparing
/// memories again.
[[nodiscard]] CaseResult run_case(Device& ref, Device& dut, const GenCase& c,
                                  std::uint64_t compare_bytes);

/// Checks `dut`'s trace records and counters of a clean run of `prog` (on a `cfg` device)
/// against the program and `ref`'s counters; returns the first problem or "".
[[nodiscard]] std::string check_counters(const std::vector<hw::Instr>& prog, const RunStats& ref,
                                         const RunStats& dut, const hw::HwConfig& cfg);

/// The program as text, one instruction a line: index, opcode, class and the four 32-bit words
/// in hex (word 0 first), for the report of a mismatch.
[[nodiscard]] std::string listing(const std::vector<hw::Instr>& prog);

}  // namespace passim::gen
