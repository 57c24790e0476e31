// SPDX-License-Identifier: Apache-2.0
// The fields of a report that `passim report` reads, checked before any table is made: each
// error names the file and the JSON path, what was expected and what was found.
#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "passim/device/records.hpp"
#include "report_tables.hpp"

namespace passim::app {

using nlohmann::json;

namespace {

/// Counts above 2^53 would lose digits in the percentages (doubles).
constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 53;

/// "path.key", or "key" at the top.
std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

class Checker {
 public:
  explicit Checker(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& path, const char* expected, const json& found) const {
    std::string shown = found.is_structured() ? (found.is_object() ? "an object" : "an array")
                                              : found.dump();
    if (shown.size() > 40) {
      shown = shown.substr(0, 40) + "...";
    }
    throw std::runtime_error(fmt::format("{}: {}: expected {}, found {}", file_, path, expected,
                                         found.is_null() ? "nothing" : shown));
  }
  const json& member(const json& j, const std::string& path, std::string_view key) const {
    const auto it = j.find(key);
    if (it == j.end()) {
      fail(join(path, key), "a value", json());
    }
    return *it;
  }
  void count(const json& j, const std::string& path, std::string_view key) const {
    const json& v = member(j, path, key);
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > kMaxCount) {
      fail(join(path, key), "a whole number of 0 to 2^53", v);
    }
  }
  void share(const json& j, const std::string& path, std::string_view key) const {
    const json& v = member(j, path, key);
    if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > 1e18) {
      fail(join(path, key), "a number of 0 or more", v);
    }
  }
  void object(const json& j, const std::string& path) const {
    if (!j.is_object()) {
      fail(path, "an object", j);
    }
  }
  void string(const json& j, const std::string& path, std::string_view key) const {
    if (!member(j, path, key).is_string()) {
      fail(join(path, key), "a string", j[key]);
    }
  }

 private:
  const std::string& file_;
};

void check_classes(const Checker& k, const json& c, const std::string& path, bool stalls) {
  k.object(c, path);
  for (const char* key : {"total", "dma_hidden", "dma_exposed"}) {
    k.count(c, path, key);
  }
  if (stalls) {
    k.count(c, path, "mem_stall");
  }
  const json& by = k.member(c, path, "by_class");
  k.object(by, path + ".by_class");
  for (const std::string_view name : kOpClassNames) {
    const std::string p = fmt::format("{}.by_class.{}", path, name);
    k.object(k.member(by, path + ".by_class", name), p);
    k.count(by[name], p, "cycles");
    k.count(by[name], p, "passes");
  }
}

void check_records(const Checker& k, const json& c) {
  const json& recs = k.member(c, "cycles", "records");
  if (!recs.is_array()) {
    k.fail("cycles.records", "an array", recs);
  }
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const std::string p = fmt::format("cycles.records[{}]", i);
    k.object(recs[i], p);
    for (const char* key : {"layer", "op", "class"}) {
      k.string(recs[i], p, key);
    }
    const std::string cls = recs[i]["class"].get<std::string>();
    if (std::find(kOpClassNames.begin(), kOpClassNames.end(), cls) == kOpClassNames.end()) {
      k.fail(p + ".class", "an op class (docs/reports.md)", recs[i]["class"]);
    }
    for (const char* key : {"count", "cycles", "passes", "stall_cycles", "macs"}) {
      k.count(recs[i], p, key);
    }
  }
}

/// units, dma_by_moves and throughput: optional sections, checked when present.
void check_optional(const Checker& k, const json& c) {
  if (c.contains("units")) {
    k.object(c["units"], "cycles.units");
    for (const auto& [phase, u] : c["units"].items()) {
      const std::string p = "cycles.units." + phase;
      k.object(u, p);
      for (const char* key : {"array_busy", "vector_busy", "dma_busy", "mac_utilisation",
                              "matmul_class_mac_utilisation"}) {
        k.share(u, p, key);
      }
    }
  }
  if (c.contains("dma_by_moves")) {
    k.object(c["dma_by_moves"], "cycles.dma_by_moves");
    for (const auto& [moves, d] : c["dma_by_moves"].items()) {
      const std::string p = "cycles.dma_by_moves." + moves;
      k.object(d, p);
      for (const char* key : {"count", "cycles", "stall_cycles", "prefill_cycles",
                              "decode_cycles"}) {
        k.count(d, p, key);
      }
      if (d.contains("preload_cycles")) {
        k.count(d, p, "preload_cycles");
      }
    }
  }
  if (c.contains("throughput")) {
    const json& t = c["throughput"];
    k.object(t, "cycles.throughput");
    k.string(t, "cycles.throughput", "unit");
    k.share(t, "cycles.throughput", "clock_mhz");
    if (!(t["clock_mhz"].get<double>() > 0)) {
      k.fail("cycles.throughput.clock_mhz", "a clock above 0 MHz", t["clock_mhz"]);
    }
    for (const char* phase : {"all", "prefill", "decode"}) {
      if (t.contains(phase)) {
        const std::string p = fmt::format("cycles.throughput.{}", phase);
        k.object(t[phase], p);
        k.count(t[phase], p, "items");
        k.count(t[phase], p, "cycles");
        k.share(t[phase], p, "seconds");
        if (!k.member(t[phase], p, "per_second").is_null()) {
          k.share(t[phase], p, "per_second");
        }
      }
    }
  }
}

}  // namespace

void check_cycle_report(const json& r, const std::string& file) {
  const Checker k(file);
  for (const char* key : {"tool", "backend"}) {
    k.string(r, "", key);
  }
  if (r.contains("partial") && !r["partial"].is_boolean()) {
    k.fail("partial", "true or false", r["partial"]);
  }
  if (r.contains("model")) {
    k.object(r["model"], "model");
  }
  const json& c = r["cycles"];
  check_classes(k, c, "cycles", true);
  if (c.contains("by_phase")) {
    k.object(c["by_phase"], "cycles.by_phase");
    for (const auto& [phase, ph] : c["by_phase"].items()) {
      check_classes(k, ph, "cycles.by_phase." + phase, false);
    }
  }
  if (c.contains("source")) {
    k.string(c, "cycles", "source");
  }
  check_records(k, c);
  check_optional(k, c);
}

}  // namespace passim::app
