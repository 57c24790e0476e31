// SPDX-License-Identifier: Apache-2.0
// The report's raw counters with their definitions, and the accelerator's own throughput at
// its simulated clock.
#include <string>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "report.hpp"

namespace passim::app {

using nlohmann::json;

json counters_json(const std::vector<std::uint64_t>& cnt) {
  json j = json::object();
  for (std::size_t i = 0; i < hw::kNumCounters && i < cnt.size(); ++i) {
    const auto k = static_cast<hw::Counter>(i);
    j[std::string(hw::counter_name(k))] = {{"value", cnt[i]},
                                           {"definition", std::string(hw::counter_doc(k))}};
  }
  return j;
}

namespace {

/// {"items", "cycles", "seconds", "per_second"} of `items` done in `cycles` at `mhz`;
/// per_second is null when no cycle ran.
json rate_json(std::uint64_t items, std::uint64_t cycles, double mhz) {
  const double seconds = double(cycles) / (mhz * 1e6);
  return {{"items", items},
          {"cycles", cycles},
          {"seconds", seconds},
          {"per_second", cycles > 0 ? json(double(items) / seconds) : json(nullptr)}};
}

std::string rate_text(const json& r, const std::string& unit) {
  return r["per_second"].is_null()
             ? fmt::format("{} {} in 0 cycles", r["items"].get<std::uint64_t>(), unit)
             : fmt::format("{} {} in {:.3f} ms = {:.1f} {}/s", r["items"].get<std::uint64_t>(),
                           unit, 1e3 * r["seconds"].get<double>(), r["per_second"].get<double>(),
                           unit);
}

}  // namespace

json throughput_report(const RtlSession& s, const Work& w, std::ostream& err) {
  const double mhz = s.options().clock_mhz;
  const auto total_of = [&](Phase p) {
    const auto cnt = s.counters(p);
    return cnt.empty() ? std::uint64_t{0} : cnt.at(std::size_t(hw::Counter::kTotalCycles));
  };
  const std::uint64_t total = s.counters().at(std::size_t(hw::Counter::kTotalCycles));
  json j = {{"clock_mhz", mhz}, {"unit", w.unit},
            {"all", rate_json(w.prefill + w.decode, total, mhz)}};
  std::string phases;
  for (const auto& [p, items] : {std::pair{Phase::kPrefill, w.prefill},
                                 std::pair{Phase::kDecode, w.decode}}) {
    if (items > 0) {
      const std::string name(phase_name(p));
      j[name] = rate_json(items, total_of(p), mhz);
      phases += fmt::format("; {} {}", name, rate_text(j[name], w.unit));
    }
  }
  fmt::print(err, "\naccelerator at {} MHz (simulated time, not the simulator's speed): {}{}\n",
             mhz, rate_text(j["all"], w.unit), phases);
  return j;
}

}  // namespace passim::app
