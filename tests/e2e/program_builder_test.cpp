// SPDX-License-Identifier: Apache-2.0
// ProgramBuilder's BARRIERs (docs/isa.md "Execution model"): one at every change of unit, except
// that, given the configuration, a load into the weight scratchpad or the parameter memory
// runs under a MATMUL that reads none of its words (double-buffered weight tiles,
// docs/cycle-model.md "DMA behind compute"). Whether the overlapped programs compute what
// the sequential ones do is the RTL tests' part (cpu == rtl with streamed weights).
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpt_fixture.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/compiler/program.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/hw/spec.hpp"
#include "passim/quant/quantize.hpp"

namespace {

using namespace passim;
namespace f = hw::fields;
using hw::Mem;
using hw::Opcode;

Opcode op_of(const hw::Instr& in) { return static_cast<Opcode>(hw::get_field(in, f::kOpcode)); }

/// The opcodes of a program, BARRIER as "|", the rest by their first letter (L load, M matmul,
/// V vector, S store).
std::string shape(const std::vector<hw::Instr>& body) {
  std::string s;
  for (const hw::Instr& in : body) {
    switch (op_of(in)) {
      case Opcode::kBarrier: s += '|'; break;
      case Opcode::kDmaLoad: s += 'L'; break;
      case Opcode::kDmaStore: s += 'S'; break;
      case Opcode::kMatmul:
      case Opcode::kMatmulHeads: s += 'M'; break;
      case Opcode::kMatmulAct: s += 'M'; break;
      default: s += 'V'; break;
    }
  }
  return s;
}

// tiny: C = 4 weights per word. A 16-deep tile of 8 columns takes 16 * 2 = 32 words.
const MatmulOp kTileA{.m = 1, .k = 16, .n = 8, .w_addr = 0, .rq_addr = 0};
const MatmulOp kTileB{.m = 1, .k = 16, .n = 8, .w_addr = 32, .rq_addr = 8};

TEST(ProgramBuilderBarriers, WithoutTheConfigEveryChangeOfUnitHasOne) {
  ProgramBuilder b;
  b.load({.mem = Mem::kWeight, .spad = 0, .rows = 16, .row_len = 8});
  b.matmul(kTileA);
  b.load({.mem = Mem::kWeight, .spad = 32, .rows = 16, .row_len = 8});
  b.load({.mem = Mem::kParam, .elem_log2 = 3, .spad = 8, .row_len = 8});
  b.matmul(kTileB);
  EXPECT_EQ(shape(b.body()), "L|M|LL|M");
}

TEST(ProgramBuilderBarriers, TheNextTileLoadsUnderThisTilesMatmul) {
  ProgramBuilder b(hw::kTiny.prog_depth, hw::kTiny);
  b.load({.mem = Mem::kWeight, .spad = 0, .rows = 16, .row_len = 8});
  b.load({.mem = Mem::kParam, .elem_log2 = 3, .spad = 0, .row_len = 8});
  b.matmul(kTileA);
  b.load({.mem = Mem::kWeight, .spad = 32, .rows = 16, .row_len = 8});  // words 32..63
  b.load({.mem = Mem::kParam, .elem_log2 = 3, .spad = 8, .row_len = 8});
  b.matmul(kTileB);  // reads what the loads wrote: waits for them
  b.load({.mem = Mem::kWeight, .spad = 0, .rows = 16, .row_len = 8});  // tile A's words again
  EXPECT_EQ(shape(b.body()), "LL|MLL|ML");
}

TEST(ProgramBuilderBarriers, ALoadIntoWordsAMatmulReadsWaits) {
  ProgramBuilder weights(hw::kTiny.prog_depth, hw::kTiny);
  weights.matmul(kTileA);                                                      // words 0..31
  weights.load({.mem = Mem::kWeight, .spad = 31, .rows = 1, .row_len = 4});  // word 31
  EXPECT_EQ(shape(weights.body()), "M|L");
  ProgramBuilder params(hw::kTiny.prog_depth, hw::kTiny);
  params.matmul(kTileA);                                               // entries 0..7
  params.load({.mem = Mem::kParam, .elem_log2 = 3, .spad = 7, .row_len = 1});
  EXPECT_EQ(shape(params.body()), "M|L");
  // Raw int32 sums read no parameter entry.
  ProgramBuilder raw(hw::kTiny.prog_depth, hw::kTiny);
  raw.matmul({.m = 1, .k = 16, .n = 8, .requant = false});
  raw.load({.mem = Mem::kParam, .elem_log2 = 3, .spad = 0, .row_len = 1});
  EXPECT_EQ(shape(raw.body()), "ML");
}

// MATMUL_ACT reads W^T rows of every digit group: G * k rows, so with three groups a load
// into the words of the third group waits, and one past them goes under.
TEST(ProgramBuilderBarriers, AMatmulActHoldsTheWeightWordsOfEveryDigitGroup) {
  const MatmulOp act{.m = 1, .k = 16, .n = 8, .requant = false, .digits = 3};  // 3 * 16 * 2 words
  ProgramBuilder inside(hw::kTiny.prog_depth, hw::kTiny);
  inside.matmul(act);
  inside.load({.mem = Mem::kWeight, .spad = 95, .rows = 1, .row_len = 4});
  EXPECT_EQ(shape(inside.body()), "M|L");
  ProgramBuilder past(hw::kTiny.prog_depth, hw::kTiny);
  past.matmul(act);
  past.load({.mem = Mem::kWeight, .spad = 96, .rows = 1, .row_len = 4});
  EXPECT_EQ(shape(past.body()), "ML");
}

TEST(ProgramBuilderBarriers, OnlyTileLoadsUnderOnlyMatmuls) {
  // Other memories, stores, and loads under a vector op keep their BARRIER.
  ProgramBuilder b(hw::kTiny.prog_depth, hw::kTiny);
  b.matmul(kTileA);
  b.load({.mem = Mem::kInput, .spad = 0, .row_len = 16});
  b.matmul(kTileA);
  b.store({.mem = Mem::kVector, .spad = 500, .row_len = 8});
  b.vector({.op = Opcode::kAdd, .src = 0, .src2 = 8, .dst = 16, .len = 8});
  b.load({.mem = Mem::kWeight, .spad = 100, .rows = 1, .row_len = 4});
  b.load({.mem = Mem::kParam, .elem_log2 = 3, .spad = 100, .row_len = 1});
  EXPECT_EQ(shape(b.body()), "M|L|M|S|V|LL");
}

TEST(ProgramBuilderBarriers, StreamSlotsTakeTheHalvesInTurn) {
  ProgramBuilder b;
  EXPECT_EQ(b.stream_slot(Mem::kWeight, 700, 2048), 0u);
  EXPECT_EQ(b.stream_slot(Mem::kWeight, 1024, 2048), 1024u);
  EXPECT_EQ(b.stream_slot(Mem::kParam, 40, 256), 0u);  // each memory takes its own turns
  EXPECT_EQ(b.stream_slot(Mem::kWeight, 8, 2048), 0u);
  EXPECT_EQ(b.stream_slot(Mem::kParam, 40, 256), 128u);
  EXPECT_EQ(b.stream_slot(Mem::kWeight, 1025, 2048), 0u);  // more than a half: from word 0
  EXPECT_EQ(b.stream_slot(Mem::kWeight, 2048, 2048), 0u);
  EXPECT_THROW(b.stream_slot(Mem::kWeight, 2049, 2048), std::invalid_argument);
  EXPECT_THROW(b.stream_slot(Mem::kWeight, 0, 2048), std::invalid_argument);
}

// In a compiled model with streamed weights, no load between two BARRIERs writes a word that a
// MATMUL between the same BARRIERs reads, and most tile loads do run under a MATMUL.
TEST(ProgramBuilderBarriers, CompiledTilesOverlapWithoutClobbering) {
  const FloatModel fm = test::random_gpt(NormKind::kLayer, 21);
  const QuantModel m = quantize(fm, calibrate(fm, self_generated_calibration(fm, 24)));
  const ModelCompiler c(m, hw::kTiny, {.weights = WeightsMode::kStreamed});
  std::size_t under = 0, loads = 0;
  for (const auto& prog : c.step(1, 0)) {
    std::vector<hw::Instr> region;
    for (const hw::Instr& in : prog) {
      if (op_of(in) == Opcode::kBarrier || op_of(in) == Opcode::kEnd) {
        region.clear();
        continue;
      }
      const bool tile_load = op_of(in) == Opcode::kDmaLoad &&
                             hw::get_field(in, f::dma_load::kMem) == std::uint32_t(Mem::kWeight);
      if (tile_load) {
        ++loads;
        const std::size_t lo = hw::get_field(in, f::dma_load::kSpadAddr);
        const std::size_t hi = lo + hw::get_field(in, f::dma_load::kRows) *
                                        ((hw::get_field(in, f::dma_load::kRowLen) + 3) / 4);
        for (const hw::Instr& mm : region) {
          if (hw::unit_of(op_of(mm)) != hw::Unit::kMatmul) continue;
          ++under;
          const std::size_t w = hw::get_field(mm, f::matmul::kWAddr);
          const std::size_t w_end = w + hw::get_field(mm, f::matmul::kK) *
                                            ((hw::get_field(mm, f::matmul::kN) + 3) / 4);
          EXPECT_TRUE(hi <= w || w_end <= lo) << lo << ".." << hi << " vs " << w << ".." << w_end;
        }
      }
      region.push_back(in);
    }
  }
  EXPECT_GT(loads, 0u);
  EXPECT_GT(2 * under, loads) << under << " of " << loads << " tile loads run under a MATMUL";
}

}  // namespace
