// SPDX-License-Identifier: Apache-2.0
// The cycle report: class, layer and opcode tables from the RTL counters and records.
#include "report.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "passim/device/records.hpp"
#include "passim/io/file.hpp"

namespace passim::app {

using nlohmann::json;

namespace {

/// "0".."n_layers-1" for the transformer layers, "head" for the final norm and classifier.
std::string layer_label(std::uint32_t layer, const ModelConfig& c) {
  return layer == std::uint32_t(c.n_layers) ? "head" : std::to_string(layer);
}

/// Cycles and passes per op class of one set of counters (hw::Counter order).
json classes_json(const std::vector<std::uint64_t>& cnt) {
  json j;
  j["total"] = cnt.at(std::size_t(hw::Counter::kTotalCycles));
  for (std::size_t i = 0; i < kOpClassNames.size(); ++i) {
    j["by_class"][std::string(kOpClassNames[i])] = {
        {"cycles", cnt.at(std::size_t(hw::Counter::kCyclesMatmul) + i)},
        {"passes", cnt.at(std::size_t(hw::Counter::kPassesMatmul) + i)}};
  }
  j["dma_hidden"] = cnt.at(std::size_t(hw::Counter::kDmaHidden));
  j["dma_exposed"] = cnt.at(std::size_t(hw::Counter::kDmaExposed));
  return j;
}

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * double(part) / double(whole) : 0.0;
}

/// Prints the class table from the counters, split into prefill and decode when the run had
/// a prefill; returns the JSON totals.
json class_report(const RtlSession& s, std::ostream& err) {
  const auto cnt = s.counters();
  const auto at = [&](hw::Counter k) { return cnt.at(std::size_t(k)); };
  const std::uint64_t total = at(hw::Counter::kTotalCycles);
  const auto prefill = s.counters(Phase::kPrefill), decode = s.counters(Phase::kDecode);
  const bool split = !prefill.empty();
  json j = classes_json(cnt);
  j["mem_stall"] = at(hw::Counter::kMemStall);
  j["unit_stall"] = at(hw::Counter::kUnitStall);
  j["saturated"] = at(hw::Counter::kSaturated);
  j["instructions"] = at(hw::Counter::kInstret);
  j["busy"] = {{"matmul", at(hw::Counter::kBusyMatmul)},
               {"vector", at(hw::Counter::kBusyVector)},
               {"dma", at(hw::Counter::kBusyDma)}};
  j["counters"] = counters_json(cnt);
  if (split) {
    j["by_phase"]["prefill"] = classes_json(prefill);
  }
  if (!decode.empty()) {
    j["by_phase"]["decode"] = classes_json(decode);
  }
  const auto preload = s.counters(Phase::kPreload);
  if (!preload.empty()) {
    j["by_phase"]["preload"] = classes_json(preload);
  }
  fmt::print(err, "\ncycles by op class ({} config, {})\n", s.hw().name,
             s.source() == "model" ? "from the cycle model's closed forms, equal to the RTL's"
                                   : "counters read from the RTL");
  fmt::print(err, "{:<14}{:>14}{:>9}{:>12}", "class", "cycles", "%", "passes");
  fmt::print(err, "{}\n", split ? fmt::format("{:>14}{:>9}{:>14}{:>9}", "prefill", "%",
                                               "decode", "%") : "");
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < kOpClassNames.size(); ++i) {
    const std::size_t c = std::size_t(hw::Counter::kCyclesMatmul) + i;
    sum += cnt.at(c);
    fmt::print(err, "{:<14}{:>14}{:>8.1f}%{:>12}", kOpClassNames[i], cnt.at(c),
               percent(cnt.at(c), total), cnt.at(std::size_t(hw::Counter::kPassesMatmul) + i));
    const auto share = [&](const std::vector<std::uint64_t>& p) {
      return p.empty() ? fmt::format("{:>14}{:>9}", "-", "-")
                       : fmt::format("{:>14}{:>8.1f}%", p.at(c), percent(p.at(c), p.at(0)));
    };
    fmt::print(err, "{}\n", split ? share(prefill) + share(decode) : "");
  }
  fmt::print(err, "{:<14}{:>14}{:>8.1f}%\n", "total", total, 100.0);
  fmt::print(err, "{:<14}{:>14}{:>8.1f}%   (DMA and program fetch waiting on DRAM)\n",
             "memory stall", at(hw::Counter::kMemStall), percent(at(hw::Counter::kMemStall), total));
  const std::uint64_t hidden = at(hw::Counter::kDmaHidden), exposed = at(hw::Counter::kDmaExposed);
  fmt::print(err, "{:<14}{:>14}{:>8.1f}%   (DMA under a MATMUL or vector op: in the dma row and in "
             "that op's, so the rows add up to 100 % + this)\n", "dma hidden", hidden,
             percent(hidden, total));
  fmt::print(err, "{:<14}{:>14}{:>8.1f}%   (DMA with no compute unit busy)\n", "dma exposed",
             exposed, percent(exposed, total));
  if (!preload.empty()) {
    const std::uint64_t pre = preload.at(std::size_t(hw::Counter::kTotalCycles));
    fmt::print(err, "{:<14}{:>14}{:>8.1f}%   (resident weights loaded once, before the first "
               "pass; in the total)\n", "preload", pre, percent(pre, total));
  }
  j["class_totals_sum_to_total_plus_dma_hidden"] = sum == total + hidden;
  return j;
}

