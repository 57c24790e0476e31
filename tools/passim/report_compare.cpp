// SPDX-License-Identifier: Apache-2.0
// `passim report compare`: whether two reports may be compared, their delta tables, and the
// totals and classes that regressed beyond a threshold.
#include <algorithm>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "passim/device/records.hpp"
#include "report_tables.hpp"

namespace passim::app {

using nlohmann::json;

namespace {

using Cycles = std::vector<std::pair<std::string, std::uint64_t>>;  // row key, cycles

std::uint64_t cycles_at(const json& j, const char* key) { return j.at(key).get<std::uint64_t>(); }

Cycles class_cycles(const json& c) {
  Cycles out;
  for (const std::string_view name : kOpClassNames) {
    out.emplace_back(name, c.at("by_class").at(name).at("cycles").get<std::uint64_t>());
  }
  for (const char* extra : {"total", "dma_hidden", "dma_exposed", "mem_stall"}) {
    out.emplace_back(extra, cycles_at(c, extra));
  }
  return out;
}

Cycles phase_cycles(const json& c) {
  Cycles out;
  for (const char* p : {"preload", "prefill", "decode"}) {
    if (c.contains("by_phase") && c["by_phase"].contains(p)) {
      out.emplace_back(p, cycles_at(c["by_phase"][p], "total"));
    }
  }
  return out;
}

/// Record cycles summed by `key` ("layer" or "op"), in order of first appearance.
Cycles record_cycles(const json& c, const char* key) {
  Cycles out;
  std::map<std::string, std::size_t> index;
  for (const json& r : c.at("records")) {
    const std::string k = r.at(key).get<std::string>();
    const auto [it, added] = index.emplace(k, out.size());
    if (added) {
      out.emplace_back(k, 0);
    }
    out[it->second].second += r.at("cycles").get<std::uint64_t>();
  }
  return out;
}

/// Rows of A (in A's order), then those only B has; a side without the row shows "-".
Table delta_table(const char* name, const char* title, const char* key, const Cycles& a,
                  const Cycles& b) {
  Table t{name, title, {key, "A", "B", "B - A", "change %"}, {}};
  std::vector<std::string> keys;
  for (const auto* side : {&a, &b}) {
    for (const auto& [k, v] : *side) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
        keys.push_back(k);
      }
    }
  }
  const auto find = [](const Cycles& c, const std::string& k) -> json {
    const auto it = std::find_if(c.begin(), c.end(), [&](const auto& p) { return p.first == k; });
    return it == c.end() ? json() : json(it->second);
  };
  for (const std::string& k : keys) {
    const json va = find(a, k), vb = find(b, k);
    const double da = va.is_null() ? 0.0 : va.get<double>();
    const double db = vb.is_null() ? 0.0 : vb.get<double>();
    t.rows.push_back({k, {va, vb, json(std::int64_t(db) - std::int64_t(da)),
                          da != 0 ? json(100.0 * (db - da) / da) : json()}});
  }
  return t;
}

/// The model's identity in a report: the file's SHA-256 when it has one, else its
/// description without the calibration (a random encoder: name, seed, shape).
json model_identity(const json& r) {
  const json m = r.value("model", json::object());
  if (m.contains("sha256")) {
    return m["sha256"];
  }
  json id = m;
  id.erase("calibration");
  id.erase("path");
  return id;
}

}  // namespace

/// What a report's run processed: the prompt and sampling (run), the sequence (encode), the
/// clips (classify).
json workload(const json& r) {
  json w = json::object();
  for (const char* key : {"prompt", "sampling", "sequence_tokens"}) {
    if (r.contains(key)) {
      w[key] = r[key];
    }
  }
  if (r.contains("clips") && r["clips"].is_array()) {
    for (const json& c : r["clips"]) {
      w["clips"].push_back(c.is_object() ? c.value("path", json()) : json());
    }
  }
  return w;
}

/// The first top-level key whose values differ in `a` and `b`.
std::string first_difference(const json& a, const json& b) {
  for (const auto& [k, v] : a.items()) {
    if (!b.contains(k) || b[k] != v) {
      return k;
    }
  }
  for (const auto& [k, v] : b.items()) {
    if (!a.contains(k)) {
      return k;
    }
  }
  return "?";
}

