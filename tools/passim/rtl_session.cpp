// SPDX-License-Identifier: Apache-2.0
// `--backend rtl`: the compiled model on SimDevice (Verilated RTL in the SystemC system model).
#include "rtl_session.hpp"

#include "hw_config.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <stdexcept>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "passim/compiler/compiler.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/sim/accel_build.hpp"
#include "passim/sim/sim_device.hpp"

namespace passim::app {

namespace {

/// The FST writer maps its buffers into files: when their file system fills up, a write
/// raises SIGBUS instead of returning an error. Report it and exit like any other error.
extern "C" void on_trace_bus_error(int /*signal*/) {
  static const char kMsg[] =
      "passim: error: --trace: writing the waveform failed (bus error): its file system is "
      "full or the file was truncated while it was written\n";
  const ssize_t ignored = ::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
  (void)ignored;
  ::_exit(1);
}

/// Set by the first Ctrl-C (SIGINT) or SIGTERM during a simulation: the run stops at the end
/// of its quantum like a watchdog stop, so the waveform is closed and the tables and a partial
/// report cover the run so far. The handler resets itself: a second signal ends the process.
std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int /*signal*/) { g_interrupted.store(true); }

/// Installs on_interrupt for SIGINT and SIGTERM for its life, then restores what was there.
class InterruptGuard {
 public:
  InterruptGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptGuard() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

class SimSession final : private InterruptGuard, public DeviceSession<sim::SimDevice> {
 public:
  SimSession(const ModelCompiler& compiled, const RtlOptions& o)
      : DeviceSession(compiled, o, "rtl", make_model(o), sim_options(compiled, o)) {
    if (!o.trace_path.empty()) {
      std::signal(SIGBUS, on_trace_bus_error);
    }
  }

  std::uint64_t clock_cycles() const override { return device_.cycles(); }
  void close_trace() override { device_.close_trace(); }
  bool absorb_partial_run(const std::exception& e) override {
    const auto* stop = dynamic_cast<const sim::SimTimeout*>(&e);
    if (stop == nullptr) {
      return false;
    }
    backend_.add_partial_run(stop->stats());
    return true;
  }

 private:
  static std::unique_ptr<sim::AccelModel> make_model(const RtlOptions& o) {
    // A configuration that is not built in is Verilated on first use; its steps go to the
    // progress stream (stderr), or nowhere with --quiet.
    std::ostream null(nullptr);
    return sim::make_accel_model(config_arg(o.config), !o.trace_path.empty(),
                                 o.progress_out != nullptr ? *o.progress_out : null,
                                 o.trace_scope);
  }
  static sim::SimOptions sim_options(const ModelCompiler& compiled, const RtlOptions& o) {
    sim::SimOptions s;
    s.clock_mhz = o.clock_mhz;
    s.dram_latency_ns = o.dram_latency_ns;
    s.dram_bytes_per_ns = o.dram_bytes_per_ns;
    s.dram_bytes = std::max<std::uint64_t>(s.dram_bytes, compiled.dram_bytes());
    s.trace_path = o.trace_path;
    s.trace_window = {o.trace_first, o.trace_end};
    if (o.progress_out != nullptr && o.progress_cycles != 0) {
      s.progress_cycles = o.progress_cycles;
      s.progress = [out = o.progress_out, mhz = o.clock_mhz,
                    t0 = std::chrono::steady_clock::now()](std::uint64_t cycle,
                                                           const std::string& at) {
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        fmt::print(*out, "progress: cycle {} ({:.3f} ms simulated at {} MHz), at {}, {:.0f} kHz "
                   "simulated per wall second\n", cycle, double(cycle) / (mhz * 1e3), mhz, at,
                   wall > 0 ? double(cycle) / wall / 1e3 : 0.0);
        out->flush();
      };
    }
    s.max_cycles = o.max_cycles;
    s.stop = &g_interrupted;
    s.head_layer = compiled.model().config.n_layers;  // the compiler's layer index of the head
    return s;
  }

};

}  // namespace

RtlFactory simulator_factory() {
  return [](const ModelCompiler& compiled, const RtlOptions& o) -> std::unique_ptr<RtlSession> {
    return std::make_unique<SimSession>(compiled, o);
  };
}

}  // namespace passim::app
