// SPDX-License-Identifier: Apache-2.0
/// \file Testbench driver for rtl/matmul/psm_matmul.sv: loads the scratchpads through the write
/// ports, runs one command, reads the output buffer back. Works with any Verilated model of
/// psm_matmul (RTL or Yosys netlist) since both have the same ports.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <verilated.h>

#include "passim/fixed_point.hpp"
#include "passim/kernels.hpp"

namespace passim::sim {

/// Parameters of one psm_matmul instance (must match the Verilated model's).
struct MatmulConfig {
  std::size_t rows = 0;       ///< ArrayRows (R)
  std::size_t cols = 0;       ///< ArrayCols (C)
  std::size_t in_depth = 0;   ///< InDepth, words of R int8
  std::size_t wgt_depth = 0;  ///< WgtDepth, words of R int8
  std::size_t acc_depth = 0;  ///< AccDepth, words of C int32
  std::size_t out_depth = 0;  ///< OutDepth, words of C int32
  std::size_t rq_depth = 0;   ///< RqDepth, per-column requant entries
};

struct MatmulShape {
  std::size_t m = 0;
  std::size_t k = 0;
  std::size_t n = 0;
};

/// One GEMM command with its operands.
struct MatmulJob {
  MatmulShape shape;
  std::vector<std::int8_t> a;  ///< (m, k) row-major activations
  std::vector<std::int8_t> w;  ///< (n, k) row-major weights
  std::vector<Requant> rq;     ///< (n) per output column
  int out_bits = 8;            ///< 2..32
  bool requant_en = true;      ///< false: raw int32 accumulators
};

/// What one run of the unit measured.
struct MatmulRunStats {
  std::uint64_t busy_cycles = 0;  ///< cycles with busy_o high, counted by the testbench
  int done_pulses = 0;            ///< cycles with done_o high (must be 1)
  std::uint64_t perf_busy = 0;    ///< perf_busy_cycles_o after done_o
  std::uint64_t perf_mac = 0;     ///< perf_mac_cycles_o after done_o
};

[[nodiscard]] constexpr std::size_t ceil_div(std::size_t a, std::size_t b) noexcept {
  return (a + b - 1) / b;
}

/// True when the shape is legal for the configuration (the unit's CmdSizes_A assertion).
[[nodiscard]] constexpr bool fits(const MatmulConfig& cfg, const MatmulShape& s) noexcept {
  const std::size_t kt = ceil_div(s.k, cfg.rows);
  const std::size_t nt = ceil_div(s.n, cfg.cols);
  return s.m >= 1 && s.k >= 1 && s.n >= 1 && s.m <= cfg.acc_depth && s.n <= cfg.rq_depth &&
         s.m * kt <= cfg.in_depth && s.n * kt <= cfg.wgt_depth && s.m * nt <= cfg.out_depth;
}

/// The closed-form busy-cycle count of one isolated command (docs/cycle-model.md). The KT * NT
/// tiles stream back to back in slots of T = max(m, R, C) cycles (weight preload of a tile runs
/// in its own slot, into the PEs' shadow weights); after the last tile's last row come
/// R + C + 2 cycles of fill/drain and 2 cycles of requantiser flush:
///   busy = (KT * NT - 1) * T + m + (R + C + 2) + 2.
[[nodiscard]] constexpr std::uint64_t matmul_busy_cycles(const MatmulConfig& cfg,
                                                         const MatmulShape& s) noexcept {
  const std::uint64_t tiles = ceil_div(s.k, cfg.rows) * ceil_div(s.n, cfg.cols);
  const std::uint64_t slot = std::max({s.m, cfg.rows, cfg.cols});  // T
  const std::uint64_t stream = (tiles - 1) * slot + s.m;  // first row read .. last row read
  const std::uint64_t drain = cfg.rows + cfg.cols + 2;    // last row read .. accumulator write
  const std::uint64_t flush = 2;
  return stream + drain + flush;
}

/// The golden output: matmul_i8, then requantize() per column (or the raw accumulators).
///   returns (m, n) row-major int32 (requantised values sign-extended)
[[nodiscard]] inline std::vector<std::int32_t> matmul_golden(const MatmulJob& job) {
  const auto& s = job.shape;
  std::vector<std::int32_t> acc(s.m * s.n);
  kernels::matmul_i8(job.a, job.w, acc, s.m, s.k, s.n);
  if (!job.requant_en) {
    return acc;
  }
  std::vector<std::int32_t> out(acc.size());
  for (std::size_t i = 0; i < acc.size(); ++i) {
    out[i] = requantize(acc[i], job.rq[i % s.n], job.out_bits);
  }
  return out;
}

/// Drives one Verilated psm_matmul model (class `Model`, e.g. Vpsm_matmul_2x4).
template <typename Model>
class MatmulDriver {
 public:
  /// `garbage_seed` seeds the random bytes written into every scratchpad word and padding lane.
  MatmulDriver(const MatmulConfig& cfg, std::uint32_t garbage_seed)
      : cfg_(cfg),
        ctx_(std::make_unique<VerilatedContext>()),
        top_(std::make_unique<Model>(ctx_.get(), "top")),
        garbage_(garbage_seed) {
    top_->clk_i = 0;
    top_->start_i = 0;
    top_->in_we_i = 0;
    top_->wgt_we_i = 0;
    top_->rq_we_i = 0;
    top_->out_addr_i = 0;
    top_->rst_i = 1;
    tick();
    tick();
    top_->rst_i = 0;
    tick();
    fill_garbage();
  }
  ~MatmulDriver() { top_->final(); }
  MatmulDriver(const MatmulDriver&) = delete;
  MatmulDriver& operator=(const MatmulDriver&) = delete;

