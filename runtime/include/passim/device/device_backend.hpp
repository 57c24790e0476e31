// SPDX-License-Identifier: Apache-2.0
/// \file A model running as compiled programs on a Device: the integer backend of the
/// accelerator (CpuDevice, or the simulated RTL).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "passim/compiler/compiler.hpp"
#include "passim/device/device.hpp"
#include "passim/model/backend.hpp"

namespace passim {

/// A Backend that runs a compiled model's programs on a Device.
class DeviceBackend final : public Backend {
 public:
  /// `compiled` and `device` must outlive the backend. Loads the DRAM image into the device;
  /// with resident weights the first forward() or forward_sequence() runs the compiler's
  /// preload() programs first, tagged Phase::kPreload.
  /// `name` is the backend's name in reports, e.g. "rtl" (default: the device's name); the
  /// config's name follows it ("rtl:small"). Throws std::runtime_error when the device's DRAM
  /// is smaller than the model needs.
  DeviceBackend(const ModelCompiler& compiled, Device& device, std::string_view name = {});

  [[nodiscard]] std::string_view name() const noexcept override { return name_; }
  [[nodiscard]] const ModelConfig& config() const noexcept override {
    return compiled_.model().config;
  }
  void forward(int token, int pos) override;
  /// The sequence in as few passes as the config holds (ModelCompiler::rows_at): each pass
  /// streams its rows through every weight tile. Bit for bit the same as forward() per token.
  /// An unmasked model's sequence is one pass, run in chunks of rows layer by layer when the
  /// config cannot hold it whole (ModelCompiler::pass).
  /// Throws std::runtime_error as forward(), or when a position fits no pass.
  void forward_sequence(std::span<const int> tokens, int pos) override;
  /// A model over continuous features: `frames` rows of int8 features (quantize_features)
  /// and the class token in one pass (ModelCompiler::features_pass), tagged prefill; the
  /// logits are the class token's. Throws std::runtime_error when the sizes differ or the pass
  /// does not fit the config.
  void forward_features(std::span<const std::int8_t> features, std::size_t frames);
  /// Passes the last forward_sequence() took (1 unless the sequence was split).
  [[nodiscard]] std::size_t sequence_passes() const noexcept { return passes_; }
  [[nodiscard]] std::span<const float> logits() const noexcept override { return logits_f32_; }
  void reset() override {}

  [[nodiscard]] std::span<const std::int32_t> logits_i32() const noexcept { return logits_; }
  /// Counters and instruction counts summed over every run since construction. `records`
  /// stays empty: an OpRecordTable attached to the device (Device::add_observer) collects
  /// each run's records with the program they belong to.
  [[nodiscard]] const RunStats& stats() const noexcept { return stats_; }
  /// The part of stats() that ran in `phase` (forward_sequence: prefill; forward: decode;
  /// the resident weights' one-time load: preload).
  [[nodiscard]] const RunStats& stats(Phase phase) const noexcept {
    return phase_stats_[std::size_t(phase)];
  }
  /// Adds the counters of a program that was stopped before its end (a watchdog) to stats()
  /// and to the phase of the last program started, so that reports cover the partial run.
  void add_partial_run(RunStats partial);
  [[nodiscard]] const ModelCompiler& compiler() const noexcept { return compiled_; }
  /// Weight tiles (ModelCompiler::loads_weight_tile) the runs of `phase` loaded: with
  /// resident weights, only the preload's.
  [[nodiscard]] std::uint64_t weight_tile_loads(Phase phase) const noexcept {
    return weight_tile_loads_[std::size_t(phase)];
  }

 private:
  void run(const std::vector<std::vector<hw::Instr>>& programs);
  void preload_once();
  void read_logits();

  const ModelCompiler& compiled_;
  Device& device_;
  std::string name_;
  std::vector<std::int32_t> logits_;
  std::vector<float> logits_f32_;
  RunStats stats_;
  std::array<RunStats, 3> phase_stats_;
  std::array<std::uint64_t, 3> weight_tile_loads_{};
  bool preloaded_ = false;
  Phase last_phase_ = Phase::kDecode;  ///< the phase of the last program run() started
  std::size_t passes_ = 0;
};

}  // namespace passim