/// The array's multiply-accumulates (its records) of one phase, or of all with nullptr; with
/// `matmul_class`, only the weight matmuls' (op class matmul, not attention's MATMUL_ACT).
std::uint64_t array_macs(const std::vector<OpRecord>& recs, const Phase* phase,
                         bool matmul_class = false) {
  std::uint64_t macs = 0;
  for (const OpRecord& r : recs) {
    if (hw::unit_of(r.op) == hw::Unit::kMatmul && (phase == nullptr || r.phase == *phase) &&
        (!matmul_class || r.op_class == std::uint32_t(hw::OpClass::kMatmul))) {
      macs += r.macs;
    }
  }
  return macs;
}

/// Prints each unit's busy share and the array's MAC utilisation (of all cycles, and of the
/// matmul class's cycles), per phase; returns them as JSON.
json utilisation_report(const RtlSession& s, const std::vector<OpRecord>& recs,
                        std::ostream& err) {
  const std::uint64_t macs_per_cycle = s.hw().macs();
  const auto line = [&](const std::vector<std::uint64_t>& cnt, const Phase* phase) {
    const auto at = [&](hw::Counter k) { return cnt.at(std::size_t(k)); };
    const std::uint64_t total = at(hw::Counter::kTotalCycles), macs = array_macs(recs, phase);
    const std::uint64_t mm = at(hw::Counter::kCyclesMatmul);
    const json j = {{"array_busy", percent(at(hw::Counter::kBusyMatmul), total)},
                    {"vector_busy", percent(at(hw::Counter::kBusyVector), total)},
                    {"dma_busy", percent(at(hw::Counter::kBusyDma), total)},
                    {"array_macs", macs},
                    {"mac_utilisation", percent(macs, total * macs_per_cycle)},
                    {"matmul_class_mac_utilisation",
                     percent(array_macs(recs, phase, true), mm * macs_per_cycle)}};
    fmt::print(err, "{:<8} busy: array {:5.1f}%  vector {:5.1f}%  DMA {:5.1f}%   MAC "
               "utilisation: {:5.1f}% of all cycles, {:5.1f}% of the matmul class's\n",
               phase ? phase_name(*phase) : "all", j["array_busy"].get<double>(),
               j["vector_busy"].get<double>(), j["dma_busy"].get<double>(),
               j["mac_utilisation"].get<double>(), j["matmul_class_mac_utilisation"].get<double>());
    return j;
  };
  fmt::print(err, "\nunits ({} MACs in the array; shares of each phase's cycles)\n",
             macs_per_cycle);
  json j;
  j["all"] = line(s.counters(), nullptr);
  for (const Phase p : {Phase::kPreload, Phase::kPrefill, Phase::kDecode}) {
    if (!s.counters(p).empty()) {
      j[std::string(phase_name(p))] = line(s.counters(p), &p);
    }
  }
  return j;
}