  /// One clock cycle: inputs set before the call are sampled at its rising edge.
  void tick() {
    top_->clk_i = 0;
    top_->eval();
    top_->clk_i = 1;
    top_->eval();
  }

  /// Writes random bytes into every word of both scratchpads and every requant entry.
  void fill_garbage() {
    for (std::size_t a = 0; a < cfg_.in_depth; ++a) {
      write_word(top_->in_we_i, top_->in_addr_i, top_->in_wdata_i, a, random_bytes(cfg_.rows));
    }
    for (std::size_t a = 0; a < cfg_.wgt_depth; ++a) {
      write_word(top_->wgt_we_i, top_->wgt_addr_i, top_->wgt_wdata_i, a, random_bytes(cfg_.rows));
    }
    for (std::size_t c = 0; c < cfg_.rq_depth; ++c) {
      write_rq(c, Requant{static_cast<std::int32_t>(garbage_() & 0x7fffffffU),
                          static_cast<std::int32_t>(garbage_() % 64U)});
    }
  }

  /// Loads A, W and the requant parameters; padding lanes of the last k tile get garbage.
  void load(const MatmulJob& job) {
    const auto& s = job.shape;
    const std::size_t kt = ceil_div(s.k, cfg_.rows);
    for (std::size_t r = 0; r < s.m; ++r) {
      for (std::size_t t = 0; t < kt; ++t) {
        write_word(top_->in_we_i, top_->in_addr_i, top_->in_wdata_i, r * kt + t,
                   tile_bytes(job.a, r, t, s.k));
      }
    }
    for (std::size_t c = 0; c < s.n; ++c) {
      for (std::size_t t = 0; t < kt; ++t) {
        write_word(top_->wgt_we_i, top_->wgt_addr_i, top_->wgt_wdata_i, c * kt + t,
                   tile_bytes(job.w, c, t, s.k));
      }
    }
    for (std::size_t c = 0; c < s.n; ++c) {
      write_rq(c, job.rq[c]);
    }
  }

  /// Starts the command and clocks until done_o. Throws if done_o never comes.
  MatmulRunStats run(const MatmulJob& job) {
    set_port(top_->m_i, job.shape.m);
    set_port(top_->k_i, job.shape.k);
    set_port(top_->n_i, job.shape.n);
    set_port(top_->out_bits_i, job.out_bits);
    top_->requant_en_i = job.requant_en ? 1 : 0;
    top_->start_i = 1;
    tick();
    top_->start_i = 0;
    MatmulRunStats stats;
    const std::uint64_t limit = 4 * matmul_busy_cycles(cfg_, job.shape) + 1000;
    for (std::uint64_t cycle = 0;; ++cycle) {
      if (cycle > limit) {
        throw std::runtime_error("psm_matmul: no done_o within " + std::to_string(limit) +
                                 " cycles");
      }
      const bool busy = top_->busy_o != 0;
      const bool done = top_->done_o != 0;
      tick();
      stats.busy_cycles += busy ? 1 : 0;
      stats.done_pulses += done ? 1 : 0;
      if (done) {
        break;
      }
    }
    stats.perf_busy = top_->perf_busy_cycles_o;
    stats.perf_mac = top_->perf_mac_cycles_o;
    return stats;
  }

