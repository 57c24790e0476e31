// SPDX-License-Identifier: Apache-2.0
// SimOptions that are out of range are refused by name (SimDevice and LoopDevice share the
// check in RtlDevice).
//
// SimDevice under AddressSanitizer (the asan preset): after SystemC has run an SC_THREAD and
// switched back, ASan still knows the main stack (sim/src/sanitizer_fibers.cpp). Without it,
// the first throw on the main stack prints "ASan is ignoring requested
// __asan_handle_no_return" and leaves stale poison behind (false reports later on). Other
// builds skip the test. SystemC elaborates once per process: one SimDevice per TEST.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "passim/compiler/program.hpp"
#include "passim/sim/sim_device.hpp"

namespace {

using namespace passim;

TEST(SimOptionsCheck, ABadTimeOrSizeIsRefusedByName) {
  using Set = std::function<void(sim::SimOptions&)>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::pair<std::string, Set>> bad = {
      {"dram_bytes", [](sim::SimOptions& o) { o.dram_bytes = 0; }},
      {"clock_mhz", [](sim::SimOptions& o) { o.clock_mhz = 0; }},
      {"dram_latency_ns", [nan](sim::SimOptions& o) { o.dram_latency_ns = nan; }},
      {"dram_latency_ns", [](sim::SimOptions& o) { o.dram_latency_ns = -7; }},
      {"dram_bytes_per_ns", [](sim::SimOptions& o) { o.dram_bytes_per_ns = 0; }},
      {"dram_bytes_per_ns", [](sim::SimOptions& o) { o.dram_bytes_per_ns = INFINITY; }},
      {"quantum_ns", [](sim::SimOptions& o) { o.quantum_ns = -1; }},
  };
  for (const auto& [field, set] : bad) {
    sim::SimOptions o;
    o.dram_bytes = 64 * 1024;
    set(o);
    try {
      sim::LoopDevice dev(sim::make_accel_model_tiny(), o);
      ADD_FAILURE() << field << ": accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("SimOptions." + field + ": expected"),
                std::string::npos) << e.what();
    }
  }
  sim::SimOptions edge;  // the ends of the ranges are accepted
  edge.dram_bytes = 64 * 1024;
  edge.dram_latency_ns = 0;
  edge.dram_bytes_per_ns = 1e6;
  EXPECT_NO_THROW(sim::LoopDevice(sim::make_accel_model_tiny(), edge));
}

TEST(SimDeviceSanitizer, AThrowAfterARunUnwindsAKnownMainStack) {
#if !defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "checks an AddressSanitizer build (cmake --workflow --preset asan)";
#else
  sim::SimOptions o;
  o.dram_bytes = 64 * 1024;
  sim::SimDevice dev(sim::make_accel_model_tiny(), o);
  ProgramBuilder b;
  const auto prog = b.program();  // END only
  dev.write_dram(0, {reinterpret_cast<const std::uint8_t*>(prog.data()), 16});
  (void)dev.run(0, 1);  // SystemC switches to its SC_THREAD and back to this stack
  testing::internal::CaptureStderr();
  try {
    throw std::runtime_error("unwound on the main stack");
  } catch (const std::runtime_error&) {
  }
  const std::string asan_says = testing::internal::GetCapturedStderr();
  EXPECT_EQ(asan_says.find("__asan_handle_no_return"), std::string::npos) << asan_says;
#endif
}

}  // namespace
