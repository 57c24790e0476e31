// SPDX-License-Identifier: Apache-2.0
/// \file The `--backend rtl` hook of the CLI. The CLI library stays free of SystemC and
/// Verilator; the `passim` executable supplies a factory when it is built with the simulator.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "passim/model/backend.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/device/device.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/device/records.hpp"
#include "passim/kernels/softmax.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim::app {

/// The units `--trace-scope` accepts (sim::trace_scopes() maps each to its instance; a test
/// in tests/sim holds the two lists equal).
inline constexpr std::array<std::string_view, 15> kTraceScopeUnits{
    "controller", "dma",     "matmul", "vector", "softmax", "layernorm", "rmsnorm", "batchnorm",
    "gelu",       "silu",    "rope",   "eltwise", "attn",   "counters",  "memories"};

/// What a simulator session is made with.
struct RtlOptions {
  std::string config = "small";  ///< `--config`: a name, a spec or a file (hw_config.hpp)
  std::string trace_path;        ///< FST waveform; empty = none
  std::string trace_scope;       ///< --trace-scope: one unit's signals only; empty = all
  /// Its cycles, trace_first <= c < trace_end (--trace-window).
  std::uint64_t trace_first = 0;
  std::uint64_t trace_end = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_cycles = 0;  ///< watchdog per program; 0 = none
  /// Attention Softmax the compiler emits: three passes, or online (two).
  kernels::SoftmaxMode softmax = kernels::SoftmaxMode::kThreePass;
  /// The SystemC memory's timing (sim::SimOptions): the accelerator's clock, the DRAM's
  /// latency from the end of a transfer to its response, and its bandwidth (bytes per ns =
  /// GB/s); the defaults are sim::SimOptions' (a test in tests/sim holds them equal).
  double clock_mhz = 100.0;
  double dram_latency_ns = 50.0;
  double dram_bytes_per_ns = 1.6;
  /// A progress line on `progress_out` every `progress_cycles` simulated cycles (0 = none):
  /// the cycle, the instruction the controller is at and the simulator's speed.
  std::uint64_t progress_cycles = 0;
  std::ostream* progress_out = nullptr;
};

/// A compiled model running on the simulated accelerator.
class RtlSession {
 public:
  virtual ~RtlSession() = default;
  [[nodiscard]] virtual Backend& backend() = 0;
  [[nodiscard]] virtual const hw::HwConfig& hw() const = 0;
  /// Counters read from the RTL, summed over every program run so far (hw::Counter order).
  [[nodiscard]] virtual std::vector<std::uint64_t> counters() const = 0;
  /// The part of counters() that ran in `phase` (empty if none did).
  [[nodiscard]] virtual std::vector<std::uint64_t> counters(Phase phase) const = 0;
  /// The hardware's per-instruction records of every run so far, joined with their
  /// instructions and summed per (layer, opcode, op class, shape), in order of first
  /// appearance.
  [[nodiscard]] virtual std::vector<OpRecord> op_records() const = 0;
  /// Clock cycles simulated so far (runs, register accesses, reset): the waveform's time
  /// axis divided by the clock period.
  [[nodiscard]] virtual std::uint64_t clock_cycles() const = 0;
  /// The options the session was made with (clock, DRAM timing, config).
  [[nodiscard]] virtual const RtlOptions& options() const = 0;
  /// Ends the --trace waveform, if any, and checks it is complete (throws if not).
  virtual void close_trace() = 0;
  /// When `e` is the simulation watchdog's stop (--max-cycles), adds the stopped program's
  /// counters to counters() and returns true, so that the tables cover the partial run;
  /// false for any other error.
  virtual bool absorb_partial_run(const std::exception& e) = 0;
  /// Where its cycles come from: "rtl" (the simulated hardware's counters and trace) or
  /// "model" (the analytical cycle model's closed forms, held equal to the RTL by tests).
  [[nodiscard]] virtual std::string_view source() const { return "rtl"; }
};

/// What the sessions over a passim::Device share: the device (`D`, made from the arguments
/// after `name`), the per-op records of its runs and the backend that runs the compiled model
/// on it, named `name` ("rtl", "model").
template <typename D>
class DeviceSession : public RtlSession {
 public:
  template <typename... Args>
  DeviceSession(const ModelCompiler& compiled, const RtlOptions& o, std::string_view name,
                Args&&... device_args)
      : options_(o),
        device_(std::forward<Args>(device_args)...),
        records_([&compiled](const hw::Instr& in) { return compiled.dma_moves(in); }),
        backend_(compiled, device_, name) {
    device_.add_observer(&records_);
  }

  Backend& backend() override { return backend_; }
  const hw::HwConfig& hw() const override { return device_.hw(); }
  std::vector<std::uint64_t> counters() const override { return backend_.stats().counters; }
  std::vector<std::uint64_t> counters(Phase phase) const override {
    return backend_.stats(phase).counters;
  }
  std::vector<OpRecord> op_records() const override { return records_.records(); }
  const RtlOptions& options() const override { return options_; }

 protected:
  RtlOptions options_;
  D device_;
  OpRecordTable records_;
  DeviceBackend backend_;
};

/// Makes a session that runs `compiled` (which must outlive it) on the simulator.
using RtlFactory =
    std::function<std::unique_ptr<RtlSession>(const ModelCompiler& compiled, const RtlOptions&)>;

/// The configurations the simulator was built for (empty without it).
using RtlConfigs = std::vector<std::string>;

}  // namespace passim::app
