// SPDX-License-Identifier: Apache-2.0
/// \file Random accelerator programs for co-simulation (docs/isa.md): valid programs that use
/// every opcode with random shapes, addresses, operands and classes inside the limits that
/// `check_instr` enforces, and invalid ones in which exactly one field (or PROG_LEN, PROG_ADDR,
/// the END) is broken, with the error and instruction index the hardware must report.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "passim/hw/spec.hpp"

namespace passim::gen {

/// Where the generator puts things in DRAM (byte addresses; every region 16-byte aligned).
/// Loads read anywhere (the parameter memory only from the tables, whose entries keep the
/// documented limits: a Requant step's bit 31 is 0); stores write only the output region,
/// and now and then the program area itself (the hardware copies a program before it runs,
/// so a program may overwrite its own image).
struct DramLayout {
  std::uint64_t bytes = 0;         ///< DRAM size: both devices must have exactly this many
  std::uint64_t eps = 0;           ///< `kEpsEntries` 64-bit eps values below 2^31
  std::uint64_t params = 0;        ///< `kParamEntries` Requant steps (bit 31 clear)
  std::uint64_t data = 0;          ///< random bytes, written once by initial_dram()
  std::uint64_t out = 0;           ///< store destinations, [out, prog_addr)
  std::uint64_t prog_addr = 0;     ///< where programs go: the last prog_depth instructions
  std::uint64_t prog_bytes = 0;    ///< prog_depth * 16
};

/// One program to run on both devices: write `image` at `write_addr`, then run `len`
/// instructions from `prog_addr`.
struct GenCase {
  std::vector<hw::Instr> image;  ///< the program as written (END included unless removed)
  std::uint64_t write_addr = 0;
  std::uint64_t prog_addr = 0;   ///< PROG_ADDR
  std::uint32_t len = 0;         ///< PROG_LEN
  bool invalid = false;
  hw::ErrorCode expected = hw::ErrorCode::kNone;  ///< the error both devices must report
  std::uint32_t expected_index = 0;               ///< its ERROR_INFO
  std::string corruption;                         ///< what was broken, for messages
};

/// Seeded generator of random programs for one configuration. Not thread-safe; the same seed
/// gives the same programs.
class ProgramGen {
 public:
  static constexpr std::uint64_t kEpsEntries = 64;
  static constexpr std::uint64_t kParamEntries = 1024;

  /// `dram_bytes` >= 256 KiB, a multiple of 16, and large enough for the program area.
  /// Throws std::invalid_argument otherwise.
  ProgramGen(const hw::HwConfig& cfg, std::uint64_t dram_bytes, std::uint64_t seed);

  [[nodiscard]] const DramLayout& layout() const noexcept { return layout_; }
  /// The DRAM image to write to both devices before the first program: eps values, random
  /// data, zeros elsewhere.
  [[nodiscard]] std::vector<std::uint8_t> initial_dram();
  /// A valid program of about 1..`max_ops` operations (plus the BARRIERs between units, the
  /// eps loads before the norms, and END), at most prog_depth instructions.
  [[nodiscard]] GenCase next_valid(std::size_t max_ops);
  /// An invalid program: a short valid one with one thing broken (see GenCase::corruption).
  [[nodiscard]] GenCase next_invalid();

 private:
  struct Body;  // the instructions being built, and the unit of the last one
  [[nodiscard]] std::uint64_t pick(std::uint64_t lo, std::uint64_t hi);  // uniform, [lo, hi]
  [[nodiscard]] bool chance(double p);
  [[nodiscard]] std::uint64_t small_or_large(std::uint64_t lo, std::uint64_t hi);
  [[nodiscard]] std::uint64_t random_step();  // a parameter entry holding a Requant step
  [[nodiscard]] hw::Instr random_dma(bool load);
  [[nodiscard]] hw::Instr random_matmul(hw::Opcode op);
  [[nodiscard]] hw::Instr random_vector(hw::Opcode op);
  [[nodiscard]] hw::Instr random_valid(hw::Opcode op);
  void add_op(Body& b, hw::Opcode op);
  [[nodiscard]] GenCase finish(Body& b);
  void corrupt_field(GenCase& c);
  void corrupt_program(GenCase& c);

  hw::HwConfig cfg_;
  DramLayout layout_;
  std::mt19937_64 rng_;
};

/// Every opcode of the ISA (docs/isa.md), control opcodes included.
[[nodiscard]] const std::vector<hw::Opcode>& all_opcodes();

}  // namespace passim::gen
