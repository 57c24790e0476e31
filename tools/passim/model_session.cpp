// SPDX-License-Identifier: Apache-2.0
// `--backend model` (model_session.hpp).
#include "model_session.hpp"

#include <memory>

#include "passim/device/device_backend.hpp"
#include "passim/device/model_device.hpp"

namespace passim::app {

namespace {

class ModelSession final : public DeviceSession<ModelDevice> {
 public:
  ModelSession(const ModelCompiler& compiled, const RtlOptions& o)
      : DeviceSession(compiled, o, "model", compiled.hw(),
                      DramTiming{.clock_mhz = o.clock_mhz, .latency_ns = o.dram_latency_ns,
                                 .bytes_per_ns = o.dram_bytes_per_ns},
                      std::max<std::uint64_t>(kDefaultDramBytes, compiled.dram_bytes())) {}

  std::uint64_t clock_cycles() const override {
    const auto& c = backend_.stats().counters;
    return c.empty() ? 0 : c[std::size_t(hw::Counter::kTotalCycles)];
  }
  void close_trace() override {}
  bool absorb_partial_run(const std::exception& /*e*/) override { return false; }
  std::string_view source() const override { return "model"; }
};

}  // namespace

RtlFactory model_factory() {
  return [](const ModelCompiler& compiled, const RtlOptions& o) -> std::unique_ptr<RtlSession> {
    return std::make_unique<ModelSession>(compiled, o);
  };
}

}  // namespace passim::app
