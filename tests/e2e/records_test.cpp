// SPDX-License-Identifier: Apache-2.0
// The report's per-op records: the hardware's instruction records joined with their
// instructions and summed by layer, opcode, class and shape.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "passim/compiler/program.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/records.hpp"
#include "passim/hw/spec.hpp"

namespace {

using namespace passim;

hw::Instr matmul_instr(std::uint32_t layer, std::uint32_t m, std::uint32_t k, std::uint32_t n) {
  hw::Instr in = hw::make_instr(hw::Opcode::kMatmul, layer);
  hw::set_field(in, hw::fields::matmul::kM, m);
  hw::set_field(in, hw::fields::matmul::kK, k);
  hw::set_field(in, hw::fields::matmul::kN, n);
  return in;
}

// The report's per-op records: records of instructions with the same layer, opcode, class
// and shape are summed (with their count and MACs), across runs too; others stay apart.
TEST(OpRecordTable, SumsRecordsOfTheSameLayerOpClassAndShape) {
  hw::Instr attn = hw::make_instr(hw::Opcode::kAttnScore, 1);
  hw::set_field(attn, hw::fields::attn_score::kRows, 5);
  hw::set_field(attn, hw::fields::attn_score::kLen, 8);
  const std::vector<hw::Instr> prog = {matmul_instr(1, 1, 64, 8),
                                       hw::make_instr(hw::Opcode::kBarrier, 1),
                                       attn,
                                       matmul_instr(1, 1, 64, 8),
                                       matmul_instr(2, 1, 64, 8),
                                       matmul_instr(1, 1, 64, 16),
                                       hw::make_instr(hw::Opcode::kEnd, 0)};
  // {index, unit, cycles, stall_cycles, passes}; index 99 is outside the program: ignored
  const std::vector<InstrRecord> recs = {{0, 1, 100, 0, 32}, {2, 2, 40, 0, 5},   {3, 1, 110, 0, 32},
                                         {4, 1, 120, 0, 32}, {5, 1, 200, 0, 64}, {99, 0, 7, 7, 1}};
  passim::OpRecordTable table;
  table.add(prog, recs);
  table.add(prog, std::vector<InstrRecord>{{0, 1, 90, 0, 32}});
  const auto& rows = table.records();
  ASSERT_EQ(rows.size(), 4u) << "same shape in layers 1 and 2, another n, and ATTN_SCORE";
  EXPECT_EQ(rows[0].op, hw::Opcode::kMatmul);
  EXPECT_EQ(rows[0].layer, 1u);
  EXPECT_EQ(rows[0].count, 3u);
  EXPECT_EQ(rows[0].cycles, 300u);
  EXPECT_EQ(rows[0].passes, 96u);
  EXPECT_EQ(rows[0].macs, 3u * 64 * 8);
  ASSERT_EQ(rows[0].shape.size(), 3u);
  EXPECT_EQ(rows[0].shape[2].first, "n");
  EXPECT_EQ(rows[0].shape[2].second, 8u);
  EXPECT_EQ(rows[1].op, hw::Opcode::kAttnScore);
  EXPECT_EQ(rows[1].op_class, std::uint32_t(hw::OpClass::kAttention));
  EXPECT_EQ(rows[1].macs, 5u * 8);
  EXPECT_EQ(rows[2].layer, 2u);
  EXPECT_EQ(rows[3].shape[2].second, 16u);
  EXPECT_EQ(rows[3].cycles, 200u);
}

// An OpRecordTable attached to a device sees every program it runs, with the records that
// belong to it: one MATMUL and two DMA records per tile, summed by shape.
TEST(OpRecordTable, ObservesEveryRunOfADevice) {
  CpuDevice dev(hw::kTiny, 1 << 16);
  OpRecordTable table;
  dev.add_observer(&table);
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kInput, .dram = 0, .row_len = 4, .stride = 4});
  b.matmul({.m = 1, .k = 4, .n = 2, .requant = false});
  const RunStats s = dev.run_program(0x8000, b.program());
  EXPECT_EQ(s.instructions, 4u) << "DMA, BARRIER, MATMUL, END";
  // CpuDevice has no trace records, so the table sees the run but sums nothing.
  EXPECT_TRUE(s.records.empty());
  EXPECT_TRUE(table.records().empty());
  table.on_run(b.program(), RunStats{true, {}, 4, {{0, 0, 10, 2, 1}, {2, 1, 20, 0, 2}}});
  ASSERT_EQ(table.records().size(), 2u);
  EXPECT_EQ(table.records()[1].op, hw::Opcode::kMatmul);
  EXPECT_EQ(table.records()[1].macs, 4u * 2u);
}

// With a classifier, DMA records of the same shape stay apart by what they move; the other
// records get DmaMoves::kNone whatever the classifier says.
TEST(OpRecordTable, DmaRecordsSplitByWhatTheyMove) {
  ProgramBuilder b;
  b.load({.mem = hw::Mem::kWeight, .dram = 0x100, .row_len = 4, .stride = 4});
  b.load({.mem = hw::Mem::kInput, .dram = 0x900, .row_len = 4, .stride = 4});
  b.matmul({.m = 1, .k = 4, .n = 2, .requant = false});
  const auto& prog = b.program();
  OpRecordTable table([](const hw::Instr& in) {
    return hw::get_field(in, hw::fields::dma_load::kDramAddr) < 0x800 ? DmaMoves::kWeights
                                                                       : DmaMoves::kKvCache;
  });
  // {index, unit, cycles, stall_cycles, passes}: the two loads, then the MATMUL (after a BARRIER)
  table.add(prog, std::vector<InstrRecord>{{0, 0, 10, 1, 1}, {1, 0, 12, 2, 1}, {3, 1, 20, 0, 2}});
  const auto& rows = table.records();
  ASSERT_EQ(rows.size(), 3u) << "two DMA_LOADs of one shape, apart by what they move";
  EXPECT_EQ(rows[0].moves, DmaMoves::kWeights);
  EXPECT_EQ(rows[0].cycles, 10u);
  EXPECT_EQ(rows[1].moves, DmaMoves::kKvCache);
  EXPECT_EQ(rows[1].stall_cycles, 2u);
  EXPECT_EQ(rows[2].op, hw::Opcode::kMatmul);
  EXPECT_EQ(rows[2].moves, DmaMoves::kNone);
}

}  // namespace
