// SPDX-License-Identifier: Apache-2.0
// ModelDevice: CpuDevice's results on the schedule of the accelerator's controller
// (rtl/top/psm_controller.sv), timed by the closed forms of cycle_model.cpp and the DMA model of
// dma_model.cpp; the counters as rtl/top/psm_counters.sv and the records as rtl/top/psm_trace.sv
// form them.
#include "passim/device/model_device.hpp"

#include <algorithm>
#include <map>

#include "passim/device/cycle_model.hpp"

namespace passim {

namespace f = hw::fields;
using hw::get_field;
using hw::Opcode;

namespace {

// Unit indices in the order of psm_trace's records and psm_accel's unit_busy_o.
constexpr unsigned kDma = 0, kMatmul = 1, kVector = 2;

/// The unit index of a unit instruction's unit.
unsigned unit_index(hw::Unit u) {
  return u == hw::Unit::kDma ? kDma : u == hw::Unit::kMatmul ? kMatmul : kVector;
}

/// Element `i` of the vector-scratchpad row starting at word `addr`: its low 16 bits.
std::int64_t lane16(std::span<const std::int32_t> vec, std::size_t lanes, std::size_t addr,
                    std::size_t i) {
  return static_cast<std::int16_t>(vec[addr * lanes + i]);
}

/// The sum over the rows of RMSNORM or LAYERNORM `in` of psm_rsqrt's data-dependent cycles
/// (cycles::rsqrt_extra_cycles) for the input each row gives it (rmsnorm_i8, layernorm_i8 in
/// runtime/src/kernels: sum of squares, or of squared deviations from the rounded mean, plus eps, 1
/// when 0); 0 for the other opcodes.
std::uint64_t rsqrt_extra(const hw::Instr& in, const hw::HwConfig& cfg, const CpuDevice& dev) {
  const auto op = static_cast<Opcode>(get_field(in, f::kOpcode));
  if (op != Opcode::kRmsnorm && op != Opcode::kLayernorm) {
    return 0;
  }
  const std::size_t len = get_field(in, f::rmsnorm::kLen), rows = get_field(in, f::rmsnorm::kRows);
  const std::size_t src = get_field(in, f::rmsnorm::kSrcAddr);
  const std::size_t words = cycles::ceil_div(len, cfg.lanes);
  const std::uint64_t eps = dev.param_memory()[get_field(in, f::rmsnorm::kParamAddr)];
  const auto vec = dev.vector_memory();
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    std::int64_t mean = 0;
    if (op == Opcode::kLayernorm) {  // floor((2 sum + n) / (2 n)), as layernorm_i8 rounds it
      std::int64_t sum = 0;
      for (std::size_t i = 0; i < len; ++i) {
        sum += lane16(vec, cfg.lanes, src + r * words, i);
      }
      const auto num = 2 * sum + std::int64_t(len), den = 2 * std::int64_t(len);
      mean = num / den - ((num % den != 0 && num < 0) ? 1 : 0);
    }
    std::uint64_t ss = eps;
    for (std::size_t i = 0; i < len; ++i) {
      const std::int64_t d = lane16(vec, cfg.lanes, src + r * words, i) - mean;
      ss += static_cast<std::uint64_t>(d * d);
    }
    total += cycles::rsqrt_extra_cycles(ss == 0 ? 1 : ss);
  }
  return total;
}

}  // namespace

ModelDevice::ModelDevice(const hw::HwConfig& cfg, const DramTiming& timing,
                         std::uint64_t dram_bytes)
    : cpu_(cfg, dram_bytes), timing_(timing), port_(timing) {
  cpu_.set_observer(this);
}

std::unique_ptr<Device> make_model_device(const hw::HwConfig& cfg, const DramTiming& timing,
                                          std::uint64_t dram_bytes) {
  return std::make_unique<ModelDevice>(cfg, timing, dram_bytes);
}

RunStats ModelDevice::run(std::uint64_t prog_addr, std::uint32_t len) {
  // Cycle 0 is the first StFetch cycle (STATUS.busy rises); the first instruction is read in the
  // cycle after the last fetch response and issues in the next.
  port_.reset();
  busy_.clear();
  free_ = {0, 0, 0};
  mm_ = {};
  end_ = 0;
  mem_stall_ = unit_stall_ = unmodelled_ = 0;
  last_ = {0, 0, 0};
  if (len >= 1 && len <= cpu_.hw().prog_depth && prog_addr % 16 == 0) {
    issue_ = fetch_cycles(len, port_, mem_stall_) + 2;
  }
  RunStats stats = cpu_.run(prog_addr, len);
  stats.has_cycles = true;
  count(stats);
  std::vector<Busy> order = busy_;
  std::stable_sort(order.begin(), order.end(), [](const Busy& a, const Busy& b) {
    return a.end != b.end ? a.end < b.end : a.record.unit < b.record.unit;
  });
  for (const Busy& b : order) {
    stats.records.push_back(b.record);
  }
  return stats;
}

