// SPDX-License-Identifier: Apache-2.0
/// \file `AccelModel` on top of one Verilated psm_accel class (Verilator 5 C++ API). Included
/// by accel_model.cpp, which each per-config model library compiles with its own class.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <verilated.h>
#if VM_TRACE_FST
#include <gtkwave/fstapi.h>
#include <verilated_fst_c.h>
#endif

#include "passim/sim/accel_model.hpp"

namespace passim::sim {

template <typename V>
class VerilatedAccel final : public AccelModel {
 public:
  VerilatedAccel(const hw::HwConfig& cfg, bool trace) : cfg_(cfg), trace_on_(trace) {
    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->traceEverOn(trace);
    Verilated::threadContextp(ctx_.get());  // the model registers its scopes there
    top_ = std::make_unique<V>(ctx_.get(), "psm_accel");
    top_->clk_i = 0;
    top_->rst_i = 1;
    top_->reg_we_i = 0;
    top_->reg_re_i = 0;
    top_->mem_req_ready_i = 0;
    top_->mem_rsp_valid_i = 0;
    top_->eval();
  }
  ~VerilatedAccel() override {
#if VM_TRACE_FST
    if (trace_) {
      trace_->close();
      trace_.reset();
    }
#endif
    top_->final();
    // Verilator 5.006 erases a model's scopes from Verilated::threadContextp(), which names
    // the context of the LAST model constructed on this thread: point it at ours first, and
    // never leave it dangling (a destroyed context deadlocks the next scope erase).
    Verilated::threadContextp(ctx_.get());
    top_.reset();
    ctx_.reset();
    Verilated::threadContextp(Verilated::defaultContextp());
  }

  [[nodiscard]] const hw::HwConfig& config() const noexcept override { return cfg_; }
  [[nodiscard]] std::uint64_t cycle() const noexcept override { return cycle_; }

  void reset(unsigned cycles, MemPort& port) override {
    top_->rst_i = 1;
    for (unsigned i = 0; i < cycles; ++i) {
      tick(port);
    }
    top_->rst_i = 0;
    tick(port);
  }

  // psm_accel registers reg_* at its port: an access is presented for one cycle and reaches
  // psm_regs in the next, so each access takes two cycles and has taken effect on return.
  void write_reg(std::uint32_t offset, std::uint32_t value, MemPort& port) override {
    top_->reg_we_i = 1;
    top_->reg_addr_i = static_cast<std::uint8_t>(offset);
    top_->reg_wdata_i = value;
    tick(port);
    top_->reg_we_i = 0;
    tick(port);
  }

  std::uint32_t read_reg(std::uint32_t offset, MemPort& port) override {
    top_->reg_re_i = 1;
    top_->reg_addr_i = static_cast<std::uint8_t>(offset);
    tick(port);
    top_->reg_re_i = 0;
    return tick(port, true);
  }

  std::uint64_t run(std::uint64_t max_cycles, MemPort& port) override {
    for (std::uint64_t i = 0; i < max_cycles; ++i) {
      tick(port);
      if (top_->run_busy_o == 0) {
        return i + 1;
      }
    }
    return max_cycles;
  }

  [[nodiscard]] bool run_busy() const noexcept override { return top_->run_busy_o != 0; }
  [[nodiscard]] unsigned unit_busy() const noexcept override { return top_->unit_busy_o; }
  [[nodiscard]] std::uint32_t pc() const noexcept override { return top_->pc_o; }
  [[nodiscard]] std::uint32_t unit_pc(unsigned u) const noexcept override {
    return top_->unit_pc_o[u % 3];
  }

  [[nodiscard]] std::vector<InstrRecord> take_records() override {
    return std::exchange(records_, {});
  }

  void open_trace(const std::string& path, double clock_mhz, const TraceWindow& w) override {
#if VM_TRACE_FST
    if (!trace_on_) {
      throw std::runtime_error("open_trace: the model was created without trace = true");
    }
    if (!(clock_mhz > 0) || clock_mhz > 1e6) {
      throw std::runtime_error("open_trace: clock_mhz: expected (0, 1e6], found " +
                               std::to_string(clock_mhz));
    }
    // Time in picoseconds, so that a cycle lasts exactly the simulated clock's period.
    if (w.end <= w.first) {
      throw std::runtime_error("open_trace: window: expected its end after its start, found " +
                               std::to_string(w.first) + ":" + std::to_string(w.end));
    }
    period_ps_ = std::max<std::uint64_t>(1, std::uint64_t(std::llround(1e6 / clock_mhz)));
    window_ = w;
    trace_ = std::make_unique<VerilatedFstC>();
    trace_->set_time_unit("1ps");
    trace_->set_time_resolution("1ps");
    top_->trace(trace_.get(), 99);
    trace_->open(path.c_str());
    if (!trace_->isOpen()) {
      trace_.reset();
      throw std::runtime_error("open_trace: cannot open " + path);
    }
    trace_path_ = path;
    trace_end_ = 0;
#else
    (void)clock_mhz;
    (void)w;
    throw std::runtime_error("open_trace(" + path + "): model built without --trace-fst");
#endif
  }

