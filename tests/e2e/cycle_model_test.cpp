// SPDX-License-Identifier: Apache-2.0
// The cycle model without the RTL (docs/cycle-model.md): the matmul closed form on the page's
// worked examples, the DMA's and the fetch's closed forms against the stepped DMA model in
// the regime where they hold, and ModelDevice giving CpuDevice's results, errors and modelled
// counters, with records and cycle counters that add up. tests/sim/model_device_test.cpp
// compares the model with the RTL.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "cosim.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/cycle_model.hpp"
#include "passim/device/dma_model.hpp"
#include "passim/device/model_device.hpp"
#include "program_gen.hpp"

namespace {

using namespace passim;

hw::HwConfig array(std::size_t r, std::size_t c) {
  hw::HwConfig cfg = hw::kBase;
  cfg.array_rows = r;
  cfg.array_cols = c;
  return cfg;
}

// docs/cycle-model.md "Worked examples": (KT * NT - 1) * T + m + R + C + 4.
TEST(CycleModel, MatmulWorkedExamples) {
  EXPECT_EQ(cycles::matmul_array_cycles(array(16, 16), 256, 256, 256, 1), 65572u);
  EXPECT_EQ(cycles::matmul_array_cycles(array(4, 4), 7, 13, 5, 1), 68u);
  EXPECT_EQ(cycles::matmul_array_cycles(array(16, 16), 1, 256, 256, 1), 4117u);
  EXPECT_EQ(cycles::matmul_array_cycles(hw::kTiny, 64, 64, 64, 1), 32778u);
  // Digit groups multiply the k tiles: 3 groups of 13 on 4 x 4 = 12 k tiles x 2 n tiles.
  EXPECT_EQ(cycles::matmul_array_cycles(array(4, 4), 7, 13, 5, 3), 23u * 7 + 7 + 10 + 2);
}

/// A DMA_LOAD (or DMA_STORE) of `rows` rows of `len` elements at an 8-byte aligned address,
/// rows 8-byte aligned too.
hw::Instr aligned_dma(bool load, hw::Mem mem, unsigned esize, unsigned rows, unsigned len) {
  namespace d = hw::fields::dma_load;
  hw::Instr in = hw::make_instr(load ? hw::Opcode::kDmaLoad : hw::Opcode::kDmaStore, 0);
  hw::set_field(in, d::kMem, std::uint32_t(mem));
  hw::set_field(in, d::kElemSize, esize);
  hw::set_field(in, d::kRows, rows);
  hw::set_field(in, d::kRowLen, len);
  hw::set_field(in, d::kDramStride, ((len << esize) + 7) / 8 * 8);
  hw::set_field(in, d::kDramAddr, 4096);
  return in;
}

// docs/cycle-model.md "The DMA and the DRAM": B = max(beats, words) + D + 3 for aligned rows
// when D <= 6 and the byte buffer holds two words (not tiny's param memory).
TEST(CycleModel, DmaClosedFormInItsRegime) {
  const auto granted = [](hw::Mem, std::uint64_t) { return true; };
  for (const hw::HwConfig* cfg : {&hw::kTiny, &hw::kSmall, &hw::kBase}) {
    for (const double latency : {0.0, 10.0, 25.0, 50.0}) {
      const DramTiming t{100.0, latency, 1.6};  // 5 ns per beat: the channel keeps up
      const std::uint64_t d = std::uint64_t((5.0 + latency + 9.999) / 10.0);
      for (const hw::Mem mem :
           {hw::Mem::kInput, hw::Mem::kWeight, hw::Mem::kVector, hw::Mem::kParam}) {
        const unsigned esize = mem == hw::Mem::kParam ? 3 : mem == hw::Mem::kVector ? 1 : 0;
        const std::uint64_t per_word = mem == hw::Mem::kInput    ? cfg->array_rows
                                       : mem == hw::Mem::kWeight ? cfg->array_cols
                                       : mem == hw::Mem::kVector ? cfg->lanes
                                                                 : 1;
        for (const bool load : {true, false}) {
          if (!load && mem == hw::Mem::kParam && cfg == &hw::kTiny) {
            continue;  // 8-byte words in a 16-byte buffer: one word per two cycles
          }
          for (const unsigned rows : {1u, 3u}) {
            for (const unsigned len : {8u, 16u, 64u}) {
              DramPort port(t);
              const DmaCycles c =
                  dma_cycles(aligned_dma(load, mem, esize, rows, len), *cfg, 0, port, granted);
              const std::uint64_t beats = rows * (((len << esize) + 7) / 8);
              const std::uint64_t words = rows * cycles::ceil_div(len, per_word);
              EXPECT_EQ(c.cycles, std::max(beats, words) + d + 3)
                  << cfg->name << " mem " << int(mem) << (load ? " load" : " store") << " rows "
                  << rows << " len " << len << " latency " << latency;
            }
          }
        }
      }
    }
  }
}

// The fetch: 2 * len beats, requests every cycle, responses D cycles later (D <= 7: fewer
// than FetchDepth = 8 outstanding).
TEST(CycleModel, FetchClosedForm) {
  for (const double latency : {0.0, 25.0, 50.0, 60.0}) {
    const std::uint64_t d = std::uint64_t((5.0 + latency + 9.999) / 10.0);
    for (const std::uint32_t len : {1u, 2u, 3u, 10u, 100u}) {
      DramPort port({100.0, latency, 1.6});
      std::uint64_t stall = 0;
      EXPECT_EQ(fetch_cycles(len, port, stall), 2 * len - 1 + d) << len;
      EXPECT_EQ(stall, d > 2 * len ? d - 2 * len : 0) << len;
    }
  }
}

// ModelDevice is CpuDevice plus timing: the same DRAM, the same modelled counters, the same
// errors; its records and cycle counters add up as the hardware's do (docs/isa.md).
TEST(ModelDevice, CpuDevicesResultsWithConsistentCycles) {
  constexpr std::uint64_t kDram = 256 * 1024;
  for (const hw::HwConfig* cfg : {&hw::kTiny, &hw::kSmall}) {
    CpuDevice ref(*cfg, kDram);
    ModelDevice dut(*cfg, {}, kDram);
    gen::ProgramGen g(*cfg, kDram, 99);
    const std::vector<std::uint8_t> image = g.initial_dram();
    ref.write_dram(0, image);
    dut.write_dram(0, image);
    for (int p = 0; p < 200; ++p) {
      const gen::GenCase c = p % 5 == 4 ? g.next_invalid() : g.next_valid(24);
      const gen::CaseResult r = gen::run_case(ref, dut, c, kDram);
      ASSERT_TRUE(r.ok()) << cfg->name << " program " << p << ": " << r.mismatch;
      if (c.invalid) {  // resynchronise the memories after an aborted run
        ref.write_dram(0, image);
        dut.write_dram(0, image);
        continue;
      }
      // Again on both (its stores may have overwritten its image), to keep them equal.
      const std::span<const std::uint8_t> bytes{
          reinterpret_cast<const std::uint8_t*>(c.image.data()), c.image.size() * 16};
      ref.write_dram(c.write_addr, bytes);
      dut.write_dram(c.write_addr, bytes);
      (void)ref.run(c.prog_addr, c.len);
      const RunStats s = dut.run(c.prog_addr, c.len);
      ASSERT_TRUE(s.has_cycles);
      const auto at = [&s](hw::Counter k) { return s.counters.at(std::size_t(k)); };
      std::uint64_t classes = 0;
      for (std::size_t k = 0; k < 7; ++k) {
        classes += at(hw::Counter(std::size_t(hw::Counter::kCyclesMatmul) + k));
      }
      EXPECT_EQ(classes, at(hw::Counter::kTotalCycles) + at(hw::Counter::kDmaHidden));
      EXPECT_EQ(at(hw::Counter::kDmaHidden) + at(hw::Counter::kDmaExposed),
                at(hw::Counter::kBusyDma));
      std::uint64_t busy = 0;
      for (const InstrRecord& rec : s.records) {
        busy += rec.cycles;
      }
      EXPECT_EQ(busy, at(hw::Counter::kBusyDma) + at(hw::Counter::kBusyMatmul) +
                          at(hw::Counter::kBusyVector));
      EXPECT_EQ(dut.unmodelled_overlaps(), 0u);
    }
  }
}

}  // namespace