/// True when, per op class, the records' cycles equal `cycles_<class>` (control excepted:
/// no unit runs its cycles) and their passes equal `passes_<class>`.
bool records_match_classes(const std::vector<OpRecord>& recs,
                           const std::vector<std::uint64_t>& cnt) {
  std::array<std::uint64_t, kOpClassNames.size()> cycles{}, passes{};
  for (const OpRecord& r : recs) {
    if (r.op_class >= cycles.size()) {
      return false;
    }
    cycles[r.op_class] += r.cycles;
    passes[r.op_class] += r.passes;
  }
  for (std::size_t i = 0; i < cycles.size(); ++i) {
    const bool control = i == std::size_t(hw::OpClass::kControl);
    if ((!control && cycles[i] != cnt.at(std::size_t(hw::Counter::kCyclesMatmul) + i)) ||
        passes[i] != cnt.at(std::size_t(hw::Counter::kPassesMatmul) + i)) {
      return false;
    }
  }
  return true;
}

/// Prints the record cycles summed by layer (rows) and op class (columns, control has no
/// records).
void print_layer_table(const std::vector<OpRecord>& recs, const ModelConfig& c, std::ostream& err) {
  std::map<std::uint32_t, std::array<std::uint64_t, kOpClassNames.size()>> by_layer;
  for (const OpRecord& r : recs) {
    by_layer[r.layer].at(std::min<std::size_t>(r.op_class, kOpClassNames.size() - 1)) += r.cycles;
  }
  const std::size_t classes = std::size_t(hw::OpClass::kControl);
  fmt::print(err, "\ncycles by layer (sum of the instruction records)\n{:<8}", "layer");
  for (std::size_t i = 0; i < classes; ++i) {
    fmt::print(err, "{:>13}", kOpClassNames[i]);
  }
  fmt::print(err, "\n");
  for (const auto& [layer, cycles] : by_layer) {
    fmt::print(err, "{:<8}", layer_label(layer, c));
    for (std::size_t i = 0; i < classes; ++i) {
      fmt::print(err, "{:>13}", cycles[i]);
    }
    fmt::print(err, "\n");
  }
}

/// Prints the records summed by opcode, most cycles first.
void print_op_table(const std::vector<OpRecord>& recs, std::uint64_t total, std::ostream& err) {
  std::map<hw::Opcode, OpRecord> by_op;
  for (const OpRecord& r : recs) {
    OpRecord& o = by_op[r.op];
    o.op = r.op;
    o.count += r.count;
    o.passes += r.passes;
    o.cycles += r.cycles;
    o.stall_cycles += r.stall_cycles;
    o.macs += r.macs;
  }
  std::vector<OpRecord> rows;
  for (const auto& [op, r] : by_op) {
    rows.push_back(r);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const OpRecord& a, const OpRecord& b) { return a.cycles > b.cycles; });
  fmt::print(err, "\ncycles by opcode (sum of the instruction records)\n");
  fmt::print(err, "{:<12}{:>9}{:>14}{:>8}{:>11}{:>12}{:>13}\n", "opcode", "count", "cycles", "%",
             "passes", "stall", "MACs");
  for (const OpRecord& r : rows) {
    fmt::print(err, "{:<12}{:>9}{:>14}{:>7.1f}%{:>11}{:>12}{:>13}\n", hw::opcode_name(r.op),
               r.count, r.cycles, total ? 100.0 * double(r.cycles) / double(total) : 0.0, r.passes,
               r.stall_cycles, r.macs);
  }
}

