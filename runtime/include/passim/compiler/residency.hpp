// SPDX-License-Identifier: Apache-2.0
/// \file Resident weights: every weight tile of a model at a fixed
/// weight-scratchpad address (and its requantisation steps at fixed parameter
/// entries), loaded once by a preload program, when the configuration's
/// scratchpads hold them all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "passim/hw/spec.hpp"

namespace passim {

/// Where the weights live while the model runs: streamed from DRAM by every
/// MATMUL's weight tile, resident on chip (loaded once), or resident when they
/// fit and streamed otherwise.
enum class WeightsMode : std::uint8_t { kAuto, kResident, kStreamed };

/// "auto", "resident" or "streamed".
[[nodiscard]] const char* weights_mode_name(WeightsMode m) noexcept;

/// One weight tile W^T[:, col0 : col0 + cols] of `k` rows (`stride` bytes apart
/// in DRAM) and its `cols` requantisation steps, with its fixed on-chip home.
struct ResidentTile {
  std::uint64_t dram = 0;  ///< DRAM byte address of row 0
  std::uint64_t rq = 0;    ///< DRAM byte address of column 0's parameter entry
  std::size_t k = 0, cols = 0;
  std::uint64_t stride = 0;  ///< bytes between rows in DRAM
  std::uint32_t layer = 0;   ///< the layer of the MATMUL that uses it (reports only)
  std::size_t w_addr = 0;    ///< weight-scratchpad word of row 0
  std::size_t rq_addr = 0;   ///< parameter entry of column 0 (params resident only)
};

/// `count` parameter entries that every pass loads from DRAM byte `dram` for a vector
/// instruction (the attention steps, SiLU's and GELU's, MUL's per channel, a norm's eps),
/// with their fixed home when resident.
struct ResidentSteps {
  std::uint64_t dram = 0;
  std::size_t count = 0;
  std::size_t addr = 0;     ///< parameter entry of the first step
  std::uint32_t layer = 0;  ///< the layer of the first instruction that reads them
};

/// A block of steps a compiled pass loads for a vector instruction: how many, and the layer of
/// the first instruction that reads it (its preload is attributed there).
struct StepBlock {
  std::size_t count = 0;
  std::uint32_t layer = 0;
};

/// The resident plan of a model on one configuration; `weights` false:
/// streamed.
struct Residency {
  bool weights = false;                         ///< every tile at a fixed weight-scratchpad address
  bool params = false;                          ///< and its steps at fixed parameter entries
  std::map<std::uint64_t, ResidentTile> tiles;  ///< by the DRAM address of the tile
  std::size_t weight_words = 0;                 ///< weight-scratchpad words the tiles take
  std::size_t param_base = 0;                   ///< first resident parameter entry
  std::size_t param_entries = 0;                ///< parameter entries the tiles' steps take
  /// The vector instructions' steps, after the tiles' (only when `params` and they fit).
  std::map<std::uint64_t, ResidentSteps> steps;
  std::size_t step_entries = 0;    ///< parameter entries the vector steps take
  std::uint64_t weight_bytes = 0;  ///< int8 weights the preload moves (k * cols summed)
  std::string reason;              ///< why the weights are streamed (empty if resident)

  /// The tile whose row 0 is at DRAM byte `dram`, or nullptr.
  [[nodiscard]] const ResidentTile* find(std::uint64_t dram) const {
    const auto it = tiles.find(dram);
    return it == tiles.end() ? nullptr : &it->second;
  }
  /// The home of `count` steps loaded from DRAM byte `dram`, or nullptr.
  [[nodiscard]] const ResidentSteps* find_steps(std::uint64_t dram, std::size_t count) const {
    const auto it = steps.find(dram);
    return it == steps.end() || it->second.count != count ? nullptr : &it->second;
  }
};

/// The resident plan for the weight tiles of `step` (the programs of one
/// decoding step, with weights streamed: every DMA_LOAD into the weight
/// scratchpad followed by its parameter load). Parameter entries below
/// `param_base` stay free for the loads every step makes (EMBED's, the norms',
/// SwiGLU's MUL steps, a sequence pass's rows). `mode` kStreamed, or a model
/// whose tiles do not fit `cfg`, gives `weights` false with the reason.
/// Gives blocks of vector steps (DRAM byte address -> entries) homes after the tiles'
/// steps, when the tiles' steps are resident: the smallest blocks first, as many as the
/// parameter memory of `cfg` holds. The passes load the others.
void place_steps(Residency& r, const std::map<std::uint64_t, StepBlock>& blocks,
                 const hw::HwConfig& cfg);

[[nodiscard]] Residency plan_residency(const std::vector<std::vector<hw::Instr>>& step,
                                       const hw::HwConfig& cfg, std::size_t param_base,
                                       WeightsMode mode);

}  // namespace passim