void ModelDevice::before(const hw::Instr& in, std::uint32_t index, const CpuDevice& dev) {
  // psm_controller.sv StIssue: a unit instruction issues when its unit is idle (a vector one also
  // once a MATMUL's copy-in is over), BARRIER and END when every unit is idle, NOP at once; the
  // next instruction's StRead follows, then its StIssue.
  const auto op = static_cast<Opcode>(get_field(in, f::kOpcode));
  const hw::Unit unit = hw::unit_of(op);
  std::uint64_t x = issue_;
  if (unit != hw::Unit::kControl) {
    const unsigned u = unit_index(unit);
    x = std::max(x, free_[u]);
    if (u == kVector) {
      x = std::max(x, mm_.copy_in_end);
    }
    unit_stall_ += x - issue_;
    const InstrRecord rec = time_unit(in, index, x, dev);
    busy_.push_back({x + 1, x + rec.cycles, unsigned(get_field(in, f::kOpClass)), rec, in});
    check_overlaps(busy_.back());
    last_[u] = busy_.size();
    free_[u] = x + rec.cycles + 1;
  } else if (op == Opcode::kBarrier || op == Opcode::kEnd) {
    x = std::max({x, free_[kDma], free_[kMatmul], free_[kVector], mm_.copy_in_end});
  }
  end_ = x;
  issue_ = x + 2;
}

void ModelDevice::check_overlaps(const Busy& b) {
  // Only the last instruction of each other unit can still run when `b` starts. The model knows
  // the DMA's arbitration against a MATMUL's step and row reads when the MATMUL came first;
  // every other meeting of two units on a memory (rtl/top/psm_accel.sv priorities) is not.
  for (unsigned v = 0; v < 3; ++v) {
    if (v == b.record.unit || last_[v] == 0) {
      continue;
    }
    const Busy& o = busy_[last_[v] - 1];
    if (o.end < b.begin) {
      continue;
    }
    const Busy& dma = b.record.unit == kDma ? b : o;
    const Busy& other = b.record.unit == kDma ? o : b;
    if (dma.record.unit != kDma) {
      ++unmodelled_;  // the matmul stage and the vector unit at once
      continue;
    }
    const auto mem = static_cast<hw::Mem>(get_field(dma.instr, f::dma_load::kMem));
    const bool store = static_cast<Opcode>(get_field(dma.instr, f::kOpcode)) == Opcode::kDmaStore;
    const bool requant = store && get_field(dma.instr, f::dma_store::kRequant) != 0;
    bool shared = mem == hw::Mem::kVector || (mem == hw::Mem::kParam || requant);
    if (other.record.unit == kMatmul) {  // modelled: steps, rows, result, MATMUL first
      const bool dma_first = &dma == &o;
      shared = (store && mem == hw::Mem::kWeight) ||
               (dma_first && (mem != hw::Mem::kWeight || requant)) ||
               (mem == hw::Mem::kVector && mm_.writes.empty());
    }
    unmodelled_ += shared ? 1 : 0;
  }
}

void ModelDevice::after(const hw::Instr& /*in*/, std::uint32_t index, std::uint64_t saturated) {
  for (auto it = busy_.rbegin(); it != busy_.rend(); ++it) {
    if (it->record.index == index) {
      it->record.saturated = saturated;
      return;
    }
  }
}

InstrRecord ModelDevice::time_unit(const hw::Instr& in, std::uint32_t index, std::uint64_t start,
                                   const CpuDevice& dev) {
  const hw::HwConfig& cfg = cpu_.hw();
  const hw::Unit unit = hw::unit_of(static_cast<Opcode>(get_field(in, f::kOpcode)));
  InstrRecord rec;
  rec.index = index;
  rec.unit = static_cast<std::uint8_t>(unit_index(unit));
  rec.passes = instr_passes(in, cfg);
  if (unit == hw::Unit::kDma) {
    const DmaCycles d = dma_cycles(
        in, cfg, start, port_, [this](hw::Mem m, std::uint64_t c) { return dma_granted(m, c); });
    rec.cycles = d.cycles;
    rec.stall_cycles = d.stall;
    mem_stall_ += d.stall;  // the mem_stall counter: the DMA's and the fetch's waits
  } else if (unit == hw::Unit::kMatmul) {
    // The stage copies its steps in under the run when the vector unit is idle at the start, else
    // before it (rtl/top/psm_matmul_stage.sv overlap_q).
    const bool vector_busy = free_[kVector] > start;
    rec.cycles = cycles::matmul_stage_cycles(in, cfg, vector_busy);
    mm_ = matmul_access(in, cfg, start, vector_busy);
  } else {
    rec.cycles = cycles::vector_cycles(in, cfg, rsqrt_extra(in, cfg, dev));
  }
  return rec;
}

