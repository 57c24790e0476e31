// SPDX-License-Identifier: Apache-2.0
// `passim sweep collect`: a directory of reports as one CSV (sweep.hpp).
#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report_tables.hpp"
#include "sweep.hpp"

namespace passim::app {

namespace {

using nlohmann::json;

/// The op classes, in the report's order.
constexpr std::array<const char*, 7> kClasses = {"matmul", "attention", "softmax", "norm",
                                                 "other_vector", "dma", "control"};

std::string csv_cell(const json& v) {
  if (v.is_null()) {
    return "";
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s.find_first_of(",\"\n") == std::string::npos) {
      return s;
    }
    std::string q = "\"";
    for (const char c : s) {
      q += c == '"' ? std::string("\"\"") : std::string(1, c);
    }
    return q + "\"";
  }
  if (v.is_number_float()) {
    return fmt::format("{:.6g}", v.get<double>());
  }
  return v.dump();
}

/// `j` at `path` ("a/b/c"), or null when a step is missing.
json at(const json& j, const std::string& path) {
  const json* p = &j;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string key = path.substr(start, slash - start);
    if (!p->is_object() || !p->contains(key)) {
      return nullptr;
    }
    p = &(*p)[key];
    start = slash + 1;
  }
  return *p;
}

/// One report's row: (column, value) pairs.
std::vector<std::pair<std::string, json>> row(const json& r, const std::string& file) {
  const bool encode = r.contains("sequence_tokens");
  const json& tokens = encode ? r["sequence_tokens"] : r.value("prompt_tokens", json());
  if (!tokens.is_array()) {
    throw std::runtime_error(fmt::format("{}: {}: expected an array of token ids, found {}",
                                         file, encode ? "sequence_tokens" : "prompt_tokens",
                                         tokens.type_name()));
  }
  const json seq = tokens.size();
  std::vector<std::pair<std::string, json>> c{
      {"report", std::filesystem::path(file).filename().string()},
      {"tool", at(r, "tool")},
      {"model", !encode                ? at(r, "model/path")
                : r["model"].contains("arch") ? at(r, "model/arch")
                                              : at(r, "model/name")},
      {"layers", at(r, "model/config/n_layers")},
      {"norm", at(r, "model/config/norm")},
      {"config", at(r, "hardware/config")},
      {"array_rows", at(r, "hardware/array_rows")},
      {"array_cols", at(r, "hardware/array_cols")},
      {"lanes", at(r, "hardware/lanes")},
      {"config_hash", at(r, "hardware/config_hash")},  // tells apart configs named alike
      {"clock_mhz", at(r, "hardware/clock_mhz")},
      {"dram_latency_ns", at(r, "hardware/dram/latency_ns")},
      {"dram_bytes_per_ns", at(r, "hardware/dram/bytes_per_ns")},
      {"softmax", at(r, "softmax/mode")},
      {"seq", seq},
      {"partial", r.value("partial", false)},
      {"total_cycles", at(r, "cycles/total")},
      {"prefill_cycles", at(r, "cycles/by_phase/prefill/total")},
      {"decode_cycles", at(r, "cycles/by_phase/decode/total")},
  };
  for (const char* cls : kClasses) {
    c.emplace_back(fmt::format("cycles_{}", cls), at(r, fmt::format("cycles/by_class/{}/cycles",
                                                                    cls)));
  }
  for (const char* cls : {"softmax", "norm"}) {
    c.emplace_back(fmt::format("passes_{}", cls), at(r, fmt::format("cycles/by_class/{}/passes",
                                                                   cls)));
  }
  for (const char* k : {"array_busy", "vector_busy", "dma_busy", "mac_utilisation",
                        "matmul_class_mac_utilisation"}) {
    c.emplace_back(fmt::format("{}_pct", k), at(r, fmt::format("cycles/units/all/{}", k)));
  }
  c.emplace_back("dma_hidden", at(r, "cycles/dma_hidden"));
  c.emplace_back("dma_exposed", at(r, "cycles/dma_exposed"));
  c.emplace_back("weights", at(r, "cycles/weights/mode"));
  c.emplace_back("throughput_unit", at(r, "cycles/throughput/unit"));
  c.emplace_back("items_per_second", at(r, "cycles/throughput/all/per_second"));
  return c;
}

}  // namespace

std::size_t sweep_collect(const std::string& dir, std::ostream& out_stream,
                          const std::string& exclude) {
  std::ostringstream out;  // written to out_stream only once every report has been read
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) {
    throw std::runtime_error(fmt::format("sweep collect {}: expected a directory of reports, "
                                         "found {}", dir, fs::exists(dir) ? "a file" : "nothing"));
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::error_code ec;
    const bool excluded = !exclude.empty() && fs::equivalent(e.path(), exclude, ec);
    if (e.is_regular_file() && e.path().extension() == ".json" && !excluded) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    throw std::runtime_error(fmt::format("sweep collect {}: expected the points' JSON reports "
                                         "(*.json), found none", dir));
  }
  std::size_t rows = 0;
  for (const fs::path& f : files) {
    const json r = read_cycle_report(f.string());
    const auto cells = row(r, f.string());
    std::string line;
    if (rows == 0) {
      for (const auto& [name, value] : cells) {
        line += line.empty() ? "" : ",";
        line += name;
      }
      out << line << '\n';
      line.clear();
    }
    for (const auto& [name, value] : cells) {
      line += line.empty() ? "" : ",";
      line += csv_cell(value);
    }
    out << line << '\n';
    ++rows;
  }
  out_stream << out.str();
  return rows;
}

}  // namespace passim::app
