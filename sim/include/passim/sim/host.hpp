// SPDX-License-Identifier: Apache-2.0
/// \file The host side of a run through the register interface (docs/isa.md "Execution
/// model"): what a driver does on any `MemPort`. SimDevice (SystemC) and LoopDevice (plain
/// loop) use it, and so can tests with their own memory models.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "passim/device/device.hpp"
#include "passim/sim/accel_model.hpp"

namespace passim::sim {

/// Writes PROG_ADDR, PROG_LEN and WATCHDOG, then CTRL.clear_counters | CTRL.start (counters
/// count this run only, as `RunStats` reports one run); drops any earlier trace records.
void start_program(AccelModel& m, MemPort& port, std::uint64_t prog_addr, std::uint32_t len,
                   std::uint32_t watchdog);

/// Reads every counter through CNT_SEL / CNT_LO / CNT_HI and takes the trace records of the
/// run (`RunStats::records`).
RunStats read_counters(AccelModel& m, MemPort& port);

/// After STATUS.busy fell: throws DeviceError(STATUS.error, ERROR_INFO) on an error, its
/// message naming the instruction (`describe` turns an instruction index into text), else
/// returns the counters and records.
RunStats finish_program(AccelModel& m, MemPort& port,
                        const std::function<std::string(std::uint32_t)>& describe);

/// A run that did not end within `max_cycles` (or, `interrupted`, was stopped from outside):
/// reads the partial counters, names the busy units and the instruction, soft-resets the
/// accelerator, drops the owed memory responses and throws SimTimeout (SimInterrupted).
[[noreturn]] void abandon_program(AccelModel& m, MemPort& port, std::uint64_t max_cycles,
                                  const std::function<std::string(std::uint32_t)>& describe,
                                  bool interrupted = false);

/// "(DMA_LOAD #3, layer 0)": an instruction for error messages. The compiler gives the
/// classifier the layer index n_layers: pass it as `head_layer` (negative = unknown) and that
/// layer reads "head".
std::string describe_instruction(const hw::Instr& in, std::uint32_t index, int head_layer = -1);

/// A program run by the host: where it is, its length, the WATCHDOG register, the simulation
/// watchdog in cycles (0 = 2^40), and how to name an instruction in messages.
struct HostRun {
  std::uint64_t prog_addr = 0;
  std::uint32_t len = 0;
  std::uint32_t watchdog = 0;
  std::uint64_t max_cycles = 0;
  std::function<std::string(std::uint32_t)> describe;
};

/// The whole run on a plain loop: start_program, then `run()` until STATUS.busy falls or
/// `max_cycles` pass, then finish_program (or abandon_program).
RunStats run_in_loop(AccelModel& m, MemPort& port, const HostRun& r);

}  // namespace passim::sim