/// Prints the results clamped by the final requantise or saturate step (the `saturated`
/// counter), by layer and opcode from the records; returns {"total", "records_sum",
/// "by_layer": {layer: {opcode: n}}}. Layers and opcodes without a clamp are left out.
json saturation_report(const std::vector<OpRecord>& recs, const std::vector<std::uint64_t>& cnt,
                       const ModelConfig& c, std::ostream& err) {
  const std::uint64_t total = cnt.at(std::size_t(hw::Counter::kSaturated));
  std::map<std::uint32_t, std::map<std::string, std::uint64_t>> by_layer;
  std::uint64_t sum = 0;
  for (const OpRecord& r : recs) {
    if (r.saturated != 0) {
      by_layer[r.layer][std::string(hw::opcode_name(r.op))] += r.saturated;
      sum += r.saturated;
    }
  }
  json j = {{"total", total}, {"records_sum", sum}, {"by_layer", json::object()}};
  fmt::print(err, "\nsaturated results: {} (clamped to their output range by the final "
             "requantise or saturate step)\n", total);
  for (const auto& [layer, ops] : by_layer) {
    std::string line;
    for (const auto& [op, n] : ops) {
      line += fmt::format("  {} {}", op, n);
      j["by_layer"][layer_label(layer, c)][op] = n;
    }
    fmt::print(err, "  layer {:<6}{}\n", layer_label(layer, c), line);
  }
  return j;
}

/// DMA cycles by what they move (weights, activations, KV cache) and phase: a table on `err`,
/// and {"<moves>": {"count", "cycles", "stall_cycles", "prefill_cycles", "decode_cycles"}},
/// with "preload_cycles" too when resident weights were preloaded.
json dma_moves_report(const std::vector<OpRecord>& recs, std::ostream& err) {
  std::array<OpRecord, kDmaMovesNames.size()> by{};
  std::array<std::array<std::uint64_t, 3>, kDmaMovesNames.size()> by_phase{};  // phase order
  std::uint64_t dma_cycles = 0;
  bool preload = false;
  for (const OpRecord& r : recs) {
    if (r.moves == DmaMoves::kNone) {
      continue;
    }
    OpRecord& o = by.at(std::size_t(r.moves));
    o.count += r.count;
    o.cycles += r.cycles;
    o.stall_cycles += r.stall_cycles;
    by_phase.at(std::size_t(r.moves)).at(std::size_t(r.phase)) += r.cycles;
    dma_cycles += r.cycles;
    preload = preload || r.phase == Phase::kPreload;
  }
  constexpr auto kPre = std::size_t(Phase::kPrefill), kDec = std::size_t(Phase::kDecode);
  json j = json::object();
  fmt::print(err, "\nDMA by what it moves\n{:<14}{:>9}{:>14}{:>8}{}{:>14}{:>14}{:>12}\n",
             "moves", "count", "cycles", "% DMA", preload ? fmt::format("{:>14}", "preload") : "",
             "prefill", "decode", "stall");
  for (std::size_t i = 1; i < by.size(); ++i) {
    const OpRecord& o = by.at(i);
    const auto& ph = by_phase.at(i);
    fmt::print(err, "{:<14}{:>9}{:>14}{:>7.1f}%{}{:>14}{:>14}{:>12}\n", kDmaMovesNames.at(i),
               o.count, o.cycles, percent(o.cycles, dma_cycles),
               preload ? fmt::format("{:>14}", ph[std::size_t(Phase::kPreload)]) : "", ph[kPre],
               ph[kDec], o.stall_cycles);
    json& m = j[std::string(kDmaMovesNames.at(i))];
    m = {{"count", o.count},         {"cycles", o.cycles},          {"stall_cycles", o.stall_cycles},
         {"prefill_cycles", ph[kPre]}, {"decode_cycles", ph[kDec]}};
    if (preload) {
      m["preload_cycles"] = ph[std::size_t(Phase::kPreload)];
    }
  }
  return j;
}

