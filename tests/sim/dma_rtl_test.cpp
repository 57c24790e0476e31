// SPDX-License-Identifier: Apache-2.0
// The accelerator's memory port and DMA engine (rtl/dma/psm_dma.sv, psm_controller.sv) and its
// host registers (psm_regs.sv), on the Verilated tiny psm_accel driven by a plain loop with a
// memory of random latency and back-pressure. DRAM contents must equal CpuDevice's exactly.
#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

#include "accel_harness.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/sim/accel_model.hpp"
#include "passim/sim/host.hpp"

namespace {

using namespace passim;
using namespace passim::sim;
using passim::sim::test::Lockstep;
using passim::ProgramBuilder;

constexpr std::uint64_t kDramBytes = 64 * 1024;

/// A DRAM whose responses take a random number of cycles (in order), with at most
/// `max_outstanding` requests in flight (then mem_req_ready_i is low).
class RandomLatencyDram final : public MemPort {
 public:
  RandomLatencyDram(std::size_t max_outstanding, unsigned min_lat, unsigned max_lat,
                    std::uint32_t seed)
      : MemPort(max_outstanding), mem(kDramBytes, 0), rng_(seed), lat_(min_lat, max_lat) {}

  void request(const MemBeatRequest& r, std::uint64_t cycle) override {
    EXPECT_EQ(r.addr % 8, 0u) << "unaligned beat";
    MemBeatResponse rsp;
    if (std::uint64_t{r.addr} + 8 > mem.size()) {
      rsp.error = true;
    } else if (r.write) {
      ++writes;
      for (unsigned i = 0; i < 8; ++i) {
        if ((r.wstrb >> i) & 1u) {
          mem[r.addr + i] = static_cast<std::uint8_t>(r.wdata >> (8 * i));
        }
      }
    } else {
      ++reads;
      std::memcpy(&rsp.rdata, mem.data() + r.addr, 8);
    }
    schedule(cycle, cycle + lat_(rng_), rsp);
  }

  std::vector<std::uint8_t> mem;
  std::uint64_t reads = 0, writes = 0;

 private:
  std::mt19937 rng_;
  std::uniform_int_distribution<unsigned> lat_;
};

/// psm_accel (tiny) + RandomLatencyDram as a Device, so that Lockstep can compare it.
class PortDevice final : public Device {
 public:
  PortDevice(std::size_t max_outstanding, unsigned min_lat, unsigned max_lat, std::uint32_t seed)
      : model_(make_accel_model_tiny()), dram_(max_outstanding, min_lat, max_lat, seed) {
    model_->reset(4, dram_);
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "rtl-random-port"; }
  [[nodiscard]] const hw::HwConfig& hw() const noexcept override { return model_->config(); }
  [[nodiscard]] std::uint64_t dram_bytes() const noexcept override { return kDramBytes; }
  void write_dram(std::uint64_t addr, std::span<const std::uint8_t> b) override {
    std::copy(b.begin(), b.end(), dram_.mem.begin() + std::ptrdiff_t(addr));
  }
  void read_dram(std::uint64_t addr, std::span<std::uint8_t> b) const override {
    std::copy_n(dram_.mem.begin() + std::ptrdiff_t(addr), b.size(), b.begin());
  }
  RunStats run(std::uint64_t prog_addr, std::uint32_t len) override {
    return run_in_loop(*model_, dram_,
                       {.prog_addr = prog_addr, .len = len, .max_cycles = 2'000'000,
                        .describe = [](std::uint32_t i) { return std::to_string(i); }});
  }
  AccelModel& model() { return *model_; }
  RandomLatencyDram& dram() { return dram_; }

