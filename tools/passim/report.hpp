// SPDX-License-Identifier: Apache-2.0
/// \file The cycle report of a run on the simulated accelerator: tables on stderr and the
/// JSON "cycles" section (docs/reports.md), every number from the RTL counters and the
/// hardware's per-instruction records.
#pragma once

#include <ostream>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "passim/device/device_backend.hpp"
#include "passim/hw/spec.hpp"
#include "passim/model/config.hpp"
#include "rtl_session.hpp"

namespace passim::app {

/// What a run did, for its throughput: `unit` ("tokens", "sequences", "clips") and how many
/// of them the prefill passes and the decode positions produced.
struct Work {
  std::string unit;
  std::uint64_t prefill = 0;
  std::uint64_t decode = 0;
};

/// Every hardware counter of `cnt` (hw::Counter order) by its spec name:
/// {"<name>": {"value", "definition"}}, the definition being spec/passim.json's.
[[nodiscard]] nlohmann::json counters_json(const std::vector<std::uint64_t>& cnt);

/// Prints, and returns as JSON, the accelerator's own throughput at the session's simulated
/// clock: "clock_mhz", "unit", and {"items", "cycles", "seconds", "per_second"} for "all"
/// (every cycle, a preload included) and for "prefill" and "decode" when they produced items.
[[nodiscard]] nlohmann::json throughput_report(const RtlSession& s, const Work& w,
                                               std::ostream& err);

/// Prints the cycle tables (by op class, by layer, by opcode) from the counters and the
/// records of `s` to `err`, and returns the JSON "cycles" section.
[[nodiscard]] nlohmann::json cycle_report(const RtlSession& s, const ModelConfig& c,
                                          std::ostream& err);

/// Prints where the weights live (resident: loaded once; streamed: by every MATMUL) and
/// returns the JSON "weights" section of "cycles"; `requested`: the --weights option.
[[nodiscard]] nlohmann::json weights_report(const DeviceBackend& backend,
                                            const std::string& requested, std::ostream& err);

/// The JSON "hardware" section: the config's name, a hash of its sizes, R, C and L, and the
/// session's clock and DRAM timing.
[[nodiscard]] nlohmann::json hardware_json(const hw::HwConfig& h, const RtlOptions& o);

/// cycle_report(), weights_report(), the attention line and throughput_report() of a
/// session: prints them on `err` and returns the "cycles" section with "weights",
/// "attention" and "throughput" in it; `requested`: the --weights option.
[[nodiscard]] nlohmann::json rtl_cycles(RtlSession& s, const ModelConfig& c,
                                        const std::string& requested, const Work& work,
                                        std::ostream& err);

/// Adds a run's "hardware" and "cycles" sections to report `j` when `s` is set (the rtl
/// backend), and "partial": true with "stopped_by" when the simulation watchdog stopped the
/// run (`stopped` holds its message), else "partial": false.
void add_rtl_sections(nlohmann::json& j, const RtlSession* s, const nlohmann::json& cycles,
                      const std::string& stopped);

}  // namespace passim::app