/// The JSON records: one per (phase, layer, opcode, what a DMA moves, op class, shape);
/// preload, then prefill, then decode, by layer, then in order of first appearance.
json records_json(std::vector<OpRecord> recs, const ModelConfig& c) {
  const auto rank = [](Phase p) { return p == Phase::kPreload ? 0 : p == Phase::kPrefill ? 1 : 2; };
  std::stable_sort(recs.begin(), recs.end(), [&](const OpRecord& a, const OpRecord& b) {
    const int pa = rank(a.phase), pb = rank(b.phase);
    return pa != pb ? pa < pb : a.layer < b.layer;
  });
  json out = json::array();
  for (const OpRecord& r : recs) {
    json shape = json::object();
    for (const auto& [name, v] : r.shape) {
      shape[std::string(name)] = v;
    }
    out.push_back(
        {{"phase", std::string(phase_name(r.phase))},
         {"layer", layer_label(r.layer, c)},
         {"op", std::string(hw::opcode_name(r.op))},
         {"class", r.op_class < kOpClassNames.size() ? std::string(kOpClassNames[r.op_class])
                                                     : std::string("unknown")},
         {"shape", shape},
         {"count", r.count},
         {"passes", r.passes},
         {"cycles", r.cycles},
         {"stall_cycles", r.stall_cycles},
         {"macs", r.macs},
         {"saturated", r.saturated}});
    if (r.moves != DmaMoves::kNone) {
      out.back()["moves"] = std::string(kDmaMovesNames.at(std::size_t(r.moves)));
    }
  }
  return out;
}

/// Where each phase's q k^T and p v ran, from the records: MATMUL_ACT with 3 digit groups
/// (q k^T) or 2 (p v) on the array, ATTN_SCORE and ATTN_VALUE on the vector unit (counts of
/// instructions); the transposes of K (MATMUL_ACT with one group) are not counted. Prints one
/// line per phase that has attention, and a notice where a forced --attention fell back.
json attention_report(const std::vector<OpRecord>& recs, const char* requested,
                      std::ostream& err) {
  json j = {{"requested", requested}};
  for (const Phase p : {Phase::kPrefill, Phase::kDecode}) {
    std::uint64_t n[2][2] = {};  // [scores, values][array, vector]
    for (const OpRecord& r : recs) {
      if (r.phase != p) {
        continue;
      }
      std::uint64_t digits = 0;
      for (const auto& [name, v] : r.shape) {
        digits = name == "digits" ? v : digits;
      }
      if (r.op == hw::Opcode::kMatmulAct && (digits == 3 || digits == 2)) {
        n[digits == 3 ? 0 : 1][0] += r.count;
      } else if (r.op == hw::Opcode::kAttnScore || r.op == hw::Opcode::kAttnValue) {
        n[r.op == hw::Opcode::kAttnScore ? 0 : 1][1] += r.count;
      }
    }
    if (n[0][0] + n[0][1] + n[1][0] + n[1][1] == 0) {
      continue;
    }
    const auto unit = [&](int k, const char* vector_op) {
      return n[k][0] > 0 && n[k][1] > 0
                 ? fmt::format("on both ({} MATMUL_ACT, {} {})", n[k][0], n[k][1], vector_op)
             : n[k][0] > 0 ? fmt::format("on the array ({} MATMUL_ACT)", n[k][0])
                           : fmt::format("on the vector unit ({} {})", n[k][1], vector_op);
    };
    const std::string name(phase_name(p));
    j[name] = {{"scores", {{"array", n[0][0]}, {"vector", n[0][1]}}},
               {"values", {{"array", n[1][0]}, {"vector", n[1][1]}}}};
    fmt::print(err, "attention (--attention {}), {}: q k^T {}, p v {}\n", requested, name,
               unit(0, "ATTN_SCORE"), unit(1, "ATTN_VALUE"));
    const std::string req(requested);
    if ((req == "array" || req == "scores") && (n[0][1] > 0 || (req == "array" && n[1][1] > 0))) {
      fmt::print(err, "notice: --attention {}: in {}, passes whose operands do not fit the "
                 "array's memories ran {} on the vector unit (docs/numerics.md 4.13)\n", req,
                 name, n[0][1] > 0 ? "their products" : "p v");
    }
  }
  return j;
}

}  // namespace