std::optional<std::string> incomparable(const json& a, const json& b) {
  for (const auto* r : {&a, &b}) {
    if (r->value("partial", false)) {
      return fmt::format("{} is a partial run (stopped by the watchdog)", r == &a ? "A" : "B");
    }
  }
  if (a.value("tool", "") != b.value("tool", "")) {
    return fmt::format("tool: A is {}, B is {} (different measurements)", a.value("tool", "?"),
                       b.value("tool", "?"));
  }
  const std::string sa = a["cycles"].value("source", "rtl"), sb = b["cycles"].value("source", "rtl");
  if (sa != sb) {
    return fmt::format("cycles.source: A's cycles come from {}, B's from {}", sa, sb);
  }
  const json ma = model_identity(a), mb = model_identity(b);
  if (ma != mb) {
    if (ma.is_string() || mb.is_string()) {
      return fmt::format("model.sha256: A ran {}, B ran {} (different models)",
                         ma.is_string() ? ma.get<std::string>() : "a model without one",
                         mb.is_string() ? mb.get<std::string>() : "a model without one");
    }
    return fmt::format("model.{} differs (different models)", first_difference(ma, mb));
  }
  const json wa = workload(a), wb = workload(b);
  if (wa != wb) {
    return fmt::format("{} differs (different workloads)", first_difference(wa, wb));
  }
  return std::nullopt;
}

std::vector<Table> compare_tables(const json& a, const json& b,
                                  const std::vector<std::string>& only) {
  const json &ca = a.at("cycles"), &cb = b.at("cycles");
  std::vector<Table> out;
  const auto want = [&](const char* n) {
    return only.empty() || std::find(only.begin(), only.end(), n) != only.end();
  };
  if (want("classes")) {
    out.push_back(delta_table("classes", "cycles by op class, B against A", "class",
                              class_cycles(ca), class_cycles(cb)));
  }
  if (want("phases")) {
    out.push_back(delta_table("phases", "cycles by phase, B against A", "phase",
                              phase_cycles(ca), phase_cycles(cb)));
  }
  if (want("layers")) {
    out.push_back(delta_table("layers", "cycles by layer (instruction records), B against A",
                              "layer", record_cycles(ca, "layer"), record_cycles(cb, "layer")));
  }
  if (want("opcodes")) {
    Table t = delta_table("opcodes", "cycles by opcode (instruction records), B against A, "
                          "most cycles first", "opcode", record_cycles(ca, "op"),
                          record_cycles(cb, "op"));
    const auto most = [](const Table::Row& r) {
      return std::max(r.cells[0].is_null() ? 0 : r.cells[0].get<std::uint64_t>(),
                      r.cells[1].is_null() ? 0 : r.cells[1].get<std::uint64_t>());
    };
    std::stable_sort(t.rows.begin(), t.rows.end(),
                     [&](const Table::Row& x, const Table::Row& y) { return most(x) > most(y); });
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> regressions(const json& a, const json& b, double threshold_percent) {
  const json &ca = a.at("cycles"), &cb = b.at("cycles");
  Cycles ta = {{"total", cycles_at(ca, "total")}}, tb = {{"total", cycles_at(cb, "total")}};
  for (const auto& [k, v] : phase_cycles(ca)) {
    ta.emplace_back(k + " total", v);
  }
  for (const auto& [k, v] : phase_cycles(cb)) {
    tb.emplace_back(k + " total", v);
  }
  for (const std::string_view name : kOpClassNames) {
    const std::string k = "class " + std::string(name);
    ta.emplace_back(k, ca.at("by_class").at(name).at("cycles").get<std::uint64_t>());
    tb.emplace_back(k, cb.at("by_class").at(name).at("cycles").get<std::uint64_t>());
  }
  std::vector<std::string> out;
  for (const auto& [k, vb] : tb) {
    const auto it = std::find_if(ta.begin(), ta.end(), [&](const auto& p) { return p.first == k; });
    const std::uint64_t va = it == ta.end() ? 0 : it->second;
    const double grow = va != 0 ? 100.0 * (double(vb) - double(va)) / double(va) : 0.0;
    if ((va == 0 && vb > 0) || (va != 0 && grow > threshold_percent)) {
      out.push_back(va == 0 ? fmt::format("{}: 0 -> {} (new)", k, vb)
                            : fmt::format("{}: {} -> {} ({:+.1f} %)", k, va, vb, grow));
    }
  }
  return out;
}

}  // namespace passim::app
