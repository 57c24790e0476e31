// SPDX-License-Identifier: Apache-2.0
// A compiled model running on a Device, step by step.
#include "passim/device/device_backend.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace passim {

DeviceBackend::DeviceBackend(const QuantModel& model, Device& device, CompileOptions opts)
    : model_(model),
      device_(device),
      compiler_(model, device.hw(), opts),
      name_(fmt::format("{}:{}", device.name(), device.hw().name)),
      logits_(std::size_t(model.config.vocab_size)),
      logits_f32_(logits_.size()) {
  if (device.dram_bytes() < compiler_.dram_bytes()) {
    throw std::runtime_error(fmt::format("device {}: {} bytes of DRAM, the model needs {}",
                                         device.name(), device.dram_bytes(),
                                         compiler_.dram_bytes()));
  }
  device.write_dram(0, compiler_.image());
}

void DeviceBackend::forward(int token, int pos) {
  const StepPrograms step = compiler_.step(token, pos);
  for (const auto& prog : step.programs) {
    device_.write_dram(compiler_.program_addr(),
                       {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
    const RunStats s = device_.run(compiler_.program_addr(), std::uint32_t(prog.size()));
    stats_.instructions += s.instructions;
    stats_.has_cycles = s.has_cycles;
    stats_.counters.resize(std::max(stats_.counters.size(), s.counters.size()), 0);
    for (std::size_t i = 0; i < s.counters.size(); ++i) {
      stats_.counters[i] += s.counters[i];
    }
  }
  device_.read_dram(compiler_.logits_addr(),
                    {reinterpret_cast<std::uint8_t*>(logits_.data()), logits_.size() * 4});
  for (std::size_t i = 0; i < logits_.size(); ++i) {
    logits_f32_[i] = static_cast<float>(std::ldexp(double(logits_[i]), -kLogitFracBits));
  }
}

}  // namespace passim
