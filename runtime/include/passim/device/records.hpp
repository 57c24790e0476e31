// SPDX-License-Identifier: Apache-2.0
/// \file Per-op records of the cycle report: the hardware's per-instruction records
/// (`RunStats::records`) joined with the instructions they belong to (layer, opcode, op class,
/// shape), summed over the instructions that share all four.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "passim/compiler/layout.hpp"
#include "passim/device/device.hpp"
#include "passim/hw/spec.hpp"

namespace passim {

/// Op class names in `hw::OpClass` order (and in counter order: kCyclesMatmul + i).
inline constexpr std::array<std::string_view, 7> kOpClassNames = {
    "matmul", "attention", "softmax", "norm", "other_vector", "dma", "control"};
static_assert(kOpClassNames.size() == std::size_t(hw::Counter::kPassesMatmul) -
                                          std::size_t(hw::Counter::kCyclesMatmul),
              "one name per op class of spec/passim.json");
static_assert(std::size_t(hw::OpClass::kControl) == kOpClassNames.size() - 1 &&
                  std::size_t(hw::OpClass::kAttention) == 1,
              "names in hw::OpClass order");

/// Tells what a DMA instruction moves (the compiler knows its DRAM map:
/// ModelCompiler::dma_moves).
using DmaClassifier = std::function<DmaMoves(const hw::Instr&)>;

/// An instruction's size fields, named as in docs/isa.md: MATMUL {m, k, n}; DMA_LOAD and
/// DMA_STORE {rows, row_len}; the vector opcodes {rows, len}; BARRIER, END, NOP none.
using Shape = std::vector<std::pair<std::string_view, std::uint32_t>>;

/// The shape of `in` (see `Shape`).
[[nodiscard]] Shape instr_shape(const hw::Instr& in);

/// Multiply-accumulates of `in`: m * k * n for MATMUL; rows * len for ATTN_SCORE (one
/// q . k_t of len products per cached position) and ATTN_VALUE (len outputs, each a sum over
/// rows positions); 0 for the others.
[[nodiscard]] std::uint64_t instr_macs(const hw::Instr& in);

/// The records of every instruction with the same phase, layer, opcode, op class and shape,
/// summed.
struct OpRecord {
  Phase phase = Phase::kDecode;
  std::uint32_t layer = 0;  ///< the instruction's `layer` field
  hw::Opcode op = hw::Opcode::kNop;
  DmaMoves moves = DmaMoves::kNone;  ///< DMA only, with a classifier (else kNone)
  std::uint32_t op_class = 0;  ///< the instruction's `op_class` field (`hw::OpClass` value)
  Shape shape;
  std::uint64_t count = 0;         ///< instructions summed into this record
  std::uint64_t passes = 0;        ///< passes, summed
  std::uint64_t cycles = 0;        ///< busy cycles, summed
  std::uint64_t stall_cycles = 0;  ///< stall cycles (DMA: memory port), summed
  std::uint64_t macs = 0;          ///< `instr_macs`, summed
  std::uint64_t saturated = 0;     ///< results clamped (InstrRecord::saturated), summed
};

/// Sums the records of many runs (every program of every decoding step) into OpRecords,
/// kept in the order each (phase, layer, opcode, what a DMA moves, op class, shape) first
/// appeared. Attach it to a Device (Device::add_observer) to collect every run_program().
class OpRecordTable final : public RunObserver {
 public:
  /// `classify` names what each DMA moves; without one, every record has DmaMoves::kNone.
  explicit OpRecordTable(DmaClassifier classify = {}) : classify_(std::move(classify)) {}

  /// Adds the records of one run of `prog`. A record whose index is outside `prog` is
  /// ignored.
  void add(std::span<const hw::Instr> prog, std::span<const InstrRecord> records,
           Phase phase = Phase::kDecode);
  void on_run(std::span<const hw::Instr> program, const RunStats& stats) override {
    add(program, stats.records, stats.phase);
  }
  [[nodiscard]] const std::vector<OpRecord>& records() const noexcept { return rows_; }

 private:
  using Key = std::tuple<Phase, std::uint32_t, std::uint32_t, DmaMoves, std::uint32_t,
                         std::vector<std::uint32_t>>;
  DmaClassifier classify_;
  std::vector<OpRecord> rows_;
  std::map<Key, std::size_t> index_;
};

}  // namespace passim