json cycle_report(const RtlSession& s, const ModelConfig& c, std::ostream& err) {
  json j = class_report(s, err);
  j["source"] = std::string(s.source());  // "rtl": the RTL's counters; "model": closed forms
  const auto recs = s.op_records();
  j["records_sum_to_class_totals"] = records_match_classes(recs, s.counters());
  print_layer_table(recs, c, err);
  print_op_table(recs, j["total"].get<std::uint64_t>(), err);
  j["saturation"] = saturation_report(recs, s.counters(), c, err);
  j["units"] = utilisation_report(s, recs, err);
  j["dma_by_moves"] = dma_moves_report(recs, err);
  j["records"] = records_json(recs, c);
  return j;
}

json weights_report(const DeviceBackend& backend, const std::string& requested,
                    std::ostream& err) {
  const Residency& r = backend.compiler().residency();
  const hw::HwConfig& h = backend.compiler().hw();
  const std::uint64_t param_bytes = r.params ? (r.param_entries + r.step_entries) * 8 : 0;
  json j = {{"mode", r.weights ? "resident" : "streamed"},
            {"requested", requested},
            {"tiles", r.tiles.size()},
            {"weight_words", r.weight_words},
            {"weight_scratchpad_words", h.weight_depth},
            {"params_resident", r.params},
            {"vector_steps_resident", r.step_entries},
            {"preloaded_bytes", r.weights ? r.weight_bytes + param_bytes : 0},
            {"streamed_bytes_per_pass", r.weights ? 0 : r.weight_bytes}};
  for (const Phase p : {Phase::kPreload, Phase::kPrefill, Phase::kDecode}) {
    j["tile_loads"][std::string(phase_name(p))] = backend.weight_tile_loads(p);
  }
  if (!r.weights) {
    j["reason"] = r.reason;
  }
  fmt::print(err, "\nweights: {} ({} tiles, {} of the weight scratchpad's {} words, "
             "requantisation steps {}, {} vector-unit steps resident): {} bytes preloaded once, "
             "{} bytes streamed per pass; tile loads: preload {}, prefill {}, decode {}\n",
             j["mode"].get<std::string>(), r.tiles.size(), r.weight_words, h.weight_depth,
             r.params ? "resident" : "streamed", r.step_entries,
             j["preloaded_bytes"].get<std::uint64_t>(),
             j["streamed_bytes_per_pass"].get<std::uint64_t>(),
             backend.weight_tile_loads(Phase::kPreload), backend.weight_tile_loads(Phase::kPrefill),
             backend.weight_tile_loads(Phase::kDecode));
  return j;
}

json hardware_json(const hw::HwConfig& h, const RtlOptions& o) {
  const std::string canon = fmt::format("{} R{} C{} L{} in{} w{} v{} p{} a{} prog{}", h.name,
                                        h.array_rows, h.array_cols, h.lanes, h.input_depth,
                                        h.weight_depth, h.vector_depth, h.param_depth,
                                        h.acc_depth, h.prog_depth);
  return {{"config", std::string(h.name)},
          {"config_hash",
           sha256_hex({reinterpret_cast<const std::uint8_t*>(canon.data()), canon.size()})},
          {"array_rows", h.array_rows},
          {"array_cols", h.array_cols},
          {"lanes", h.lanes},
          {"clock_mhz", o.clock_mhz},
          {"dram", {{"latency_ns", o.dram_latency_ns}, {"bytes_per_ns", o.dram_bytes_per_ns}}}};
}

json rtl_cycles(RtlSession& s, const ModelConfig& c, const std::string& requested,
                const Work& work, std::ostream& err) {
  json cycles = cycle_report(s, c, err);
  const auto& backend = dynamic_cast<const DeviceBackend&>(s.backend());
  cycles["weights"] = weights_report(backend, requested, err);
  cycles["attention"] = attention_report(
      s.op_records(), attention_unit_name(backend.compiler().options().attention), err);
  cycles["throughput"] = throughput_report(s, work, err);
  return cycles;
}

void add_rtl_sections(json& j, const RtlSession* s, const json& cycles,
                      const std::string& stopped) {
  if (s != nullptr) {
    j["hardware"] = hardware_json(s->hw(), s->options());
    j["cycles"] = cycles;
  }
  j["partial"] = !stopped.empty();
  if (!stopped.empty()) {
    j["stopped_by"] = stopped;
  }
}

}  // namespace passim::app
