// SPDX-License-Identifier: Apache-2.0
/// \file A model running as compiled programs on a Device: the integer backend of the
/// accelerator (CpuDevice, or the simulated RTL).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "passim/compiler/compiler.hpp"
#include "passim/device/device.hpp"
#include "passim/model/backend.hpp"
#include "passim/quant/quant_model.hpp"

namespace passim {

/// A Backend that runs compiled programs on a Device (CpuDevice, or the simulated RTL).
class DeviceBackend final : public Backend {
 public:
  /// `model` and `device` must outlive the backend. Loads the DRAM image into the device.
  DeviceBackend(const QuantModel& model, Device& device, CompileOptions opts = {});

  [[nodiscard]] std::string_view name() const noexcept override { return name_; }
  [[nodiscard]] const ModelConfig& config() const noexcept override { return model_.config; }
  void forward(int token, int pos) override;
  [[nodiscard]] std::span<const float> logits() const noexcept override { return logits_f32_; }
  void reset() override {}

  [[nodiscard]] std::span<const std::int32_t> logits_i32() const noexcept { return logits_; }
  /// Counters and instruction counts summed over every run since construction. `records`
  /// stays empty: instruction indices only mean something within their own program, so a
  /// caller that wants them wraps the Device and reads each run's records there.
  [[nodiscard]] const RunStats& stats() const noexcept { return stats_; }
  [[nodiscard]] const ModelCompiler& compiler() const noexcept { return compiler_; }

 private:
  const QuantModel& model_;
  Device& device_;
  ModelCompiler compiler_;
  std::string name_;
  std::vector<std::int32_t> logits_;
  std::vector<float> logits_f32_;
  RunStats stats_;
};

}  // namespace passim
