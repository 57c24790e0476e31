// SPDX-License-Identifier: Apache-2.0
// The tables of a report's "cycles" section, read back from its JSON, and the deltas of two.
#include "report_tables.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "options.hpp"
#include "passim/device/records.hpp"
#include "passim/io/file.hpp"

namespace passim::app {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxReportBytes = std::size_t{1} << 30;
constexpr std::array<const char*, 3> kPhases = {"preload", "prefill", "decode"};

/// `j[key]` when present, else null.
json field(const json& j, std::string_view key) {
  const auto it = j.find(key);
  return it == j.end() ? json() : *it;
}

/// part / whole in %, or null when whole is 0.
json percent(double part, double whole) { return whole != 0 ? json(100.0 * part / whole) : json(); }

/// Layers in model order: "0", "1", ..., "10" (numbers by value), then the others ("head").
bool layer_before(const std::string& a, const std::string& b) {
  const auto numeric = [](const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
  };
  const bool na = numeric(a), nb = numeric(b);
  if (na != nb) {
    return na;
  }
  return na && a.size() != b.size() ? a.size() < b.size() : a < b;
}

Table classes_table(const json& c) {
  Table t{"classes", "cycles by op class (RTL counters)", {"class", "cycles", "%", "passes"}, {}};
  const double total = c.at("total").get<double>();
  std::vector<std::string> phases;
  for (const char* p : kPhases) {
    if (c.contains("by_phase") && c["by_phase"].contains(p)) {
      phases.emplace_back(p);
      t.columns.push_back(fmt::format("{} cycles", p));
    }
  }
  for (const std::string_view name : kOpClassNames) {
    const json& k = c.at("by_class").at(name);
    Table::Row row{std::string(name), {k.at("cycles"), percent(k.at("cycles"), total),
                                       k.at("passes")}};
    for (const std::string& p : phases) {
      row.cells.push_back(c["by_phase"][p].at("by_class").at(name).at("cycles"));
    }
    t.rows.push_back(std::move(row));
  }
  for (const char* extra : {"total", "dma_hidden", "dma_exposed", "mem_stall"}) {
    Table::Row row{extra, {c.at(extra), percent(c.at(extra), total), json()}};
    for (const std::string& p : phases) {
      const json& ph = c["by_phase"][p];
      row.cells.push_back(std::string_view(extra) == "mem_stall" ? json() : ph.at(extra));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table phases_table(const json& c) {
  Table t{"phases", "cycles by phase and op class (RTL counters)", {"phase", "total"}, {}};
  for (const std::string_view name : kOpClassNames) {
    t.columns.emplace_back(name);
  }
  for (const char* p : kPhases) {
    if (!c.contains("by_phase") || !c["by_phase"].contains(p)) {
      continue;
    }
    const json& ph = c["by_phase"][p];
    Table::Row row{p, {ph.at("total")}};
    for (const std::string_view name : kOpClassNames) {
      row.cells.push_back(ph.at("by_class").at(name).at("cycles"));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

/// Record cycles summed by layer and op class (control has no records).
std::map<std::string, std::map<std::string, std::uint64_t>> cycles_by_layer(const json& c) {
  std::map<std::string, std::map<std::string, std::uint64_t>> by;
  for (const json& r : c.at("records")) {
    by[r.at("layer").get<std::string>()][r.at("class").get<std::string>()] +=
        r.at("cycles").get<std::uint64_t>();
  }
  return by;
}

std::vector<std::string> sorted_layers(const std::vector<std::string>& layers) {
  std::vector<std::string> out = layers;
  std::sort(out.begin(), out.end(), layer_before);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Table layers_table(const json& c) {
  Table t{"layers", "cycles by layer and op class (sum of the instruction records)", {"layer"}, {}};
  const std::size_t classes = kOpClassNames.size() - 1;  // no control
  for (std::size_t i = 0; i < classes; ++i) {
    t.columns.emplace_back(kOpClassNames[i]);
  }
  t.columns.emplace_back("total");
  const auto by = cycles_by_layer(c);
  std::vector<std::string> layers;
  for (const auto& [layer, cls] : by) {
    layers.push_back(layer);
  }
  for (const std::string& layer : sorted_layers(layers)) {
    Table::Row row{layer, {}};
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < classes; ++i) {
      const auto it = by.at(layer).find(std::string(kOpClassNames[i]));
      const std::uint64_t v = it == by.at(layer).end() ? 0 : it->second;
      row.cells.emplace_back(v);
      sum += v;
    }
    row.cells.emplace_back(sum);
    t.rows.push_back(std::move(row));
  }
  return t;
}

/// Records summed by opcode: {op: {count, cycles, passes, stall_cycles, macs}}.
std::map<std::string, std::map<std::string, std::uint64_t>> sums_by_op(const json& c) {
  std::map<std::string, std::map<std::string, std::uint64_t>> by;
  for (const json& r : c.at("records")) {
    auto& o = by[r.at("op").get<std::string>()];
    for (const char* k : {"count", "cycles", "passes", "stall_cycles", "macs"}) {
      o[k] += r.at(k).get<std::uint64_t>();
    }
  }
  return by;
}

Table opcodes_table(const json& c) {
  Table t{"opcodes", "cycles by opcode (sum of the instruction records), most cycles first",
          {"opcode", "count", "cycles", "%", "passes", "stall", "MACs"}, {}};
  const double total = c.at("total").get<double>();
  for (const auto& [op, s] : sums_by_op(c)) {
    t.rows.push_back({op, {s.at("count"), s.at("cycles"), percent(double(s.at("cycles")), total),
                           s.at("passes"), s.at("stall_cycles"), s.at("macs")}});
  }
  std::stable_sort(t.rows.begin(), t.rows.end(), [](const Table::Row& a, const Table::Row& b) {
    return a.cells[1].get<std::uint64_t>() > b.cells[1].get<std::uint64_t>();
  });
  return t;
}

Table units_table(const json& c) {
  Table t{"units", "busy share of each unit and the array's MAC utilisation, % of the phase's cycles",
          {"phase", "array busy", "vector busy", "DMA busy", "MAC util.", "matmul-class MAC util."},
          {}};
  const json units = field(c, "units");
  for (const char* p : {"all", "preload", "prefill", "decode"}) {
    if (units.is_object() && units.contains(p)) {
      const json& u = units[p];
      t.rows.push_back({p, {u.at("array_busy"), u.at("vector_busy"), u.at("dma_busy"),
                            u.at("mac_utilisation"), u.at("matmul_class_mac_utilisation")}});
    }
  }
  return t;
}

Table dma_table(const json& c) {
  Table t{"dma", "DMA by what it moves (instruction records)",
          {"moves", "count", "cycles", "stall", "preload", "prefill", "decode"}, {}};
  const json moves = field(c, "dma_by_moves");
  for (const char* m : {"weights", "activations", "kv_cache"}) {
    if (moves.is_object() && moves.contains(m)) {
      const json& d = moves[m];
      t.rows.push_back({m, {d.at("count"), d.at("cycles"), d.at("stall_cycles"),
                            field(d, "preload_cycles"), d.at("prefill_cycles"),
                            d.at("decode_cycles")}});
    }
  }
  return t;
}

Table throughput_table(const json& c) {
  const json tp = field(c, "throughput");
  Table t{"throughput", "", {"phase", "items", "cycles", "seconds", "per second"}, {}};
  if (!tp.is_object()) {
    t.title = "the accelerator's throughput: not in this report (an older format)";
    return t;
  }
  t.title = fmt::format("the accelerator's throughput at {} MHz ({} per second of simulated time)",
                        tp.at("clock_mhz").get<double>(), tp.at("unit").get<std::string>());
  for (const char* p : {"all", "prefill", "decode"}) {
    if (tp.contains(p)) {
      const json& r = tp[p];
      t.rows.push_back({p, {r.at("items"), r.at("cycles"), r.at("seconds"), r.at("per_second")}});
    }
  }
  return t;
}

bool wanted(const std::vector<std::string>& only, const char* name) {
  return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
}

std::string cell_text(const json& v) {
  if (v.is_null()) {
    return "-";
  }
  if (v.is_number_integer()) {
    return fmt::format("{}", v.get<std::int64_t>());
  }
  if (v.is_number()) {
    const double d = v.get<double>();
    return std::abs(d) < 1 ? fmt::format("{:.4g}", d)
                                                  : fmt::format("{:.2f}", d);
  }
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) {
    return s;
  }
  std::string q = "\"";
  for (const char ch : s) {
    q.append(ch == '"' ? 2 : 1, ch);
  }
  return q + "\"";
}

}  // namespace

const std::vector<std::string>& compare_table_names() {
  static const std::vector<std::string> names = {"classes", "phases", "layers", "opcodes"};
  return names;
}

const std::vector<std::string>& report_table_names() {
  static const std::vector<std::string> names = {"classes", "phases", "layers", "opcodes",
                                                 "units",   "dma",    "throughput"};
  return names;
}

json read_cycle_report(const std::string& path) {
  const std::vector<std::uint8_t> bytes = read_file(path, kMaxReportBytes);
  constexpr int kMaxDepth = 64;  // reports nest about 6 deep; deeper is not a report
  bool too_deep = false;
  const json::parser_callback_t limit = [&](int depth, json::parse_event_t, json&) {
    too_deep = too_deep || depth > kMaxDepth;
    return depth <= kMaxDepth;
  };
  json r = json::parse(bytes.begin(), bytes.end(), limit, false);
  if (r.is_discarded() || !r.is_object() || too_deep) {
    throw std::runtime_error(fmt::format(
        "{}: expected a JSON report (passim ... --report), found {}", path,
        too_deep ? fmt::format("values nested deeper than {} levels", kMaxDepth)
        : r.is_discarded() ? "invalid JSON" : "no JSON object"));
  }
  const json version = field(r, "format_version");
  if (version != json(kReportVersion)) {
    throw std::runtime_error(fmt::format("{}: format_version: expected {}, found {}", path,
                                         kReportVersion, version.dump()));
  }
  if (!field(r, "cycles").is_object()) {
    throw std::runtime_error(fmt::format(
        "{}: cycles: expected the cycle section of a run on the simulated accelerator "
        "(--backend rtl), found none (backend {})", path,
        field(r, "backend").is_string() ? field(r, "backend").get<std::string>() : "?"));
  }
  check_cycle_report(r, path);
  return r;
}

std::vector<Table> report_tables(const json& r, const std::vector<std::string>& only) {
  const json& c = r.at("cycles");
  std::vector<Table> out;
  using Maker = Table (*)(const json&);
  const std::vector<std::pair<const char*, Maker>> makers = {
      {"classes", classes_table}, {"phases", phases_table}, {"layers", layers_table},
      {"opcodes", opcodes_table}, {"units", units_table},   {"dma", dma_table},
      {"throughput", throughput_table}};
  for (const auto& [name, make] : makers) {
    if (wanted(only, name)) {
      out.push_back(make(c));
    }
  }
  return out;
}

void print_tables(const std::vector<Table>& tables, bool csv, std::ostream& out) {
  for (std::size_t n = 0; n < tables.size(); ++n) {
    const Table& t = tables[n];
    std::vector<std::vector<std::string>> lines = {t.columns};
    for (const Table::Row& row : t.rows) {
      lines.push_back({row.key});
      for (const json& v : row.cells) {
        lines.back().push_back(cell_text(v));
      }
    }
    if (csv) {
      fmt::print(out, "{}", n > 0 ? "\n" : "");
      if (tables.size() > 1) {
        fmt::print(out, "# {}\n", t.name);
      }
      for (const auto& line : lines) {
        std::string s;
        for (std::size_t i = 0; i < line.size(); ++i) {
          s += fmt::format("{}{}", i ? "," : "", csv_field(line[i]));
        }
        fmt::print(out, "{}\n", s);
      }
      continue;
    }
    std::vector<std::size_t> width(t.columns.size(), 0);
    for (const auto& line : lines) {
      for (std::size_t i = 0; i < line.size() && i < width.size(); ++i) {
        width[i] = std::max(width[i], line[i].size());
      }
    }
    fmt::print(out, "{}{}: {}\n", n > 0 ? "\n" : "", t.name, t.title);
    for (const auto& line : lines) {
      std::string s = fmt::format("{:<{}}", line[0], width[0] + 2);
      for (std::size_t i = 1; i < line.size(); ++i) {
        s += fmt::format("{:>{}}", line[i], width[i] + 2);
      }
      fmt::print(out, "{}\n", s);
    }
  }
}

}  // namespace passim::app
