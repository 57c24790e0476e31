// SPDX-License-Identifier: Apache-2.0
/// \file Runs one command of a vector unit like `VecHarness::run()`, and also records the order
/// of its passes (`pass_o` while busy) and, if asked, pulses `start_i` with other command
/// fields while the unit is busy, which the unit must ignore (docs/accelerator.md).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "vec_harness.hpp"
#include "vec_scratchpad.hpp"

namespace passim::sim {

/// What `vec_run_traced()` saw.
struct VecTracedRun {
  VecRunStats stats;
  std::vector<unsigned> passes;  ///< pass_o in the busy cycles, repeats merged: e.g. {0, 1, 2}
  int stray_starts = 0;          ///< start_i pulses sent while busy_o was high
};

/// Pulses start_i (the command ports must already be set), then runs until done_o, at most
/// `max_cycles` cycles, plus 4 idle cycles. With `scramble`, each busy cycle has a 1 in 4
/// chance (from `spam_seed`) of calling `scramble(top)` to change the command ports and
/// raising start_i: a unit that is busy must not notice.
template <typename M>
VecTracedRun vec_run_traced(M& top, VecScratchpad& mem, std::uint64_t max_cycles,
                            const std::function<void(M&)>& scramble = {},
                            std::uint32_t spam_seed = 1) {
  VecHarness<M> h(top, mem);
  std::mt19937 spam(spam_seed);
  VecTracedRun run;
  top.start_i = 1;
  h.tick(&run.stats);
  top.start_i = 0;
  for (std::uint64_t c = 1; c <= max_cycles; ++c) {
    top.clk_i = 0;
    top.eval();
    const bool done = top.done_o != 0;
    if (top.busy_o != 0) {
      const unsigned pass = top.pass_o & 3u;
      if (run.passes.empty() || run.passes.back() != pass) {
        run.passes.push_back(pass);
      }
      if (scramble && spam() % 4 == 0) {
        scramble(top);
        top.start_i = 1;
        ++run.stray_starts;
      }
    }
    h.tick(&run.stats);
    top.start_i = 0;
    if (done) {
      run.stats.latency = c;
      run.stats.finished = true;
      break;
    }
  }
  for (int i = 0; i < 4; ++i) {
    h.tick(&run.stats);
  }
  return run;
}

}  // namespace passim::sim