/// The accesses of MATMUL `in` started in cycle `start` that refuse the DMA: the stage copies
/// its n steps in one per cycle from its first busy cycle (copy_in_o one cycle longer), then
/// (after StCopyIn when the vector unit was busy, and StStart) psm_matmul reads activation row
/// c in slot cycle c < m of each tile slot (rtl/matmul/psm_matmul.sv, StStream).
ModelDevice::MatmulAccess ModelDevice::matmul_access(const hw::Instr& in, const hw::HwConfig& cfg,
                                                     std::uint64_t start, bool vector_busy) {
  const std::uint64_t m = get_field(in, f::matmul::kM), n = get_field(in, f::matmul::kN);
  MatmulAccess a;
  a.copy_in_begin = start + 1;
  a.copy_in_end = start + 1 + cycles::matmul_copy_in_cycles(in);
  a.run_begin = start + 1 + cycles::matmul_copy_in_before(in, vector_busy) + 1;  // + StStart
  a.slot = std::max<std::uint64_t>({m, cfg.array_rows, cfg.array_cols});
  a.tiles = matmul_result(in, cfg.lanes).digits *
            cycles::ceil_div(get_field(in, f::matmul::kK), cfg.array_rows) *
            cycles::ceil_div(n, cfg.array_cols);
  a.m = m;
  a.copy_out_begin =
      a.run_begin + cycles::matmul_array_cycles(cfg, m, get_field(in, f::matmul::kK), n,
                                                matmul_result(in, cfg.lanes).digits);
  a.writes = cycles::matmul_copy_out_writes(in, cfg);
  return a;
}

bool ModelDevice::dma_granted(hw::Mem mem, std::uint64_t cycle) const {
  // The matmul stage comes first (rtl/top/psm_accel.sv): on the param memory its step reads,
  // on the input memory psm_matmul's row reads, on the vector memory the result's writes.
  if (mem == hw::Mem::kParam && mm_.copy_in_end > mm_.copy_in_begin) {
    return cycle < mm_.copy_in_begin || cycle + 1 >= mm_.copy_in_end;
  }
  if (mem == hw::Mem::kInput && cycle >= mm_.run_begin) {
    const std::uint64_t at = cycle - mm_.run_begin;
    return at / mm_.slot >= mm_.tiles || at % mm_.slot >= mm_.m;
  }
  if (mem == hw::Mem::kVector && cycle >= mm_.copy_out_begin) {  // the result's writes
    const std::uint64_t at = cycle - mm_.copy_out_begin;
    return std::none_of(mm_.writes.begin(), mm_.writes.end(),
                        [at](const cycles::CycleSpan& w) { return at >= w.begin && at < w.end; });
  }
  return true;
}

void ModelDevice::count(RunStats& stats) const {
  // psm_counters.sv: every cycle of the run counts in total_cycles; a cycle counts once in each
  // class with a busy unit, in control when no unit is busy; dma_hidden when the DMA is busy beside
  // the matmul or vector unit, dma_exposed when alone.
  auto& cnt = stats.counters;
  const auto at = [&cnt](hw::Counter c) -> std::uint64_t& { return cnt[std::size_t(c)]; };
  const std::uint64_t total = end_ + 1;
  at(hw::Counter::kTotalCycles) = total;
  at(hw::Counter::kMemStall) = mem_stall_;
  at(hw::Counter::kUnitStall) = unit_stall_;
  // Sweep the busy intervals: at each boundary the set of busy units changes.
  std::map<std::uint64_t, std::vector<std::pair<int, const Busy*>>> edges;
  for (const Busy& b : busy_) {
    edges[b.begin].push_back({+1, &b});
    edges[b.end + 1].push_back({-1, &b});
  }
  std::array<const Busy*, 3> on{};
  std::uint64_t prev = 0, any_busy = 0;
  for (const auto& [cycle, list] : edges) {
    const std::uint64_t span = cycle - prev;
    std::array<bool, 8> cls{};
    for (const Busy* b : on) {
      if (b != nullptr) {
        cls[b->op_class] = true;
      }
    }
    for (std::size_t c = 0; c < cls.size() && c < 7; ++c) {
      at(hw::Counter(std::size_t(hw::Counter::kCyclesMatmul) + c)) += cls[c] ? span : 0;
    }
    const bool dma = on[kDma] != nullptr, compute = on[kMatmul] || on[kVector];
    at(hw::Counter::kBusyDma) += dma ? span : 0;
    at(hw::Counter::kBusyMatmul) += on[kMatmul] ? span : 0;
    at(hw::Counter::kBusyVector) += on[kVector] ? span : 0;
    at(hw::Counter::kDmaHidden) += dma && compute ? span : 0;
    at(hw::Counter::kDmaExposed) += dma && !compute ? span : 0;
    any_busy += dma || compute ? span : 0;
    for (const auto& [delta, b] : list) {
      on[b->record.unit] = delta > 0 ? b : nullptr;
    }
    prev = cycle;
  }
  at(hw::Counter::kCyclesControl) += total - any_busy;
}

}  // namespace passim