 private:
  std::unique_ptr<AccelModel> model_;
  RandomLatencyDram dram_;
};

std::uint32_t elems_per_word(const hw::HwConfig& c, hw::Mem m) {
  switch (m) {
    case hw::Mem::kInput:
      return std::uint32_t(c.array_rows);
    case hw::Mem::kWeight:
      return std::uint32_t(c.array_cols);
    case hw::Mem::kVector:
      return std::uint32_t(c.lanes);
    default:
      return 1;
  }
}

std::uint32_t depth_of(const hw::HwConfig& c, hw::Mem m) {
  switch (m) {
    case hw::Mem::kInput:
      return std::uint32_t(c.input_depth);
    case hw::Mem::kWeight:
      return std::uint32_t(c.weight_depth);
    case hw::Mem::kVector:
      return std::uint32_t(c.vector_depth);
    default:
      return std::uint32_t(c.param_depth);
  }
}

TEST(DmaRtl, RegistersReadBack) {
  PortDevice dev(16, 1, 1, 1);
  AccelModel& m = dev.model();
  MemPort& p = dev.dram();
  namespace reg = hw::reg;
  EXPECT_EQ(m.read_reg(reg::kVersion, p), std::uint32_t(hw::kSpecVersion));
  const std::uint32_t cfg = m.read_reg(reg::kConfig, p);
  EXPECT_EQ(cfg & 0xFF, hw::kTiny.array_rows);
  EXPECT_EQ((cfg >> 8) & 0xFF, hw::kTiny.array_cols);
  EXPECT_EQ((cfg >> 16) & 0xFF, hw::kTiny.lanes);
  EXPECT_EQ(m.read_reg(reg::kStatus, p), 0u) << "idle, never run";
  for (const std::uint32_t r : {reg::kProgAddr, reg::kProgLen, reg::kWatchdog}) {
    m.write_reg(r, 0xA5A5'0000u + r, p);
    EXPECT_EQ(m.read_reg(r, p), 0xA5A5'0000u + r) << "register 0x" << std::hex << r;
  }
  m.write_reg(reg::kCntSel, 0xFFFF'FFFFu, p);
  EXPECT_EQ(m.read_reg(reg::kCntSel, p), 0xFFu) << "CNT_SEL keeps only its index";
  EXPECT_EQ(m.read_reg(reg::kCntLo, p), 0u) << "index 255 is no counter";
  EXPECT_EQ(m.read_reg(reg::kCtrl, p), 0u) << "CTRL reads 0";
  EXPECT_EQ(m.read_reg(0xFC, p), 0u) << "unmapped offset reads 0";
}

// Every memory with every legal element size: a load from unaligned DRAM rows with a stride,
// then a store of a longer row from the same words to show the zero tail, then a store with
// another alignment.
TEST(DmaRtl, LoadStoreEveryMemoryAndElementSize) {
  PortDevice dev(4, 2, 9, 7);
  Lockstep ls(dev, kDramBytes);
  std::mt19937 rng(11);
  const auto src = test::random_values<std::uint8_t>(rng, 8192, 0, 255);
  ls.write(0, src);
  struct Case {
    hw::Mem mem;
    int esize;
  };
  for (const Case c :
       {Case{hw::Mem::kInput, 0}, Case{hw::Mem::kWeight, 0}, Case{hw::Mem::kVector, 0},
        Case{hw::Mem::kVector, 1}, Case{hw::Mem::kVector, 2}, Case{hw::Mem::kParam, 3}}) {
    for (const std::uint32_t row_len : {1u, 3u, 5u, 8u, 13u}) {
      const std::uint32_t e = elems_per_word(dev.hw(), c.mem);
      const std::uint32_t rows = 3;
      const std::uint32_t row_bytes = row_len << c.esize;
      const std::uint32_t stride = row_bytes + 5;
      ProgramBuilder b;
      b.load({.mem = c.mem, .elem_log2 = unsigned(c.esize), .dram = 3 + row_len, .spad = 7, .rows = rows, .row_len = row_len, .stride = stride});
      // Store rows padded to whole words: the tail of each row's last word must be zero.
      const std::uint32_t padded = (row_len + e - 1) / e * e;
      b.store({.mem = c.mem, .elem_log2 = unsigned(c.esize), .dram = 0x3001, .spad = 7, .rows = rows, .row_len = padded, .stride = (padded << c.esize) + 3});
      b.store({.mem = c.mem, .elem_log2 = unsigned(c.esize), .dram = 0x5006, .spad = 7, .rows = rows, .row_len = row_len, .stride = row_bytes});
      ls.run(b.program(), "mem " + std::to_string(int(c.mem)) + " esize " + std::to_string(c.esize) +
                             " row_len " + std::to_string(row_len));
    }
  }
}

// Random programs (memory, element size, rows, lengths, alignment, stride, scratchpad address)
// against a memory of random latency; every run's DRAM equals CpuDevice's.
TEST(DmaRtl, RandomRoundTripsUnderRandomLatencyAndBackPressure) {
  constexpr std::uint32_t kSeed = 20251130;
  std::mt19937 rng(kSeed);
  for (const std::size_t outstanding : {1u, 2u, 3u, 16u}) {
    PortDevice dev(outstanding, 1, outstanding == 16 ? 30 : 4, kSeed + std::uint32_t(outstanding));
    Lockstep ls(dev, kDramBytes);
    ls.write(0, test::random_values<std::uint8_t>(rng, 16384, 0, 255));
    for (int t = 0; t < 40; ++t) {
      std::uniform_int_distribution<int> pick(0, 5);
      const int kind = pick(rng);
      const hw::Mem mem = kind <= 0   ? hw::Mem::kInput
                          : kind == 1 ? hw::Mem::kWeight
                          : kind == 5 ? hw::Mem::kParam
                                      : hw::Mem::kVector;
      const int esize = mem == hw::Mem::kParam ? 3 : mem == hw::Mem::kVector ? kind - 2 : 0;
      const std::uint32_t e = elems_per_word(dev.hw(), mem);
      const auto rows = std::uniform_int_distribution<std::uint32_t>(1, 5)(rng);
      const auto row_len = std::uniform_int_distribution<std::uint32_t>(1, 40)(rng);
      const std::uint32_t words = rows * ((row_len + e - 1) / e);
      const auto spad =
          std::uniform_int_distribution<std::uint32_t>(0, depth_of(dev.hw(), mem) - words)(rng);
      const std::uint32_t bytes = row_len << esize;
      const auto stride = std::uniform_int_distribution<std::uint32_t>(bytes, bytes + 19)(rng);
      const auto src = std::uniform_int_distribution<std::uint32_t>(0, 8000)(rng);
      const auto dst = std::uniform_int_distribution<std::uint32_t>(16384, 40000)(rng);
      const int store_esize =
          mem == hw::Mem::kVector ? std::uniform_int_distribution<int>(0, 2)(rng) : esize;
      ProgramBuilder b;
      b.load({.mem = mem, .elem_log2 = unsigned(esize), .dram = src, .spad = spad, .rows = rows, .row_len = row_len, .stride = stride});
      b.store({.mem = mem, .elem_log2 = unsigned(store_esize), .dram = dst, .spad = spad, .rows = rows, .row_len = row_len, .stride = (row_len << store_esize) + 1});
      const RunStats s =
          ls.run(b.program(), "seed " + std::to_string(kSeed) + " outstanding " +
                                 std::to_string(outstanding) + " program " + std::to_string(t));
      EXPECT_EQ(s.counters[std::size_t(hw::Counter::kPassesDma)], 2 * rows) << "one pass per row";
      if (::testing::Test::HasFailure()) {
        return;
      }
    }
    EXPECT_GT(dev.dram().reads, 0u);
    EXPECT_GT(dev.dram().writes, 0u);
  }
}

// A DMA that reads past the end of DRAM stops the run with STATUS.error = bus and names the
// instruction; the accelerator then runs the next program normally.
TEST(DmaRtl, BusErrorStopsTheRunAndNamesTheInstruction) {
  PortDevice dev(16, 3, 3, 1);
  Lockstep ls(dev, kDramBytes);
  ProgramBuilder bad;
  bad.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = 0, .row_len = 8, .stride = 32});
  bad.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = std::uint32_t(kDramBytes - 8), .row_len = 8, .stride = 32});
  const auto prog = bad.program();
  dev.write_dram(ls.prog_addr(),
                 {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
  try {
    (void)dev.run(ls.prog_addr(), std::uint32_t(prog.size()));
    FAIL() << "expected a bus error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("instruction 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bus"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dev.dram().outstanding(), 0u) << "every request got its response before the end";
  ProgramBuilder good;
  good.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = 64, .rows = 2, .row_len = 9, .stride = 20});
  good.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = 1024, .rows = 2, .row_len = 9, .stride = 20});
  ls.run(good.program(), "after the bus error");
}