  /// Reads the (m, n) row-major result from the output buffer (word r * NT + nt, lane j).
  std::vector<std::int32_t> read_output(const MatmulShape& s) {
    const std::size_t nt = ceil_div(s.n, cfg_.cols);
    std::vector<std::int32_t> out(s.m * s.n);
    for (std::size_t r = 0; r < s.m; ++r) {
      for (std::size_t t = 0; t < nt; ++t) {
        set_port(top_->out_addr_i, r * nt + t);
        tick();  // synchronous read: data valid after the edge
        for (std::size_t j = 0; j < cfg_.cols && t * cfg_.cols + j < s.n; ++j) {
          out[r * s.n + t * cfg_.cols + j] =
              static_cast<std::int32_t>(port_word(top_->out_rdata_o, j));
        }
      }
    }
    return out;
  }

 private:
  std::vector<std::uint8_t> random_bytes(std::size_t n) {
    std::vector<std::uint8_t> b(n);
    for (auto& x : b) {
      x = static_cast<std::uint8_t>(garbage_());
    }
    return b;
  }

  /// Lanes of word (row, tile t) of a (rows, k) row-major int8 matrix; padding is garbage.
  std::vector<std::uint8_t> tile_bytes(std::span<const std::int8_t> mat, std::size_t row,
                                       std::size_t t, std::size_t k) {
    std::vector<std::uint8_t> b = random_bytes(cfg_.rows);
    for (std::size_t i = 0; i < cfg_.rows; ++i) {
      const std::size_t col = t * cfg_.rows + i;
      if (col < k) {
        b[i] = static_cast<std::uint8_t>(mat[row * k + col]);
      }
    }
    return b;
  }

  template <typename We, typename Addr, typename Data>
  void write_word(We& we, Addr& addr, Data& data, std::size_t a, std::span<const std::uint8_t> b) {
    we = 1;
    set_port(addr, a);
    set_bytes(data, b);
    tick();
    we = 0;
  }

  void write_rq(std::size_t c, Requant rq) {
    top_->rq_we_i = 1;
    set_port(top_->rq_addr_i, c);
    top_->rq_mult_i = static_cast<std::uint32_t>(rq.mult) & 0x7fffffffU;  // 31-bit port
    set_port(top_->rq_shift_i, rq.shift & 63);
    tick();
    top_->rq_we_i = 0;
  }

  /// Drives a scalar port (CData/SData/IData/QData); callers pass values that fit its width.
  template <typename Port, typename Value>
  static void set_port(Port& port, Value v) {
    port = static_cast<Port>(v);
  }

  /// Packs bytes (lane i = bits [8i+7:8i]) into an integral or VlWide port.
  template <typename Port>
  static void set_bytes(Port& port, std::span<const std::uint8_t> b) {
    if constexpr (std::is_integral_v<Port>) {
      std::uint64_t v = 0;
      for (std::size_t i = 0; i < b.size(); ++i) {
        v |= std::uint64_t{b[i]} << (8 * i);
      }
      port = static_cast<Port>(v);
    } else {
      for (std::size_t w = 0; w * 4 < b.size(); ++w) {
        std::uint32_t v = 0;
        for (std::size_t i = 0; i < 4 && w * 4 + i < b.size(); ++i) {
          v |= std::uint32_t{b[w * 4 + i]} << (8 * i);
        }
        port[w] = v;
      }
    }
  }

  /// 32-bit word `w` of an integral or VlWide port.
  template <typename Port>
  static std::uint32_t port_word(const Port& port, std::size_t w) {
    if constexpr (std::is_integral_v<Port>) {
      return static_cast<std::uint32_t>(static_cast<std::uint64_t>(port) >> (32 * w));
    } else {
      return port[w];
    }
  }

  MatmulConfig cfg_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Model> top_;
  std::mt19937 garbage_;
};

/// "m x k x n" for messages.
[[nodiscard]] inline std::string to_string(const MatmulShape& s) {
  std::ostringstream os;
  os << s.m << "x" << s.k << "x" << s.n;
  return os.str();
}

}  // namespace passim::sim
