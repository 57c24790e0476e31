// SPDX-License-Identifier: Apache-2.0
/// \file The reference side of the single-pass vector unit testbenches: one ISA command run on
/// `passim::CpuDevice` (the golden kernels behind the ISA, docs/isa.md), and the comparison of
/// a Verilated unit's scratchpad, port traffic and cycle count against it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "elt_harness.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/device.hpp"
#include "passim/hw/spec.hpp"
#include "vec_scratchpad.hpp"

namespace passim::sim {

/// One vector instruction's operands (docs/isa.md; every vector opcode has this layout).
struct EltCommand {
  hw::Opcode op = hw::Opcode::kAdd;
  std::uint32_t src = 0;    ///< src_addr (word)
  std::uint32_t src2 = 0;   ///< src2_addr (word)
  std::uint32_t dst = 0;    ///< dst_addr (word)
  std::uint32_t param = 0;  ///< param_addr (entry)
  std::uint32_t len = 1;
  std::uint32_t rows = 1;

  [[nodiscard]] std::string summary() const {
    std::ostringstream s;
    s << "op " << static_cast<int>(op) << " src " << src << " src2 " << src2 << " dst " << dst
      << " param " << param << " len " << len << " rows " << rows;
    return s.str();
  }
};

/// A std::mt19937 for a randomised test; prints the seed (and records it in the XML report).
inline std::mt19937 elt_seeded_rng(std::uint32_t seed) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf("[   SEED   ] %s.%s: std::mt19937 seed %u\n", info->test_suite_name(), info->name(),
              seed);
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return std::mt19937(seed);
}

