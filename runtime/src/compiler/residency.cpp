// SPDX-License-Identifier: Apache-2.0
// The resident plan: the weight tiles of one step at fixed weight-scratchpad
// words and their requantisation steps at fixed parameter entries, when the
// scratchpads hold them all.
#include "passim/compiler/residency.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace passim {

namespace {

namespace dl = hw::fields::dma_load;

struct Load {
  hw::Mem mem;
  std::uint32_t layer;
  std::uint64_t dram, stride;
  std::size_t spad, rows, row_len;
};

/// The DMA_LOADs of `programs` in program order.
std::vector<Load> loads_of(const std::vector<std::vector<hw::Instr>>& programs) {
  std::vector<Load> out;
  for (const auto& prog : programs) {
    for (const hw::Instr& in : prog) {
      if (static_cast<hw::Opcode>(hw::get_field(in, hw::fields::kOpcode)) != hw::Opcode::kDmaLoad) {
        continue;
      }
      out.push_back({.mem = static_cast<hw::Mem>(hw::get_field(in, dl::kMem)),
                     .layer = std::uint32_t(hw::get_field(in, hw::fields::kLayer)),
                     .dram = hw::get_field(in, dl::kDramAddr),
                     .stride = hw::get_field(in, dl::kDramStride),
                     .spad = std::size_t(hw::get_field(in, dl::kSpadAddr)),
                     .rows = std::size_t(hw::get_field(in, dl::kRows)),
                     .row_len = std::size_t(hw::get_field(in, dl::kRowLen))});
    }
  }
  return out;
}

/// Collects the tiles (a weight load and the parameter load after it) and the
/// parameter entries the other loads use; fills everything but the fit.
void collect_tiles(const std::vector<Load>& loads, const hw::HwConfig& cfg, Residency& r) {
  for (std::size_t i = 0; i < loads.size(); ++i) {
    const Load& a = loads[i];
    if (a.mem == hw::Mem::kWeight && i + 1 < loads.size() && loads[i + 1].mem == hw::Mem::kParam) {
      const Load& p = loads[++i];
      if (r.tiles.count(a.dram) == 0) {
        r.tiles[a.dram] = {.dram = a.dram,
                           .rq = p.dram,
                           .k = a.rows,
                           .cols = a.row_len,
                           .stride = a.stride,
                           .layer = a.layer,
                           .w_addr = r.weight_words,
                           .rq_addr = r.param_entries};
        r.weight_words += a.rows * ((a.row_len + cfg.array_cols - 1) / cfg.array_cols);
        r.param_entries += a.row_len;
        r.weight_bytes += std::uint64_t(a.rows) * a.row_len;
      }
    } else if (a.mem == hw::Mem::kParam) {
      r.param_base = std::max(r.param_base, a.spad + a.rows * a.row_len);
    }
  }
}

}  // namespace

const char* weights_mode_name(WeightsMode m) noexcept {
  switch (m) {
    case WeightsMode::kResident:
      return "resident";
    case WeightsMode::kStreamed:
      return "streamed";
    default:
      return "auto";
  }
}

Residency plan_residency(const std::vector<std::vector<hw::Instr>>& step, const hw::HwConfig& cfg,
                         std::size_t param_base, WeightsMode mode) {
  Residency r;
  r.param_base = param_base;
  collect_tiles(loads_of(step), cfg, r);
  if (mode == WeightsMode::kStreamed) {
    r.reason = "--weights streamed";
  } else if (r.weight_words > cfg.weight_depth) {
    r.reason = fmt::format(
        "the weight tiles take {} words, the weight scratchpad of config {} "
        "holds {}",
        r.weight_words, cfg.name, cfg.weight_depth);
  }
  r.weights = r.reason.empty();
  r.params = r.weights && r.param_base + r.param_entries <= cfg.param_depth;
  for (auto& [dram, t] : r.tiles) {
    t.rq_addr += r.param_base;
  }
  return r;
}

void place_steps(Residency& r, const std::map<std::uint64_t, StepBlock>& blocks,
                 const hw::HwConfig& cfg) {
  // Smallest blocks first: a load costs about the same fixed time whatever its length, so
  // this removes the most loads from the parameter memory that is left.
  r.steps.clear();
  r.step_entries = 0;
  if (!r.params) {
    return;
  }
  std::vector<std::pair<std::size_t, std::uint64_t>> order;  // (count, dram)
  for (const auto& [dram, block] : blocks) {
    order.emplace_back(block.count, dram);
  }
  std::sort(order.begin(), order.end());
  const std::size_t base = r.param_base + r.param_entries;
  for (const auto& [count, dram] : order) {
    if (base + r.step_entries + count > cfg.param_depth) {
      break;
    }
    r.steps[dram] = {.dram = dram, .count = count, .addr = base + r.step_entries,
                     .layer = blocks.at(dram).layer};
    r.step_entries += count;
  }
}

}  // namespace passim
