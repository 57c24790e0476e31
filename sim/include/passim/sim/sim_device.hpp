// SPDX-License-Identifier: Apache-2.0
/// \file `passim::Device` implementations on the Verilated accelerator (rtl/top/psm_accel.sv):
/// `SimDevice`, the SystemC/TLM-2.0 system model, and `LoopDevice`, the same model stepped
/// in a plain C++ loop. Both report cycle counters read from the RTL's registers.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "passim/device/device.hpp"
#include "passim/device/dma_model.hpp"
#include "passim/sim/accel_model.hpp"

namespace passim::sim {

/// System-model parameters. Times are SystemC times; the accelerator is a cycle-accurate RTL
/// model clocked at `clock_mhz`. The devices refuse a NaN and a value outside these ranges
/// (std::invalid_argument naming the field): dram_bytes 1 B to 1 TiB, clock_mhz 0.001 to
/// 10,000, dram_latency_ns 0 to 10^12, dram_bytes_per_ns 0.001 to 10^6, quantum_ns 0.001 to
/// 10^12.
struct SimOptions {
  // The defaults are the cycle model's (passim::DramTiming, device/dma_model.hpp): one home.
  std::uint64_t dram_bytes = kDefaultDramBytes;  ///< DRAM size
  double clock_mhz = DramTiming{}.clock_mhz;     ///< accelerator clock
  double dram_latency_ns = DramTiming{}.latency_ns;  ///< end of a transfer to its response
  double dram_bytes_per_ns = DramTiming{}.bytes_per_ns;  ///< DRAM bandwidth (serialised)
  double quantum_ns = 10'000.0;    ///< TLM global quantum (temporal decoupling)
  std::uint64_t max_cycles = 0;    ///< per run(): 0 = 2^40 (no limit in practice)
  std::uint32_t rtl_watchdog = 0;  ///< the WATCHDOG register; 0 = off
  std::string trace_path;          ///< FST waveform; empty = none
  TraceWindow trace_window;        ///< its cycles (default: every cycle)
  /// SimDevice calls `progress(cycle, at)` once every `progress_cycles` simulated cycles of a
  /// run (0 = never): the model's clock cycle and the busy units' instructions, "matmul
  /// (MATMUL #12, layer 2), DMA (DMA_LOAD #13, layer 2)". Called from the simulation; it must
  /// not throw.
  std::function<void(std::uint64_t cycle, const std::string& at)> progress;
  std::uint64_t progress_cycles = 0;
  int head_layer = -1;  ///< the classifier's layer index (n_layers) for messages; -1 = unknown
  /// When set, a run checks `*stop` after every quantum and, once it is true, stops as the
  /// watchdog does and throws SimInterrupted (a signal handler sets it on Ctrl-C).
  const std::atomic<bool>* stop = nullptr;
};

/// A run stopped by `SimOptions::max_cycles`; `stats()` holds the counters of the partial run.
class SimTimeout : public std::runtime_error {
 public:
  SimTimeout(const std::string& what, RunStats stats)
      : std::runtime_error(what), stats_(std::move(stats)) {}
  [[nodiscard]] const RunStats& stats() const noexcept { return stats_; }

 private:
  RunStats stats_;
};

/// A run stopped by `SimOptions::stop` (Ctrl-C); `stats()` holds the partial run's counters.
class SimInterrupted : public SimTimeout {
 public:
  using SimTimeout::SimTimeout;
};

/// What SimDevice and LoopDevice share: the Verilated model, the options, and the DRAM bytes
/// that the host writes and reads directly between runs (no simulated time). The memory
/// system of the derived device serves the model's beats from the same bytes.
class RtlDevice : public Device {
 public:
  ~RtlDevice() override;
  RtlDevice(const RtlDevice&) = delete;
  RtlDevice& operator=(const RtlDevice&) = delete;

  [[nodiscard]] const hw::HwConfig& hw() const noexcept override;
  [[nodiscard]] std::uint64_t dram_bytes() const noexcept override;
  /// Throw std::out_of_range when [addr, addr + size) is not inside the DRAM.
  void write_dram(std::uint64_t addr, std::span<const std::uint8_t> bytes) override;
  void read_dram(std::uint64_t addr, std::span<std::uint8_t> bytes) const override;

  /// Clock cycles simulated so far (runs, register accesses and reset).
  [[nodiscard]] std::uint64_t cycles() const noexcept;
  /// Ends the `trace_path` waveform and checks it is complete (AccelModel::close_trace).
  void close_trace();

 protected:
  /// Throws std::invalid_argument when `model` is null or an option is out of range.
  RtlDevice(std::unique_ptr<AccelModel> model, const SimOptions& opts);

  /// The instruction at `index` of the program at `prog_addr` in DRAM, for messages.
  [[nodiscard]] std::string describe(std::uint64_t prog_addr, std::uint32_t index) const;

  /// The model, the options and the DRAM bytes (opts.dram_bytes, zeroed): set once here, so
  /// the references a derived device's memory system keeps to them stay valid.
  [[nodiscard]] AccelModel& model() const noexcept { return *model_; }
  [[nodiscard]] const SimOptions& options() const noexcept { return opts_; }
  [[nodiscard]] std::vector<std::uint8_t>& dram() noexcept { return dram_; }

 private:
  const std::unique_ptr<AccelModel> model_;
  const SimOptions opts_;
  std::vector<std::uint8_t> dram_;
};

/// The accelerator in a SystemC system model: the Verilated psm_accel (a plain --cc model)
/// stepped in a loop inside ONE SC_THREAD, its memory port a TLM-2.0 loosely-timed initiator
/// (b_transport with annotated delay, a quantum keeper) on a DRAM target with latency and
/// bandwidth. SystemC elaborates once per process: create at most one SimDevice per process
/// (before the first run), e.g. one per test under ctest.
class SimDevice final : public RtlDevice {
 public:
  /// Takes the model of one configuration (make_accel_model_tiny(), ...). Throws
  /// std::runtime_error when SystemC has already started in this process.
  explicit SimDevice(std::unique_ptr<AccelModel> model, const SimOptions& opts = {});
  ~SimDevice() override;

  [[nodiscard]] std::string_view name() const noexcept override { return "rtl-systemc"; }
  /// Runs the program through the host registers. Counters (has_cycles = true) are read
  /// from the RTL after the run, with one trace record per DMA, matmul and vector
  /// instruction (`RunStats::records`). Throws DeviceError (STATUS.error and ERROR_INFO,
  /// docs/isa.md "Errors") on an error, SimTimeout after `max_cycles`.
  RunStats run(std::uint64_t prog_addr, std::uint32_t len) override;
  /// SystemC time simulated so far, in ns.
  [[nodiscard]] double sim_time_ns() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The same accelerator without SystemC: a plain cycle loop and a DRAM with a fixed latency
/// of `round(dram_latency_ns * clock_mhz / 1000)` cycles, one beat per cycle. The baseline of
/// the simulation-speed benchmark, and handy in unit tests (any number per process).
class LoopDevice final : public RtlDevice {
 public:
  explicit LoopDevice(std::unique_ptr<AccelModel> model, const SimOptions& opts = {});
  ~LoopDevice() override;

  [[nodiscard]] std::string_view name() const noexcept override { return "rtl-loop"; }
  /// Like SimDevice::run (counters and trace records of the run).
  RunStats run(std::uint64_t prog_addr, std::uint32_t len) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace passim::sim
