// SPDX-License-Identifier: Apache-2.0
// `--backend rtl`: the compiled model on SimDevice (Verilated RTL in the SystemC system model).
#include "rtl_session.hpp"

#include <csignal>
#include <stdexcept>

#include <unistd.h>

#include <fmt/format.h>

#include "passim/compiler/compiler.hpp"
#include "passim/device/device_backend.hpp"
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

/// Forwards to a SimDevice and sums the records of every run, joined with the program it
/// ran (read back from DRAM), into an OpRecordTable.
class RecordingDevice final : public Device {
 public:
  explicit RecordingDevice(sim::SimDevice& dev) : dev_(dev) {}
  [[nodiscard]] std::string_view name() const noexcept override { return "rtl"; }
  [[nodiscard]] const hw::HwConfig& hw() const noexcept override { return dev_.hw(); }
  [[nodiscard]] std::uint64_t dram_bytes() const noexcept override { return dev_.dram_bytes(); }
  void write_dram(std::uint64_t a, std::span<const std::uint8_t> b) override {
    dev_.write_dram(a, b);
  }
  void read_dram(std::uint64_t a, std::span<std::uint8_t> b) const override {
    dev_.read_dram(a, b);
  }
  RunStats run(std::uint64_t prog_addr, std::uint32_t len) override {
    RunStats s = dev_.run(prog_addr, len);
    std::vector<hw::Instr> prog(len);
    dev_.read_dram(prog_addr, {reinterpret_cast<std::uint8_t*>(prog.data()), prog.size() * 16});
    table_.add(prog, s.records);
    return s;
  }
  [[nodiscard]] const OpRecordTable& table() const noexcept { return table_; }

 private:
  sim::SimDevice& dev_;
  OpRecordTable table_;
};

class SimSession final : public RtlSession {
 public:
  SimSession(const QuantModel& model, const RtlOptions& o)
      : device_(make_model(o), options(model, o)),
        recording_(device_),
        backend_(model, recording_, CompileOptions{o.softmax}) {
    if (!o.trace_path.empty()) {
      std::signal(SIGBUS, on_trace_bus_error);
    }
  }

  Backend& backend() override { return backend_; }
  const hw::HwConfig& hw() const override { return device_.hw(); }
  std::vector<std::uint64_t> counters() const override { return backend_.stats().counters; }
  std::vector<OpRecord> op_records() const override { return recording_.table().records(); }
  void close_trace() override { device_.close_trace(); }

 private:
  static std::unique_ptr<sim::AccelModel> make_model(const RtlOptions& o) {
    const bool trace = !o.trace_path.empty();
    if (o.config == "tiny") {
      return sim::make_accel_model_tiny(trace);
    }
    if (o.config == "small") {
      return sim::make_accel_model_small(trace);
    }
    if (o.config == "base") {
      return sim::make_accel_model_base(trace);
    }
    throw std::runtime_error(fmt::format(
        "--config: expected tiny, small or base (the configurations this simulator was built "
        "for), found {}", o.config));
  }
  static sim::SimOptions options(const QuantModel& model, const RtlOptions& o) {
    sim::SimOptions s;
    const hw::HwConfig* cfg = hw::find_config(o.config);
    if (cfg != nullptr) {
      s.dram_bytes = std::max<std::uint64_t>(s.dram_bytes,
                                             ModelCompiler(model, *cfg).dram_bytes());
    }
    s.trace_path = o.trace_path;
    s.max_cycles = o.max_cycles;
    s.head_layer = model.config.n_layers;  // ModelCompiler's layer index of the classifier
    return s;
  }

  sim::SimDevice device_;
  RecordingDevice recording_;
  DeviceBackend backend_;
};

}  // namespace

RtlFactory simulator_factory() {
  return [](const QuantModel& model, const RtlOptions& o) -> std::unique_ptr<RtlSession> {
    return std::make_unique<SimSession>(model, o);
  };
}

}  // namespace passim::app
