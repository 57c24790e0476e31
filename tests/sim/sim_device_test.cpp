// SPDX-License-Identifier: Apache-2.0
// SimDevice under AddressSanitizer (the asan preset): after SystemC has run an SC_THREAD and
// switched back, ASan still knows the main stack (sim/src/sanitizer_fibers.cpp). Without it,
// the first throw on the main stack prints "ASan is ignoring requested
// __asan_handle_no_return" and leaves stale poison behind (false reports later on). Other
// builds skip the test. SystemC elaborates once per process: one SimDevice per TEST.
#include <cstdint>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "passim/compiler/program.hpp"
#include "passim/sim/sim_device.hpp"

namespace {

using namespace passim;

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
