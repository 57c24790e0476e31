// SPDX-License-Identifier: Apache-2.0
/// \file Testbench driver for rtl/matmul/psm_matmul.sv: models the input and weight memories
/// behind the unit's read ports (in the ISA's layouts), writes the requant parameters, runs one
/// command, reads the output buffer back. Works with any Verilated model of psm_matmul (RTL or
/// Yosys netlist) since both have the same ports.
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
#include "passim/kernels/matmul.hpp"

namespace passim::sim {

/// Parameters of one psm_matmul instance (must match the Verilated model's).
struct MatmulConfig {
  std::size_t rows = 0;       ///< ArrayRows (R)
  std::size_t cols = 0;       ///< ArrayCols (C)
  std::size_t in_depth = 0;   ///< InDepth, input memory words of R int8
  std::size_t wgt_depth = 0;  ///< WgtDepth, weight memory words of C int8 (W^T rows)
  std::size_t acc_depth = 0;  ///< AccDepth, words of C int32
  std::size_t out_depth = 0;  ///< OutDepth, words of C int32
  std::size_t rq_depth = 0;   ///< RqDepth, per-column requant entries
};

struct MatmulShape {
  std::size_t m = 0;
  std::size_t k = 0;       ///< per digit group
  std::size_t n = 0;
  std::size_t digits = 1;  ///< G digit groups (MATMUL_ACT), 1..3
};

/// One GEMM command with its operands.
struct MatmulJob {
  MatmulShape shape;
  std::vector<std::int8_t> a;  ///< (m, G * k) row-major activations, group after group
  std::vector<std::int8_t> w;  ///< (n, G * k) row-major weights, group after group
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
  const std::size_t kt = s.digits * ceil_div(s.k, cfg.rows);
  const std::size_t nt = ceil_div(s.n, cfg.cols);
  return s.m >= 1 && s.k >= 1 && s.n >= 1 && s.m <= cfg.acc_depth && s.n <= cfg.rq_depth &&
         s.digits >= 1 && s.digits <= 3 && s.m * kt <= cfg.in_depth &&
         s.digits * s.k * nt <= cfg.wgt_depth && s.m * nt <= cfg.out_depth;
}

/// The closed-form busy-cycle count of one isolated command (docs/cycle-model.md). The KT * NT
/// tiles (G * KT * NT with G digit groups) stream back to back in slots of T = max(m, R, C)
/// cycles (weight preload of a tile runs in its own slot, into the PEs' shadow weights); after
/// the last tile's last row come R + C + 2 cycles of fill/drain and 2 cycles of requantiser
/// flush:
///   busy = (G * KT * NT - 1) * T + m + (R + C + 2) + 2.
[[nodiscard]] constexpr std::uint64_t matmul_busy_cycles(const MatmulConfig& cfg,
                                                         const MatmulShape& s) noexcept {
  const std::uint64_t tiles = s.digits * ceil_div(s.k, cfg.rows) * ceil_div(s.n, cfg.cols);
  const std::uint64_t slot = std::max({s.m, cfg.rows, cfg.cols});  // T
  const std::uint64_t stream = (tiles - 1) * slot + s.m;  // first row read .. last row read
  const std::uint64_t drain = cfg.rows + cfg.cols + 2;    // last row read .. accumulator write
  const std::uint64_t flush = 2;
  return stream + drain + flush;
}

/// The golden output: matmul_i8 (matmul_digits_i8 with digit groups), then requantize() per
/// column (or the raw accumulators).
///   returns (m, n) row-major int32 (requantised values sign-extended)
[[nodiscard]] inline std::vector<std::int32_t> matmul_golden(const MatmulJob& job) {
  const auto& s = job.shape;
  std::vector<std::int32_t> acc(s.m * s.n);
  if (s.digits == 1) {
    kernels::matmul_i8(job.a, job.w, acc, s.m, s.k, s.n);
  } else {
    kernels::matmul_digits_i8(job.a, job.w, acc, s.m, s.k, s.n, s.digits);
  }
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
  /// `garbage_seed` seeds the random bytes in every memory word and padding lane, and on the
  /// read data lines in cycles without a read.
  MatmulDriver(const MatmulConfig& cfg, std::uint32_t garbage_seed)
      : cfg_(cfg),
        ctx_(std::make_unique<VerilatedContext>()),
        top_(std::make_unique<Model>(ctx_.get(), "top")),
        garbage_(garbage_seed),
        in_mem_(cfg.in_depth * cfg.rows),
        wgt_mem_(cfg.wgt_depth * cfg.cols) {
    top_->clk_i = 0;
    top_->start_i = 0;
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

  /// One clock cycle: inputs set before the call are sampled at its rising edge. The input and
  /// weight memories answer a read issued in this cycle in the next one (synchronous RAMs);
  /// without a read their data lines carry garbage, which the unit must ignore. Throws if the
  /// unit reads outside the loaded operands (e.g. a weight row past k).
  void tick() {
    top_->clk_i = 0;
    top_->eval();
    const bool in_rd = top_->in_rd_o != 0;
    const bool wgt_rd = top_->wgt_rd_o != 0;
    const auto in_addr = static_cast<std::size_t>(top_->in_rd_addr_o);
    const auto wgt_addr = static_cast<std::size_t>(top_->wgt_rd_addr_o);
    top_->clk_i = 1;
    top_->eval();
    if (in_rd && in_addr >= in_words_) {
      throw std::runtime_error("psm_matmul read input word " + std::to_string(in_addr) +
                               " outside the operand (" + std::to_string(in_words_) + " words)");
    }
    if (wgt_rd && wgt_addr >= wgt_words_) {
      throw std::runtime_error("psm_matmul read weight word " + std::to_string(wgt_addr) +
                               " outside the operand (" + std::to_string(wgt_words_) + " words)");
    }
    if (in_rd) {
      set_bytes(top_->in_rdata_i, word(in_mem_, in_addr, cfg_.rows));
    } else {
      set_bytes(top_->in_rdata_i, random_bytes(cfg_.rows));
    }
    if (wgt_rd) {
      set_bytes(top_->wgt_rdata_i, word(wgt_mem_, wgt_addr, cfg_.cols));
    } else {
      set_bytes(top_->wgt_rdata_i, random_bytes(cfg_.cols));
    }
  }

  /// Writes random bytes into every word of both memories and every requant entry.
  void fill_garbage() {
    for (auto& b : in_mem_) {
      b = static_cast<std::uint8_t>(garbage_());
    }
    for (auto& b : wgt_mem_) {
      b = static_cast<std::uint8_t>(garbage_());
    }
    for (std::size_t c = 0; c < cfg_.rq_depth; ++c) {
      write_rq(c, Requant{static_cast<std::int32_t>(garbage_() & 0x7fffffffU),
                          static_cast<std::int32_t>(garbage_() % 64U),
                          static_cast<std::int32_t>(garbage_() % (1U << kRequantBiasBits)) -
                              (1 << (kRequantBiasBits - 1))});
    }
  }

  /// Loads A and W^T into the memories in the ISA's layouts (input word (r * G + g) * KT + kt,
  /// lane i = A_g[r][kt*R + i]; weight word (g * k + kk) * NT + nt, lane j = W_g[nt*C + j][kk])
  /// and writes the requant parameters. Padding lanes (k past a group's last k tile, n past the
  /// last n tile) get garbage.
  void load(const MatmulJob& job) {
    const auto& s = job.shape;
    const std::size_t g_n = s.digits, gk = g_n * s.k;
    const std::size_t kt = ceil_div(s.k, cfg_.rows);
    const std::size_t nt = ceil_div(s.n, cfg_.cols);
    for (std::size_t r = 0; r < s.m; ++r) {
      for (std::size_t g = 0; g < g_n; ++g) {
        for (std::size_t t = 0; t < kt; ++t) {
          for (std::size_t i = 0; i < cfg_.rows; ++i) {
            const std::size_t kk = t * cfg_.rows + i;
            in_mem_[((r * g_n + g) * kt + t) * cfg_.rows + i] =
                kk < s.k ? static_cast<std::uint8_t>(job.a[r * gk + g * s.k + kk])
                         : static_cast<std::uint8_t>(garbage_());
          }
        }
      }
    }
    for (std::size_t kk = 0; kk < gk; ++kk) {  // W^T row kk = row kk % k of group kk / k
      for (std::size_t t = 0; t < nt; ++t) {
        for (std::size_t j = 0; j < cfg_.cols; ++j) {
          const std::size_t c = t * cfg_.cols + j;
          wgt_mem_[(kk * nt + t) * cfg_.cols + j] =
              c < s.n ? static_cast<std::uint8_t>(job.w[c * gk + kk])
                      : static_cast<std::uint8_t>(garbage_());
        }
      }
    }
    in_words_ = s.m * g_n * kt;
    wgt_words_ = gk * nt;
    for (std::size_t c = 0; c < s.n; ++c) {
      write_rq(c, job.rq[c]);
    }
  }

  /// Starts the command and clocks until done_o. Throws if done_o never comes.
  MatmulRunStats run(const MatmulJob& job) {
    set_port(top_->m_i, job.shape.m);
    set_port(top_->k_i, job.shape.k);
    set_port(top_->n_i, job.shape.n);
    set_port(top_->digits_i, job.shape.digits);
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

  /// Word `a` (`lanes` bytes) of a memory.
  static std::span<const std::uint8_t> word(const std::vector<std::uint8_t>& mem, std::size_t a,
                                            std::size_t lanes) {
    return std::span<const std::uint8_t>(mem).subspan(a * lanes, lanes);
  }

  void write_rq(std::size_t c, Requant rq) {
    top_->rq_we_i = 1;
    set_port(top_->rq_addr_i, c);
    top_->rq_mult_i = static_cast<std::uint32_t>(rq.mult) & 0x7fffffffU;  // 31-bit port
    set_port(top_->rq_shift_i, rq.shift & 63);
    // The signed 26-bit bias, two's complement, masked to the port width.
    set_port(top_->rq_bias_i, static_cast<std::uint32_t>(rq.bias) & ((1U << kRequantBiasBits) - 1));
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
  std::vector<std::uint8_t> in_mem_;   ///< input memory, in_depth words of R bytes
  std::vector<std::uint8_t> wgt_mem_;  ///< weight memory, wgt_depth words of C bytes
  std::size_t in_words_ = 0;           ///< words of the loaded operands (reads must stay below)
  std::size_t wgt_words_ = 0;
};

/// "m x k x n" (and " in G digit groups") for messages.
[[nodiscard]] inline std::string to_string(const MatmulShape& s) {
  std::ostringstream os;
  os << s.m << "x" << s.k << "x" << s.n;
  if (s.digits != 1) {
    os << " in " << s.digits << " digit groups";
  }
  return os.str();
}

}  // namespace passim::sim
