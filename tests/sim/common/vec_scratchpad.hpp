// SPDX-License-Identifier: Apache-2.0
/// \file C++ model of the vector scratchpad (docs/accelerator.md) for RTL testbenches, and the
/// per-lane accessors for Verilated `Lanes * 32`-bit ports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <verilated.h>

namespace passim::sim {

// ---------------------------------------------------------------------------------------------
// Lane accessors. Verilator maps a `Lanes * 32`-bit port to IData (1 lane), QData (2 lanes) or
// VlWide<Lanes> (more); lane l is bits [32 l + 31 : 32 l].
// ---------------------------------------------------------------------------------------------

inline std::uint32_t vec_get_lane(std::uint32_t port, std::size_t /*lane*/) { return port; }
inline std::uint32_t vec_get_lane(std::uint64_t port, std::size_t lane) {
  return static_cast<std::uint32_t>(port >> (32 * lane));
}
template <std::size_t N>
std::uint32_t vec_get_lane(const VlWide<N>& port, std::size_t lane) {
  return port.m_storage[lane];
}

inline void vec_set_lane(std::uint32_t& port, std::size_t /*lane*/, std::uint32_t v) { port = v; }
inline void vec_set_lane(std::uint64_t& port, std::size_t lane, std::uint32_t v) {
  const std::uint64_t mask = std::uint64_t{0xFFFFFFFFu} << (32 * lane);
  port = (port & ~mask) | (std::uint64_t{v} << (32 * lane));
}
template <std::size_t N>
void vec_set_lane(VlWide<N>& port, std::size_t lane, std::uint32_t v) {
  port.m_storage[lane] = v;
}

/// One cycle's request on the scratchpad port, as sampled before the clock edge.
struct VecRequest {
  bool req = false;
  bool we = false;
  std::uint32_t addr = 0;
  std::vector<std::uint32_t> wdata;  // one entry per lane
  std::uint32_t wmask = 0;           // bit l = write lane l
};

/// The vector scratchpad: `words` words of `lanes` 32-bit elements. Element i of a row at
/// `base` sits in word base + i / lanes, lane i % lanes. Reads are synchronous: the data of a
/// read request sampled at a clock edge is returned by `clock()` and must be driven on
/// mem_rdata_i during the NEXT cycle. In cycles without a read response the testbench drives
/// random garbage, so a unit that samples mem_rdata_i in the wrong cycle fails.
class VecScratchpad {
 public:
  /// Fills the whole memory with random words from `seed` (tail lanes and rows around the
  /// ones under test are garbage, as in hardware).
  VecScratchpad(std::size_t words, std::size_t lanes, std::uint32_t seed)
      : lanes_(lanes), data_(words * lanes), rng_(seed) {
    for (auto& w : data_) {
      w = static_cast<std::uint32_t>(rng_());
    }
  }

  [[nodiscard]] std::size_t lanes() const { return lanes_; }
  [[nodiscard]] std::size_t words() const { return data_.size() / lanes_; }
  [[nodiscard]] const std::vector<std::uint32_t>& raw() const { return data_; }

  std::uint32_t& at(std::size_t word, std::size_t lane) {
    check(word);
    return data_[word * lanes_ + lane];
  }

  /// Stores `values` sign-extended to 32 bits as a row at word `base`.
  template <typename T>
  void write_row(std::size_t base, std::span<const T> values) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      at(base + i / lanes_, i % lanes_) = static_cast<std::uint32_t>(std::int32_t{values[i]});
    }
  }

  /// The n 32-bit lanes of the row at word `base`, as int32.
  [[nodiscard]] std::vector<std::int32_t> read_row(std::size_t base, std::size_t n) {
    std::vector<std::int32_t> row(n);
    for (std::size_t i = 0; i < n; ++i) {
      row[i] = static_cast<std::int32_t>(at(base + i / lanes_, i % lanes_));
    }
    return row;
  }

  /// One clock edge: performs a write (masked per lane), or captures a read. Returns what the
  /// memory drives on the read-data port in the next cycle: the word read, or garbage.
  std::vector<std::uint32_t> clock(const VecRequest& r) {
    std::vector<std::uint32_t> rdata(lanes_);
    if (r.req && !r.we) {
      for (std::size_t l = 0; l < lanes_; ++l) {
        rdata[l] = at(r.addr, l);
      }
      return rdata;
    }
    if (r.req && r.we) {
      for (std::size_t l = 0; l < lanes_; ++l) {
        if ((r.wmask >> l) & 1u) {
          at(r.addr, l) = r.wdata[l];
        }
      }
    }
    for (auto& v : rdata) {
      v = static_cast<std::uint32_t>(rng_());
    }
    return rdata;
  }

 private:
  void check(std::size_t word) const {
    if (word >= words()) {
      throw std::out_of_range("scratchpad word " + std::to_string(word) +
                              " >= " + std::to_string(words()));
    }
  }

  std::size_t lanes_;
  std::vector<std::uint32_t> data_;
  std::mt19937 rng_;
};

}  // namespace passim::sim