// Program errors found before any instruction runs.
TEST(DmaRtl, ProgramLengthAndAlignmentErrors) {
  PortDevice dev(16, 1, 1, 1);
  const auto expect_error = [&](std::uint64_t addr, std::uint32_t len, const char* what) {
    try {
      (void)dev.run(addr, len);
      ADD_FAILURE() << "expected " << what;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error(0, 0, "prog_len");
  expect_error(0, std::uint32_t(hw::kTiny.prog_depth) + 1, "prog_len");
  expect_error(8, 1, "prog_align");
  expect_error(kDramBytes - 16, 2, "bus");  // the fetch runs off the end of DRAM
  std::vector<hw::Instr> no_end(2, hw::make_instr(hw::Opcode::kNop, 0));
  dev.write_dram(0, {reinterpret_cast<const std::uint8_t*>(no_end.data()), 32});
  expect_error(0, 2, "bad_opcode");  // ran past PROG_LEN without END
}

// CTRL.soft_reset in the middle of a run: the controller and the units go idle at once (the
// host drops the owed responses), and the next program runs normally.
TEST(DmaRtl, SoftResetAbortsARunAndTheNextRunWorks) {
  PortDevice dev(16, 5, 5, 1);
  Lockstep ls(dev, kDramBytes);
  AccelModel& m = dev.model();
  MemPort& p = dev.dram();
  ProgramBuilder slow;
  slow.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = 0, .rows = 8, .row_len = 64, .stride = 256});
  const auto prog = slow.program();
  dev.write_dram(ls.prog_addr(),
                 {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
  start_program(m, p, ls.prog_addr(), std::uint32_t(prog.size()), 0);
  (void)m.run(100, p);
  ASSERT_TRUE(m.run_busy());
  EXPECT_NE(m.unit_busy() & 1u, 0u) << "the DMA is busy";
  m.write_reg(hw::reg::kCtrl, 1u << hw::reg::kCtrlSoftReset.lsb, p);
  p.drop_responses();
  EXPECT_FALSE(m.run_busy());
  EXPECT_EQ(m.unit_busy(), 0u);
  EXPECT_EQ(m.read_reg(hw::reg::kStatus, p) & 1u, 0u);
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = 100, .spad = 3, .rows = 2, .row_len = 7, .stride = 15});
  b.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = 2000, .spad = 3, .rows = 2, .row_len = 7, .stride = 15});
  ls.run(b.program(), "after a soft reset");
}

