// SPDX-License-Identifier: Apache-2.0
// check_instr (the C++ twin of rtl/top/psm_instr_check.sv) and the errors of CpuDevice::run:
// one DeviceError per documented code (docs/isa.md "Errors"), with the instruction index the
// hardware puts in ERROR_INFO. Also the random program generator of tests/gen, without RTL:
// its valid programs pass the checks and run on CpuDevice, its invalid ones raise exactly the
// error they were built for.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "passim/device/cpu_device.hpp"
#include "passim/device/instr_check.hpp"
#include "program_gen.hpp"

namespace {

using namespace passim;
using hw::ErrorCode;
using hw::Opcode;
namespace f = hw::fields;

constexpr std::uint64_t kDram = 1 << 18;
constexpr std::uint64_t kProg = kDram - 256 * 16;

hw::Instr dma(Opcode op, hw::Mem mem, std::uint32_t esize, std::uint32_t rows,
              std::uint32_t row_len, std::uint32_t dram = 0) {
  hw::Instr in = hw::make_instr(op, 0);
  hw::set_field(in, f::dma_load::kMem, std::uint32_t(mem));
  hw::set_field(in, f::dma_load::kElemSize, esize);
  hw::set_field(in, f::dma_load::kRows, rows);
  hw::set_field(in, f::dma_load::kRowLen, row_len);
  hw::set_field(in, f::dma_load::kDramAddr, dram);
  hw::set_field(in, f::dma_load::kDramStride, row_len << esize);
  return in;
}

hw::Instr matmul(std::uint32_t m, std::uint32_t k, std::uint32_t n) {
  hw::Instr in = hw::make_instr(Opcode::kMatmul, 0);
  hw::set_field(in, f::matmul::kM, m);
  hw::set_field(in, f::matmul::kK, k);
  hw::set_field(in, f::matmul::kN, n);
  hw::set_field(in, f::matmul::kOutBits, 8);
  return in;
}

hw::Instr vec(Opcode op, std::uint32_t len, std::uint32_t rows) {
  hw::Instr in = hw::make_instr(op, 0);
  hw::set_field(in, f::rmsnorm::kLen, len);
  hw::set_field(in, f::rmsnorm::kRows, rows);
  return in;
}

/// check_instr on tiny: the code, and a detail that names `field`.
void expect_check(const hw::Instr& in, ErrorCode code, const std::string& field) {
  const InstrCheck c = check_instr(in, hw::kTiny);
  EXPECT_EQ(c.code, code) << c.detail;
  EXPECT_NE(c.detail.find(field), std::string::npos) << c.detail;
}

TEST(CheckInstr, AcceptsValidInstructionsOfEveryUnit) {
  for (const hw::Instr& in :
       {hw::make_instr(Opcode::kNop, 3), hw::make_instr(Opcode::kEnd, 0),
        dma(Opcode::kDmaLoad, hw::Mem::kVector, 2, 4, 10),
        dma(Opcode::kDmaStore, hw::Mem::kParam, 3, 1, 256),
        matmul(128, 7, 5), vec(Opcode::kSoftmax, 2048, 1), vec(Opcode::kRope, 2, 1)}) {
    const InstrCheck c = check_instr(in, hw::kTiny);
    EXPECT_TRUE(c.ok()) << c.detail;
  }
}

TEST(CheckInstr, NamesTheFieldOfEachErrorCode) {
  hw::Instr unknown = hw::make_instr(Opcode::kNop, 0);
  hw::set_field(unknown, f::kOpcode, 0x03);
  expect_check(unknown, ErrorCode::kBadOpcode, "found 0x03");
  hw::Instr cls = vec(Opcode::kAdd, 4, 1);
  hw::set_field(cls, f::kOpClass, 7);
  expect_check(cls, ErrorCode::kBadOperand, "op_class: expected 0..6, found 7");
  expect_check(dma(Opcode::kDmaLoad, hw::Mem::kInput, 1, 1, 4), ErrorCode::kBadOperand,
               "elem_size: expected 0 for mem input, found 1");
  expect_check(dma(Opcode::kDmaLoad, hw::Mem::kVector, 3, 1, 4), ErrorCode::kBadOperand,
               "elem_size: expected 0..2 for mem vector, found 3");
  expect_check(dma(Opcode::kDmaStore, hw::Mem::kParam, 2, 1, 4), ErrorCode::kBadOperand,
               "elem_size: expected 3 for mem param, found 2");
  expect_check(dma(Opcode::kDmaLoad, static_cast<hw::Mem>(5), 0, 1, 4), ErrorCode::kBadOperand,
               "mem: expected 0..3, found 5");
  expect_check(dma(Opcode::kDmaLoad, hw::Mem::kInput, 0, 0, 4), ErrorCode::kBadOperand,
               "found 0 and 4");
  expect_check(dma(Opcode::kDmaLoad, hw::Mem::kParam, 3, 1, 257), ErrorCode::kSpadRange,
               "expected <= 256 words of mem param, found 257");
  expect_check(matmul(129, 1, 1), ErrorCode::kBadOperand, "expected 1..128");
  expect_check(matmul(1, 1, 257), ErrorCode::kBadOperand, "1..256");
  expect_check(matmul(128, 1, 64), ErrorCode::kBadOperand, "(the output buffer), found 2048");
  hw::Instr bits = matmul(1, 1, 1);
  hw::set_field(bits, f::matmul::kOutBits, 33);
  expect_check(bits, ErrorCode::kBadOperand, "out_bits: expected 0 or 2..32, found 33");
  hw::Instr stride = matmul(2, 1, 8);
  hw::set_field(stride, f::matmul::kDstStride, 3);
  expect_check(stride, ErrorCode::kBadOperand, "dst_stride: expected 0 or >= ceil(n / L) = 4");
  hw::Instr heads = matmul(2, 1, 8);  // tiny: L = 2
  hw::set_field(heads, f::kOpcode, std::uint32_t(Opcode::kMatmulHeads));
  expect_check(heads, ErrorCode::kBadOperand, "MATMUL_HEADS head_size: expected >= 1, found 0");
  hw::set_field(heads, f::matmul_heads::kHeadSize, 3);  // heads of 3, 3, 2: 2 words each
  const auto last = std::uint32_t(hw::kTiny.vector_depth - 11);  // two rows need 12 words
  hw::set_field(heads, f::matmul_heads::kDstAddr, last);
  expect_check(heads, ErrorCode::kSpadRange, "dst " + std::to_string(last) + "+12 of");
  hw::set_field(heads, f::matmul_heads::kDstAddr, last - 1);
  EXPECT_TRUE(check_instr(heads, hw::kTiny).ok()) << check_instr(heads, hw::kTiny).detail;
  // MATMUL_ACT: digits 1..3; G groups of a and of W^T; transposed, n rows of ceil(m / L).
  hw::Instr act = matmul(3, 5, 4);  // tiny: R = 2, C = 4, L = 2
  hw::set_field(act, f::kOpcode, std::uint32_t(Opcode::kMatmulAct));
  expect_check(act, ErrorCode::kBadOperand, "MATMUL_ACT digits: expected 1..3, found 0");
  hw::set_field(act, f::matmul_act::kDigits, 1);  // its field is not MATMUL's dst_stride
  EXPECT_TRUE(check_instr(act, hw::kTiny).ok()) << check_instr(act, hw::kTiny).detail;
  hw::set_field(act, f::matmul_act::kDigits, 3);
  const auto a_last = std::uint32_t(hw::kTiny.input_depth - 3 * 3 * 3);  // m * G * ceil(k / R)
  hw::set_field(act, f::matmul_act::kAAddr, a_last + 1);
  expect_check(act, ErrorCode::kSpadRange, "a " + std::to_string(a_last + 1) + "+27 of");
  hw::set_field(act, f::matmul_act::kAAddr, a_last);
  hw::set_field(act, f::matmul_act::kWAddr, std::uint32_t(hw::kTiny.weight_depth - 14));
  expect_check(act, ErrorCode::kSpadRange, "W^T " + std::to_string(hw::kTiny.weight_depth - 14) +
                                               "+15 of");  // G * k * ceil(n / C)
  hw::set_field(act, f::matmul_act::kWAddr, 0);
  hw::set_field(act, f::matmul_act::kTranspose, 1);  // 4 rows of ceil(3 / 2) = 2 words
  hw::set_field(act, f::matmul_act::kDstAddr, std::uint32_t(hw::kTiny.vector_depth - 7));
  expect_check(act, ErrorCode::kSpadRange, "+8 of");
  hw::set_field(act, f::matmul_act::kDstAddr, std::uint32_t(hw::kTiny.vector_depth - 8));
  EXPECT_TRUE(check_instr(act, hw::kTiny).ok()) << check_instr(act, hw::kTiny).detail;
  expect_check(vec(Opcode::kRope, 3, 1), ErrorCode::kBadOperand, "even and >= 2, found 3");
  hw::Instr gain = vec(Opcode::kRmsnorm, 4, 1);
  hw::set_field(gain, f::rmsnorm::kGainFracBits, 14);
  expect_check(gain, ErrorCode::kBadOperand, "gain_frac_bits: expected 0..13, found 14");
  expect_check(vec(Opcode::kSoftmax, 2049, 1), ErrorCode::kSpadRange, "len 2049");
}

// The order of precedence of psm_instr_check: opcode, operands, ranges, then op_class.
TEST(CheckInstr, ReportsTheFirstErrorInTheHardwaresOrder) {
  hw::Instr both = dma(Opcode::kDmaLoad, hw::Mem::kInput, 1, 1, 99999);
  hw::set_field(both, f::kOpClass, 9);
  EXPECT_EQ(check_instr(both, hw::kTiny).code, ErrorCode::kBadOperand);
  hw::Instr range = vec(Opcode::kSoftmax, 4096, 1);
  hw::set_field(range, f::kOpClass, 9);
  EXPECT_EQ(check_instr(range, hw::kTiny).code, ErrorCode::kSpadRange);
}

/// Runs `prog` written at `at` with PROG_ADDR `addr` and PROG_LEN `len` on a fresh tiny
/// CpuDevice; expects DeviceError(code, index).
void expect_run_error(const std::vector<hw::Instr>& prog, std::uint64_t at, std::uint64_t addr,
                      std::uint32_t len, ErrorCode code, std::uint32_t index) {
  CpuDevice dev(hw::kTiny, kDram);
  dev.write_dram(at, {reinterpret_cast<const std::uint8_t*>(prog.data()), prog.size() * 16});
  try {
    (void)dev.run(addr, len);
    ADD_FAILURE() << "expected " << error_code_name(code);
  } catch (const DeviceError& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.index(), index) << e.what();
    EXPECT_NE(std::string(e.what()).find(error_code_name(code)), std::string::npos) << e.what();
  }
}