  void close_trace() override {
#if VM_TRACE_FST
    if (!trace_) {
      return;
    }
    trace_->close();
    trace_.reset();
    // Read the file back: a write that failed leaves it without its last blocks or its
    // trailer, so the reader refuses it or ends early.
    void* reader = fstReaderOpen(trace_path_.c_str());
    const std::uint64_t end = reader != nullptr ? fstReaderGetEndTime(reader) : 0;
    if (reader != nullptr) {
      fstReaderClose(reader);
    }
    if (reader == nullptr || end < trace_end_) {
      const std::string found =
          reader == nullptr ? "an unreadable file" : "end time " + std::to_string(end);
      throw std::runtime_error("waveform " + trace_path_ + ": expected it to end at time " +
                               std::to_string(trace_end_) + ", found " + found +
                               ": incomplete (is its file system full?)");
    }
#endif
  }

 private:
  /// One clock cycle: settle with the clock low, hand an accepted request to the memory (the
  /// design saw `mem_req_ready_i` of the previous edge), present what the port registers take
  /// at the rising edge (the response due in the next cycle, and whether the memory accepts a
  /// request then), then the edge, after which the trace port shows the records of the
  /// instructions that end in the new cycle. Returns reg_rdata_o as seen before the edge when
  /// `read` is set.
  std::uint32_t tick(MemPort& port, bool read = false) {
    top_->clk_i = 0;
    top_->eval();
    dump(2 * cycle_);
    const std::uint32_t rdata = read ? top_->reg_rdata_o : 0;
    if (ready_ && top_->mem_req_valid_o != 0) {
      port.request({top_->mem_req_we_o != 0, top_->mem_req_addr_o, top_->mem_req_wdata_o,
                    top_->mem_req_wstrb_o},
                   cycle_);
    }
    if (cycle_ + 1 >= port.next_response_cycle()) {
      const MemBeatResponse r = port.pop_response();
      top_->mem_rsp_valid_i = 1;
      top_->mem_rsp_rdata_i = r.rdata;
      top_->mem_rsp_err_i = r.error ? 1 : 0;
    } else {
      top_->mem_rsp_valid_i = 0;
    }
    ready_ = top_->rst_i == 0 && port.ready();  // the port register resets to "not ready"
    top_->mem_req_ready_i = ready_ ? 1 : 0;
    top_->clk_i = 1;
    top_->eval();
    dump(2 * cycle_ + 1);
    ++cycle_;
    if (top_->trace_valid_o != 0) [[unlikely]] {
      collect_records();
    }
    return rdata;
  }

  /// Appends a record for each unit whose trace_valid_o bit is set.
  void collect_records() {
    for (unsigned u = 0; u < 3; ++u) {
      if (((top_->trace_valid_o >> u) & 1u) != 0) {
        records_.push_back({top_->trace_pc_o[u], static_cast<std::uint8_t>(u),
                            top_->trace_cycles_o[u], top_->trace_stall_o[u],
                            unit_field(top_->trace_passes_o, u),
                            unit_field(top_->trace_saturated_o, u)});
      }
    }
  }

  /// Unit u's field of trace_passes_o or trace_saturated_o: 24 bits per unit, packed across
  /// three 32-bit words.
  template <typename Words>
  [[nodiscard]] static std::uint32_t unit_field(const Words& words, unsigned u) noexcept {
    constexpr unsigned kWidth = 24;
    const unsigned lsb = u * kWidth;
    std::uint64_t bits = words[lsb / 32];
    if (lsb / 32 + 1 < 3) {
      bits |= std::uint64_t{words[lsb / 32 + 1]} << 32;
    }
    return static_cast<std::uint32_t>((bits >> (lsb % 32)) & ((1u << kWidth) - 1u));
  }

  void dump([[maybe_unused]] std::uint64_t half_cycle) {
#if VM_TRACE_FST
    if (trace_ && cycle_ >= window_.first && cycle_ < window_.end) {
      trace_end_ = half_cycle * period_ps_ / 2;  // the clock falls half a period in
      trace_->dump(trace_end_);
    }
#endif
  }

  hw::HwConfig cfg_;
  bool trace_on_ = false;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> top_;
#if VM_TRACE_FST
  std::unique_ptr<VerilatedFstC> trace_;
  std::string trace_path_;
  TraceWindow window_;
  std::uint64_t trace_end_ = 0;  // time of the last dump, ps
  std::uint64_t period_ps_ = 10000;  // the clock period in the waveform
#endif
  std::uint64_t cycle_ = 0;
  bool ready_ = false;  // mem_req_ready_i as the design registered it at the last edge
  std::vector<InstrRecord> records_;
};

}  // namespace passim::sim
