// SPDX-License-Identifier: Apache-2.0
// The generated hardware header (passim/hw/spec.hpp) agrees with the runtime and is usable.
#include "passim/hw/spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "passim/fixed_point.hpp"
#include "passim/kernels/softmax.hpp"
#include "passim/quant/quant_model.hpp"

namespace hw = passim::hw;

namespace {

// The numeric contract exists in the runtime (the golden model) and in spec/passim.json.
// tools/gen_spec.py compares them when it generates; this pins it at compile time too.
static_assert(hw::kQkBits == passim::kQkBits);
static_assert(hw::kProbOne == passim::kProbOne);
static_assert(hw::kLogitFracBits == passim::kLogitFracBits);
static_assert(hw::kExpInFracBits == passim::kExpInFracBits);
static_assert(hw::kSoftmaxRecipBits == passim::kSoftmaxRecipBits);
static_assert(hw::kSigmoidFracBits == passim::kSigmoidFracBits);
static_assert(hw::kRopeFracBits == passim::kRopeFracBits);
static_assert(hw::kRequantBiasBits == passim::kRequantBiasBits);

TEST(HwSpec, MatchesRuntimeConstants) {
  EXPECT_EQ(hw::kQkBits, passim::kQkBits);
  EXPECT_EQ(hw::kProbOne, passim::kProbOne);
  EXPECT_EQ(hw::kLogitFracBits, passim::kLogitFracBits);
  EXPECT_EQ(hw::kExpInFracBits, passim::kExpInFracBits);
  EXPECT_EQ(hw::kDataWidth, 8);
  EXPECT_EQ(hw::kAccWidth, 32);
}

TEST(HwSpec, TinyFitsTheEightDspsOfAnIce40Up5k) {
  EXPECT_LE(hw::kTiny.macs(), 8u);
  EXPECT_EQ(hw::kTiny.array_rows, 2u);
  EXPECT_EQ(hw::kTiny.array_cols, 4u);
  EXPECT_EQ(hw::kTiny.lanes, 2u);
}

TEST(HwSpec, ConfigsAreWithinLimits) {
  for (const hw::HwConfig& cfg : hw::kConfigs) {
    SCOPED_TRACE(cfg.name);
    EXPECT_GE(cfg.array_rows, 1u);
    EXPECT_LE(cfg.array_rows, hw::kMaxArrayRows);
    EXPECT_LE(cfg.array_cols, hw::kMaxArrayCols);
    EXPECT_LE(cfg.lanes, hw::kMaxLanes);
    EXPECT_LE(hw::kMaxLanes, passim::kernels::kMaxSoftmaxLanes);  // the online Softmax's lane state
    EXPECT_LE(cfg.input_depth, hw::kMaxInputDepth);
    EXPECT_LE(cfg.weight_depth, hw::kMaxWeightDepth);
    EXPECT_LE(cfg.acc_depth, hw::kMaxAccDepth);
    EXPECT_LE(cfg.vector_depth, hw::kMaxVectorDepth);
    EXPECT_LE(cfg.param_depth, hw::kMaxParamDepth);
    EXPECT_LE(cfg.prog_depth, hw::kMaxProgDepth);
  }
}

TEST(HwSpec, FindsConfigsByName) {
  EXPECT_EQ(hw::find_config("tiny"), &hw::kConfigs[0]);
  ASSERT_NE(hw::find_config("base"), nullptr);
  EXPECT_EQ(hw::find_config("base")->array_rows, 16u);
  EXPECT_EQ(hw::find_config("huge"), nullptr);
  // Dereferenced rather than compared with nullptr: under UBSan (-fsanitize=null) GCC does not
  // fold an object's address compared with nullptr in a constant expression.
  static_assert(hw::find_config("small")->name == "small");
}

TEST(HwSpec, EncodesAndDecodesMatmulFields) {
  hw::Instr instr = hw::make_instr(hw::Opcode::kMatmul, 3);
  namespace f = hw::fields::matmul;
  hw::set_field(instr, f::kM, 5);
  hw::set_field(instr, f::kK, 172);
  hw::set_field(instr, f::kN, 64);
  hw::set_field(instr, f::kOutBits, 8);
  hw::set_field(instr, f::kDstStride, 5);
  hw::set_field(instr, f::kAAddr, 0xBEEF);
  EXPECT_EQ(hw::get_field(instr, hw::fields::kOpcode), 0x20u);
  EXPECT_EQ(hw::get_field(instr, hw::fields::kLayer), 3u);
  EXPECT_EQ(hw::get_field(instr, hw::fields::kOpClass),
            static_cast<std::uint32_t>(hw::OpClass::kMatmul));
  EXPECT_EQ(hw::get_field(instr, f::kM), 5u);
  EXPECT_EQ(hw::get_field(instr, f::kK), 172u);
  EXPECT_EQ(hw::get_field(instr, f::kN), 64u);
  EXPECT_EQ(hw::get_field(instr, f::kOutBits), 8u);
  EXPECT_EQ(hw::get_field(instr, f::kDstStride), 5u);
  EXPECT_EQ(hw::get_field(instr, f::kAAddr), 0xBEEFu);
  // Values wider than a field are truncated to it and do not disturb its neighbours.
  hw::set_field(instr, f::kK, 0xFFFF'FFFFu);
  EXPECT_EQ(hw::get_field(instr, f::kK), 2047u);
  EXPECT_EQ(hw::get_field(instr, f::kM), 5u);
  EXPECT_EQ(hw::get_field(instr, f::kN), 64u);
}

TEST(HwSpec, FullWidthFieldsRoundTrip) {
  hw::Instr instr = hw::make_instr(hw::Opcode::kDmaLoad, 0);
  hw::set_field(instr, hw::fields::dma_load::kDramAddr, 0xDEAD'BEEFu);
  EXPECT_EQ(instr[1], 0xDEAD'BEEFu);
  EXPECT_EQ(hw::get_field(instr, hw::fields::dma_load::kDramAddr), 0xDEAD'BEEFu);
}

TEST(HwSpec, NamesAndClassesOfOpcodes) {
  EXPECT_EQ(hw::opcode_name(hw::Opcode::kAttnScore), "ATTN_SCORE");
  EXPECT_EQ(hw::default_op_class(hw::Opcode::kSoftmax), hw::OpClass::kSoftmax);
  EXPECT_EQ(hw::default_op_class(hw::Opcode::kRmsnorm), hw::OpClass::kNorm);
  EXPECT_EQ(hw::default_op_class(hw::Opcode::kDmaStore), hw::OpClass::kDma);
  EXPECT_EQ(hw::unit_of(hw::Opcode::kMatmul), hw::Unit::kMatmul);
  EXPECT_EQ(hw::unit_of(hw::Opcode::kEmbed), hw::Unit::kVector);
}

TEST(HwSpec, GptOpcodesAreVectorOpsOfTheirClass) {
  EXPECT_EQ(static_cast<int>(hw::Opcode::kLayernorm), 0x39);
  EXPECT_EQ(static_cast<int>(hw::Opcode::kBatchnorm), 0x3A);
  EXPECT_EQ(static_cast<int>(hw::Opcode::kGelu), 0x3B);
  EXPECT_EQ(hw::opcode_name(hw::Opcode::kLayernorm), "LAYERNORM");
  EXPECT_EQ(hw::default_op_class(hw::Opcode::kLayernorm), hw::OpClass::kNorm);
  EXPECT_EQ(hw::default_op_class(hw::Opcode::kBatchnorm), hw::OpClass::kNorm);
  EXPECT_EQ(hw::default_op_class(hw::Opcode::kGelu), hw::OpClass::kOtherVector);
  for (const auto op : {hw::Opcode::kLayernorm, hw::Opcode::kBatchnorm, hw::Opcode::kGelu}) {
    EXPECT_EQ(hw::unit_of(op), hw::Unit::kVector) << hw::opcode_name(op);
  }
  // They share the vector operand layout of RMSNORM.
  namespace rms = hw::fields::rmsnorm;
  namespace ln = hw::fields::layernorm;
  EXPECT_EQ(ln::kGainFracBits.lsb, rms::kGainFracBits.lsb);
  EXPECT_EQ(ln::kSrc2Addr.lsb, rms::kSrc2Addr.lsb);
  EXPECT_EQ(hw::fields::batchnorm::kParamAddr.lsb, rms::kParamAddr.lsb);
  EXPECT_EQ(hw::fields::gelu::kRows.lsb, rms::kRows.lsb);
}

TEST(HwSpec, ParamEntryHoldsMultShiftAndSignedBias) {
  namespace p = hw::fields::param;
  EXPECT_EQ(p::kRqMult.lsb, 0);
  EXPECT_EQ(p::kRqShift.lsb, 32);
  EXPECT_EQ(p::kRqBias.lsb, 38);
  EXPECT_EQ(p::kRqBias.width, passim::kRequantBiasBits);
  EXPECT_EQ(p::kRqBias.lsb + p::kRqBias.width, 64) << "the bias is the entry's top bits";
  EXPECT_EQ(hw::fields::dma_store::kRequant.lsb, 26);
  EXPECT_EQ(hw::fields::dma_store::kRequant.width, 1);
}

TEST(HwSpec, RegisterOffsetsAreUniqueAndWordAligned) {
  std::array<std::uint32_t, 13> offsets = {
      hw::reg::kCtrl,     hw::reg::kStatus,   hw::reg::kProgAddr,  hw::reg::kProgLen,
      hw::reg::kCyclesLo, hw::reg::kCyclesHi, hw::reg::kCntSel,    hw::reg::kCntLo,
      hw::reg::kCntHi,    hw::reg::kWatchdog, hw::reg::kErrorInfo, hw::reg::kVersion,
      hw::reg::kConfig};
  for (std::uint32_t offset : offsets) {
    EXPECT_EQ(offset % 4, 0u) << "offset 0x" << std::hex << offset;
  }
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(std::adjacent_find(offsets.begin(), offsets.end()), offsets.end());
}

TEST(HwSpec, CountersCoverEveryOpClass) {
  EXPECT_GT(hw::kNumCounters, static_cast<std::size_t>(hw::Counter::kInstret));
  // cycles_<class> and passes_<class> are indexed by op class (psm_counters relies on it).
  const auto ctl = static_cast<std::size_t>(hw::OpClass::kControl);
  EXPECT_EQ(static_cast<std::size_t>(hw::Counter::kCyclesMatmul) + ctl,
            static_cast<std::size_t>(hw::Counter::kCyclesControl));
  EXPECT_EQ(static_cast<std::size_t>(hw::Counter::kPassesMatmul) + ctl,
            static_cast<std::size_t>(hw::Counter::kPassesControl));
  EXPECT_EQ(static_cast<std::size_t>(hw::Counter::kCyclesMatmul) +
                static_cast<std::size_t>(hw::OpClass::kSoftmax),
            static_cast<std::size_t>(hw::Counter::kCyclesSoftmax));
}

}  // namespace