// Each CpuDevice bug found by the random co-simulation: it ran what the hardware refuses.
TEST(CpuDeviceErrors, RefusesWhatTheHardwareRefuses) {
  const hw::Instr end = hw::make_instr(Opcode::kEnd, 0);
  const hw::Instr nop = hw::make_instr(Opcode::kNop, 0);
  // Element sizes a memory does not hold (were accepted: an int16 load into the input one).
  expect_run_error({dma(Opcode::kDmaLoad, hw::Mem::kInput, 1, 1, 4), end}, kProg, kProg, 2,
                   ErrorCode::kBadOperand, 0);
  expect_run_error({nop, dma(Opcode::kDmaStore, hw::Mem::kVector, 3, 1, 4), end}, kProg, kProg,
                   3, ErrorCode::kBadOperand, 1);
  // op_class above control (was accepted, and counted nowhere).
  hw::Instr cls = hw::make_instr(Opcode::kBarrier, 0);
  hw::set_field(cls, f::kOpClass, 7);
  expect_run_error({nop, nop, cls, end}, kProg, kProg, 4, ErrorCode::kBadOperand, 2);
  // PROG_ADDR not 16-byte aligned (was run from the unaligned bytes).
  expect_run_error({nop, end}, kProg, kProg + 8, 2, ErrorCode::kProgAlign, 0);
  // A fetch past the end of DRAM (was std::out_of_range): instruction 2 is the first outside.
  expect_run_error({nop, nop}, kDram - 32, kDram - 32, 5, ErrorCode::kBus, 2);
  // PROG_LEN 0 (was "ran without END" at instruction 0) and PROG_LEN above prog_depth.
  expect_run_error({end}, kProg, kProg, 0, ErrorCode::kProgLen, 0);
  expect_run_error({end}, kProg, kProg, 257, ErrorCode::kProgLen, 0);
  // No END within PROG_LEN: the hardware's bad_opcode at index PROG_LEN.
  expect_run_error({nop, nop, nop}, kProg, kProg, 3, ErrorCode::kBadOpcode, 3);
  // A DMA outside DRAM: the memory port's bus error.
  expect_run_error({dma(Opcode::kDmaLoad, hw::Mem::kVector, 0, 1, 8, kDram - 4), end}, kProg,
                   kProg, 2, ErrorCode::kBus, 0);
}

