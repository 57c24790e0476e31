// SPDX-License-Identifier: Apache-2.0
// A compiled model running on a Device, step by step.
#include "passim/device/device_backend.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace passim {
namespace {

/// Tags the runs of its lifetime prefill, whatever happens.
class PrefillTag {
 public:
  explicit PrefillTag(Device& dev) : d_(dev) { d_.set_phase(Phase::kPrefill); }
  ~PrefillTag() { d_.set_phase(Phase::kDecode); }
  PrefillTag(const PrefillTag&) = delete;
  PrefillTag& operator=(const PrefillTag&) = delete;

 private:
  Device& d_;
};

}  // namespace

DeviceBackend::DeviceBackend(const ModelCompiler& compiled, Device& device,
                             std::string_view name)
    : compiled_(compiled),
      device_(device),
      name_(fmt::format("{}:{}", name.empty() ? device.name() : name, device.hw().name)),
      logits_(std::size_t(compiled.model().config.vocab_size)),
      logits_f32_(logits_.size()) {
  if (device.dram_bytes() < compiled.dram_bytes()) {
    throw std::runtime_error(fmt::format("device {}: {} bytes of DRAM, the model needs {}",
                                         device.name(), device.dram_bytes(),
                                         compiled.dram_bytes()));
  }
  device.write_dram(0, compiled.image());
}

void DeviceBackend::forward(int token, int pos) {
  check_token_position(config(), token, pos);
  preload_once();
  run(compiled_.step(token, pos));
  read_logits();
}

void DeviceBackend::forward_sequence(std::span<const int> tokens, int pos) {
  check_sequence(config(), tokens, pos);
  preload_once();
  passes_ = 0;
  const PrefillTag tag(device_);
  if (unmasked(compiled_.description())) {  // one pass, in chunks of rows if need be
    run(compiled_.pass(tokens, pos));
    passes_ = 1;
    read_logits();
    return;
  }
  for (std::size_t done = 0; done < tokens.size();) {
    const int at = pos + int(done);
    const std::size_t n = compiled_.rows_at(at, tokens.size() - done);
    if (n == 0) {
      throw std::runtime_error(fmt::format(
          "config {}: position {} does not fit a pass (its KV window and one row need more "
          "than the vector scratchpad's {} words); use a larger config", device_.hw().name, at,
          device_.hw().vector_depth));
    }
    run(compiled_.pass(tokens.subspan(done, n), at));
    done += n;
    ++passes_;
  }
  read_logits();
}

void DeviceBackend::forward_features(std::span<const std::int8_t> features, std::size_t frames) {
  (void)require_features(compiled_.description(), features.size(), frames, name_.c_str());
  const auto programs = compiled_.features_pass(frames);  // throws when it does not fit
  preload_once();
  const PrefillTag tag(device_);
  device_.write_dram(compiled_.features_addr(),
                     {reinterpret_cast<const std::uint8_t*>(features.data()), features.size()});
  run(programs);
  passes_ = 1;
  read_logits();
}

namespace {

/// Adds a run's instruction count and counters to `sum`.
void accumulate(RunStats& sum, const RunStats& s) {
  sum.instructions += s.instructions;
  sum.has_cycles = s.has_cycles;
  sum.counters.resize(std::max(sum.counters.size(), s.counters.size()), 0);
  for (std::size_t i = 0; i < s.counters.size(); ++i) {
    sum.counters[i] += s.counters[i];
  }
}

}  // namespace

void DeviceBackend::run(const std::vector<std::vector<hw::Instr>>& programs) {
  for (const auto& prog : programs) {
    last_phase_ = device_.phase();
    const RunStats s = device_.run_program(compiled_.program_addr(), prog);
    accumulate(stats_, s);
    accumulate(phase_stats_[std::size_t(s.phase)], s);
    weight_tile_loads_[std::size_t(s.phase)] += std::uint64_t(std::count_if(
        prog.begin(), prog.end(),
        [this](const hw::Instr& in) { return compiled_.loads_weight_tile(in); }));
  }
}

void DeviceBackend::add_partial_run(RunStats partial) {
  partial.phase = last_phase_;
  accumulate(stats_, partial);
  accumulate(phase_stats_[std::size_t(partial.phase)], partial);
}

void DeviceBackend::preload_once() {
  if (preloaded_) {
    return;
  }
  preloaded_ = true;
  const Phase was = device_.phase();
  device_.set_phase(Phase::kPreload);
  try {
    run(compiled_.preload());
  } catch (...) {
    device_.set_phase(was);
    throw;
  }
  device_.set_phase(was);
}

void DeviceBackend::read_logits() {
  device_.read_dram(compiled_.logits_addr(),
                    {reinterpret_cast<std::uint8_t*>(logits_.data()), logits_.size() * 4});
  for (std::size_t i = 0; i < logits_.size(); ++i) {
    logits_f32_[i] = static_cast<float>(std::ldexp(double(logits_[i]), -kLogitFracBits));
  }
}

}  // namespace passim