/// A uniform integer in [lo, hi].
inline std::int64_t elt_uniform(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

/// Words of a row of n elements.
inline std::uint32_t elt_words(std::size_t n, std::size_t lanes) {
  return static_cast<std::uint32_t>((n + lanes - 1) / lanes);
}

/// Adds `times` reads of each word of the n-element row at `base` to `m`.
inline void elt_add_row(std::map<std::uint32_t, int>& m, std::uint32_t base, std::size_t n,
                        std::size_t lanes, int times = 1) {
  for (std::uint32_t w = 0; w < elt_words(n, lanes); ++w) {
    m[base + w] += times;
  }
}

/// A Requant step as a parameter entry: mult in [31:0], shift in [37:32] (docs/isa.md).
/// `junk` goes to bits [63:38], which the hardware and CpuDevice ignore.
inline std::uint64_t elt_param(Requant rq, std::uint32_t junk = 0) {
  return std::uint64_t{static_cast<std::uint32_t>(rq.mult)} |
         (std::uint64_t{static_cast<std::uint32_t>(rq.shift) & 63u} << 32) |
         (std::uint64_t{junk & 0x3FFFFFFu} << 38);
}

/// Runs `cmd` on a CpuDevice whose vector scratchpad holds `vector_mem` (words * lanes lanes)
/// and whose parameter memory holds `params`; returns the vector scratchpad afterwards. The
/// memories move through DRAM with DMA_LOAD / DMA_STORE of 4-byte (vector) and 8-byte
/// (param) elements, so every 32-bit lane is copied unchanged.
inline std::vector<std::uint32_t> elt_cpu_device_run(std::size_t lanes,
                                                     const std::vector<std::uint32_t>& vector_mem,
                                                     const std::vector<std::uint64_t>& params,
                                                     const EltCommand& cmd) {
  namespace f = hw::fields;
  const std::size_t words = vector_mem.size() / lanes;
  hw::HwConfig cfg = hw::kTiny;
  cfg.name = "elt-test";
  cfg.lanes = lanes;
  cfg.vector_depth = words;
  cfg.param_depth = params.size();

  constexpr std::uint64_t kProg = 0;
  constexpr std::uint64_t kVecIn = 4096;
  const std::uint64_t vec_bytes = vector_mem.size() * 4;
  const std::uint64_t prm_at = kVecIn + vec_bytes;
  const std::uint64_t vec_out = prm_at + params.size() * 8;
  CpuDevice dev(cfg, vec_out + vec_bytes);

  std::vector<hw::Instr> prog;
  // Moves the whole vector scratchpad, one word (lanes elements) per DMA row, in chunks that
  // fit the 16-bit rows field.
  auto move_vector = [&](hw::Opcode op, std::uint64_t dram) {
    constexpr std::size_t kChunk = 32768;
    for (std::size_t w0 = 0; w0 < words; w0 += kChunk) {
      const std::size_t n = std::min(kChunk, words - w0);
      hw::Instr in = hw::make_instr(op, 0);
      hw::set_field(in, f::dma_load::kMem, static_cast<std::uint32_t>(hw::Mem::kVector));
      hw::set_field(in, f::dma_load::kElemSize, 2);
      hw::set_field(in, f::dma_load::kDramAddr, static_cast<std::uint32_t>(dram + w0 * lanes * 4));
      hw::set_field(in, f::dma_load::kSpadAddr, static_cast<std::uint32_t>(w0));
      hw::set_field(in, f::dma_load::kRows, static_cast<std::uint32_t>(n));
      hw::set_field(in, f::dma_load::kRowLen, static_cast<std::uint32_t>(lanes));
      hw::set_field(in, f::dma_load::kDramStride, static_cast<std::uint32_t>(lanes * 4));
      prog.push_back(in);
    }
  };
  move_vector(hw::Opcode::kDmaLoad, kVecIn);
  hw::Instr load_prm = hw::make_instr(hw::Opcode::kDmaLoad, 0);
  hw::set_field(load_prm, f::dma_load::kMem, static_cast<std::uint32_t>(hw::Mem::kParam));
  hw::set_field(load_prm, f::dma_load::kElemSize, 3);
  hw::set_field(load_prm, f::dma_load::kDramAddr, static_cast<std::uint32_t>(prm_at));
  hw::set_field(load_prm, f::dma_load::kSpadAddr, 0);
  hw::set_field(load_prm, f::dma_load::kRows, static_cast<std::uint32_t>(params.size()));
  hw::set_field(load_prm, f::dma_load::kRowLen, 1);
  hw::set_field(load_prm, f::dma_load::kDramStride, 8);
  prog.push_back(load_prm);
  // Every vector opcode shares the RMSNORM operand layout (docs/isa.md; CpuDevice reads it so).
  hw::Instr op = hw::make_instr(cmd.op, 0);
  hw::set_field(op, f::rmsnorm::kSrcAddr, cmd.src);
  hw::set_field(op, f::rmsnorm::kSrc2Addr, cmd.src2);
  hw::set_field(op, f::rmsnorm::kDstAddr, cmd.dst);
  hw::set_field(op, f::rmsnorm::kParamAddr, cmd.param);
  hw::set_field(op, f::rmsnorm::kLen, cmd.len);
  hw::set_field(op, f::rmsnorm::kRows, cmd.rows);
  prog.push_back(op);
  move_vector(hw::Opcode::kDmaStore, vec_out);
  prog.push_back(hw::make_instr(hw::Opcode::kEnd, 0));

  std::vector<std::uint8_t> bytes(prog.size() * sizeof(hw::Instr));
  std::memcpy(bytes.data(), prog.data(), bytes.size());
  dev.write_dram(kProg, bytes);
  bytes.resize(vec_bytes);
  std::memcpy(bytes.data(), vector_mem.data(), vec_bytes);
  dev.write_dram(kVecIn, bytes);
  bytes.resize(params.size() * 8);
  std::memcpy(bytes.data(), params.data(), bytes.size());
  dev.write_dram(prm_at, bytes);
  dev.run(kProg, static_cast<std::uint32_t>(prog.size()));

  std::vector<std::uint32_t> out(vector_mem.size());
  bytes.resize(vec_bytes);
  dev.read_dram(vec_out, bytes);
  std::memcpy(out.data(), bytes.data(), vec_bytes);
  return out;
}

/// Sets the command ports of a Verilated unit (the ones it has), masked to their widths.
template <typename M>
void elt_drive_command(M& top, const EltCommand& c) {
  top.src_addr_i = static_cast<std::uint16_t>(c.src);
  top.dst_addr_i = static_cast<std::uint16_t>(c.dst);
  top.len_i = static_cast<std::uint16_t>(c.len);
  top.rows_i = static_cast<std::uint16_t>(c.rows);
  if constexpr (requires { top.src2_addr_i; }) {
    top.src2_addr_i = static_cast<std::uint16_t>(c.src2);
  }
  if constexpr (requires { top.param_addr_i; }) {
    top.param_addr_i = static_cast<std::uint16_t>(c.param & 0xFFFu);
  }
  if constexpr (requires { top.op_i; }) {
    top.op_i = static_cast<std::uint8_t>(c.op);
  }
}

/// What a command must do besides producing the golden output.
struct EltExpect {
  std::uint32_t out_base = 0;  ///< the output: out_rows rows of out_len at out_base
  std::size_t out_rows = 1;
  std::size_t out_len = 1;
  std::map<std::uint32_t, int> reads;        ///< exact scratchpad read requests per word
  std::map<std::uint32_t, int> param_reads;  ///< exact parameter read requests per entry
  std::uint64_t busy_cycles = 0;             ///< the documented cycle count
};

/// Runs `cmd` on the Verilated unit (from its current state, reset once by the fixture) and on
/// CpuDevice from the same memories, and checks, exactly:
///   - the output rows (ASSERT_EQ on the whole output; the message names the seed, the first
///     bad row and element, and `describe(row, element)`, which prints its inputs);
///   - the whole scratchpad afterwards (nothing else written);
///   - read requests per word and parameter reads per entry (each row read as documented);
///   - each output word written once with its tail mask, one done_o pulse, no requests while
///     idle, pass_o 0, and the documented number of busy cycles.
template <typename M>
void elt_check(M& top, VecScratchpad& mem, const std::vector<std::uint64_t>& params,
               const EltCommand& cmd, const EltExpect& expect, std::uint32_t seed,
               const std::function<std::string(std::size_t, std::size_t)>& describe,
               EltRunStats* stats_out = nullptr, std::uint64_t restart_at = 0) {
  const std::size_t lanes = mem.lanes();
  // The units' AddrWidth is 16, and CpuDevice's DMA spad_addr field too.
  ASSERT_LE(mem.words(), std::size_t{1} << 16) << "the test's scratchpad is too large";
  const std::vector<std::uint32_t> golden_mem = elt_cpu_device_run(lanes, mem.raw(), params, cmd);

  EltParamMemory prm(params, seed ^ 0x5A5Au);
  elt_drive_command(top, cmd);
  EltHarness<M> h(top, mem, &prm);
  const EltRunStats s = h.run(2 * expect.busy_cycles + 200, restart_at);
  if (stats_out != nullptr) {
    *stats_out = s;
  }
  const std::string where =
      "seed " + std::to_string(seed) + ", lanes " + std::to_string(lanes) + ", " + cmd.summary();
  ASSERT_TRUE(s.finished) << "no done_o; " << where << "; " << s.summary();

  // The output rows, as int32 lanes.
  const std::uint32_t stride = elt_words(expect.out_len, lanes);
  std::vector<std::int32_t> rtl_out, gold_out;
  for (std::size_t r = 0; r < expect.out_rows; ++r) {
    for (std::size_t i = 0; i < expect.out_len; ++i) {
      const std::size_t at = (expect.out_base + r * stride + i / lanes) * lanes + i % lanes;
      rtl_out.push_back(static_cast<std::int32_t>(mem.raw().at(at)));
      gold_out.push_back(static_cast<std::int32_t>(golden_mem.at(at)));
    }
  }
  std::size_t bad = 0;
  while (bad < rtl_out.size() && rtl_out[bad] == gold_out[bad]) {
    ++bad;
  }
  if (bad < rtl_out.size()) {
    const std::size_t r = bad / expect.out_len, i = bad % expect.out_len;
    ASSERT_EQ(rtl_out, gold_out) << where << ": first bad row " << r << " element " << i << ": rtl "
                                 << rtl_out[bad] << ", golden " << gold_out[bad] << "; inputs "
                                 << describe(r, i);
  }
  if (mem.raw() != golden_mem) {
    std::size_t at = 0;
    while (mem.raw()[at] == golden_mem[at]) {
      ++at;
    }
    FAIL() << where << ": scratchpad differs outside the output at word " << at / lanes << " lane "
           << at % lanes << ": rtl " << mem.raw()[at] << ", golden " << golden_mem[at];
  }

  EXPECT_EQ(s.reads, expect.reads) << "read requests per word; " << where;
  EXPECT_EQ(s.param_reads, expect.param_reads) << "parameter reads per entry; " << where;
  std::map<std::uint32_t, int> writes;
  std::map<std::uint32_t, std::uint32_t> masks;
  for (std::size_t r = 0; r < expect.out_rows; ++r) {
    for (std::uint32_t w = 0; w < stride; ++w) {
      const std::uint32_t word = expect.out_base + static_cast<std::uint32_t>(r) * stride + w;
      writes[word] = 1;
      std::uint32_t mask = 0;
      for (std::size_t l = 0; l < lanes; ++l) {
        mask |= (w * lanes + l < expect.out_len) ? (1u << l) : 0u;
      }
      masks[word] = mask;
    }
  }
  EXPECT_EQ(s.writes, writes) << "write requests per word; " << where;
  EXPECT_EQ(s.write_masks, masks) << "write masks per word; " << where;
  EXPECT_EQ(s.done_pulses, 1) << where << "; " << s.summary();
  EXPECT_EQ(s.idle_requests, 0) << where;
  EXPECT_EQ(s.nonzero_passes, 0) << where;
  EXPECT_EQ(s.busy_cycles, expect.busy_cycles) << where << "; " << s.summary();
  EXPECT_EQ(s.latency, s.busy_cycles + 1) << "done_o one cycle after busy_o; " << where;
}

}  // namespace passim::sim