// The hardware copies the whole program before the first instruction runs, so a program that
// stores over its own later instructions still runs as written (CpuDevice used to fetch each
// instruction from DRAM as it ran, and here hit opcode 0xff).
TEST(CpuDeviceErrors, AProgramThatOverwritesItselfRunsAsFetched) {
  CpuDevice dev(hw::kTiny, kDram);
  constexpr std::uint32_t kData = 0x100, kOut = 0x200;
  dev.write_dram(kData, std::vector<std::uint8_t>(16, 0xFF));
  const std::vector<hw::Instr> prog = {
      dma(Opcode::kDmaLoad, hw::Mem::kVector, 0, 1, 16, kData),
      dma(Opcode::kDmaStore, hw::Mem::kVector, 0, 1, 16, std::uint32_t(kProg + 32)),
      dma(Opcode::kDmaStore, hw::Mem::kVector, 0, 1, 16, kOut), hw::make_instr(Opcode::kEnd, 0)};
  const RunStats s = dev.run_program(kProg, prog);
  EXPECT_EQ(s.instructions, 4u);
  std::vector<std::uint8_t> out(16), image(16);
  dev.read_dram(kOut, out);
  dev.read_dram(kProg + 32, image);
  EXPECT_EQ(out, std::vector<std::uint8_t>(16, 0xFF)) << "instruction 2 ran as fetched";
  EXPECT_EQ(image, std::vector<std::uint8_t>(16, 0xFF)) << "its DRAM image was overwritten";
}