// Counters keep counting across runs (start does not clear them); CTRL.clear_counters does.
// CYCLES_LO/HI read the total like CNT_SEL = 0.
TEST(DmaRtl, CountersAccumulateUntilCleared) {
  PortDevice dev(16, 2, 2, 1);
  Lockstep ls(dev, kDramBytes);
  AccelModel& m = dev.model();
  MemPort& p = dev.dram();
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kInput, .dram = 0, .row_len = 16, .stride = 16});
  const auto prog = b.program();
  dev.write_dram(ls.prog_addr(),
                 {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
  const RunStats first = dev.run(ls.prog_addr(), std::uint32_t(prog.size()));  // clears
  const std::uint64_t total = first.counters[0];
  ASSERT_GT(total, 0u);
  // A second run started without clear_counters.
  m.write_reg(hw::reg::kCtrl, 1u << hw::reg::kCtrlStart.lsb, p);
  while (m.run_busy()) {
    (void)m.run(1000, p);
  }
  const RunStats both = read_counters(m, p);
  EXPECT_EQ(both.counters[0], 2 * total);
  EXPECT_EQ(both.instructions, 2 * first.instructions);
  const std::uint64_t lo = m.read_reg(hw::reg::kCyclesLo, p);
  const std::uint64_t hi = m.read_reg(hw::reg::kCyclesHi, p);
  EXPECT_EQ(lo | (hi << 32), 2 * total);
  m.write_reg(hw::reg::kCtrl, 1u << hw::reg::kCtrlClearCounters.lsb, p);
  EXPECT_EQ(read_counters(m, p).counters, std::vector<std::uint64_t>(hw::kNumCounters));
}

// Without BARRIERs the units overlap: a DMA fills vector-scratchpad rows while SOFTMAX runs on
// others, and both contend for the one scratchpad port (the vector unit wins, the DMA waits).
// No data is shared, so DRAM must still equal CpuDevice's; the class counters now add up to
// more than the total.
TEST(DmaRtl, OverlappingUnitsShareTheVectorScratchpad) {
  PortDevice dev(16, 1, 2, 3);
  Lockstep ls(dev, kDramBytes);
  std::mt19937 rng(5);
  ls.write(0, test::random_values<std::uint8_t>(rng, 8192, 0, 255));
  ProgramBuilder setup;
  setup.load({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = 0, .rows = 4, .row_len = 100, .stride = 400});
  ls.run(setup.program(), "setup");
  std::vector<hw::Instr> prog;
  ProgramBuilder a;
  a.vector({.op = hw::Opcode::kSoftmax, .len = 100, .rows = 4});
  prog.push_back(a.program()[0]);
  ProgramBuilder d;
  d.load({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = 3000, .spad = 600, .rows = 8, .row_len = 60, .stride = 120});
  prog.push_back(d.program()[0]);
  prog.push_back(hw::make_instr(hw::Opcode::kBarrier, 0));
  ProgramBuilder st;
  st.store({.mem = hw::Mem::kVector, .elem_log2 = 1, .dram = 20000, .rows = 4, .row_len = 100, .stride = 200});
  st.store({.mem = hw::Mem::kVector, .elem_log2 = 2, .dram = 24000, .spad = 600, .rows = 8, .row_len = 60, .stride = 240});
  for (const auto& in : st.program()) {
    prog.push_back(in);
  }
  const RunStats s = ls.run(prog, "overlap");
  std::uint64_t classes = 0;
  for (std::size_t c = 4; c <= 9; ++c) {
    classes += s.counters[c];
  }
  EXPECT_GT(classes, s.counters[0]) << "DMA and SOFTMAX cycles overlapped";
  EXPECT_EQ(s.counters[std::size_t(hw::Counter::kPassesSoftmax)], 12u);
}

}  // namespace