// ---- the random program generator (tests/gen) -----------------------------------------------

TEST(ProgramGen, ValidProgramsPassTheChecksUseEveryOpcodeAndRunOnCpuDevice) {
  for (const hw::HwConfig* cfg : {&hw::kTiny, &hw::kSmall, &hw::kBase}) {
    const std::uint64_t bytes = std::uint64_t{1} << 20;
    gen::ProgramGen g(*cfg, bytes, 42);
    CpuDevice dev(*cfg, bytes);
    dev.write_dram(0, g.initial_dram());
    std::map<std::uint32_t, int> seen;
    for (int p = 0; p < 150; ++p) {
      const gen::GenCase c = g.next_valid(24);
      ASSERT_LE(c.len, cfg->prog_depth);
      for (const hw::Instr& in : c.image) {
        ++seen[hw::get_field(in, f::kOpcode)];
        const InstrCheck chk = check_instr(in, *cfg);
        ASSERT_TRUE(chk.ok()) << cfg->name << " program " << p << ": " << chk.detail;
      }
      ASSERT_NO_THROW((void)dev.run_program(c.prog_addr, c.image)) << cfg->name << " " << p;
    }
    for (const Opcode op : gen::all_opcodes()) {  // about 150 * 12 / 17 draws each
      EXPECT_GE(seen[std::uint32_t(op)], 40) << cfg->name << " " << hw::opcode_name(op);
    }
  }
}

TEST(ProgramGen, InvalidProgramsRaiseTheErrorTheyWereBuiltFor) {
  const std::uint64_t bytes = std::uint64_t{1} << 18;
  gen::ProgramGen g(hw::kTiny, bytes, 9);
  CpuDevice dev(hw::kTiny, bytes);
  dev.write_dram(0, g.initial_dram());
  std::set<std::string> kinds;
  for (int p = 0; p < 1500; ++p) {
    const gen::GenCase c = g.next_invalid();
    kinds.insert(c.corruption.substr(0, c.corruption.find(" in instruction")));
    if (!c.image.empty()) {
      dev.write_dram(c.write_addr, {reinterpret_cast<const std::uint8_t*>(c.image.data()),
                                    c.image.size() * 16});
    }
    try {
      (void)dev.run(c.prog_addr, c.len);
      ADD_FAILURE() << "program " << p << " ran: " << c.corruption;
    } catch (const DeviceError& e) {
      EXPECT_EQ(e.code(), c.expected) << "program " << p << " " << c.corruption << ": "
                                      << e.what();
      EXPECT_EQ(e.index(), c.expected_index) << "program " << p << " " << c.corruption;
    }
  }
  EXPECT_GE(kinds.size(), 25u) << "every kind of corruption is drawn";
}

TEST(ProgramGen, TheSameSeedGivesTheSamePrograms) {
  gen::ProgramGen a(hw::kSmall, 1 << 20, 5), b(hw::kSmall, 1 << 20, 5);
  EXPECT_EQ(a.initial_dram(), b.initial_dram());
  for (int p = 0; p < 20; ++p) {
    EXPECT_EQ(a.next_valid(24).image, b.next_valid(24).image);
    EXPECT_EQ(a.next_invalid().corruption, b.next_invalid().corruption);
  }
}

}  // namespace
