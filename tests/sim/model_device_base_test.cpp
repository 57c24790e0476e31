// SPDX-License-Identifier: Apache-2.0
// The analytical cycle model (ModelDevice) against the Verilated accelerator (SimDevice) on
// base (16 x 16 array, 16 lanes), as model_device_test.cpp does on tiny and small: random
// programs, the GPTs, the random encoder and stories260K decoding, every record and counter
// equal. A few seconds in all, so labelled `sim` like the others.
#include <cstdlib>
#include <random>
#include <string>

#include "model_compare.hpp"

namespace {

using namespace passim;
using namespace passim::model_test;

TEST(ModelDeviceBaseRtl, RandomProgramsOnBase) {
  random_programs(hw::kBase, sim::make_accel_model_base, 17, 400, {50.0, 1.6});
}
TEST(ModelDeviceBaseRtl, LayerNormGptDecodeOnBase) {
  project_gpt("ln-gpt", BatchNormMode::kUnfused, hw::kBase, sim::make_accel_model_base, kThreePass,
              false);
}
TEST(ModelDeviceBaseRtl, BatchNormGptSequencesOnBase) {
  project_gpt("bn-gpt", BatchNormMode::kUnfused, hw::kBase, sim::make_accel_model_base, kOnline,
              true);
}
TEST(ModelDeviceBaseRtl, RandomEncoderOnBase) {
  encoder(hw::kBase, sim::make_accel_model_base, AttentionUnit::kAuto);
}
TEST(ModelDeviceBaseRtl, Stories260kOnBase) {
  PASSIM_REQUIRE_DATA();
  stories(hw::kBase, sim::make_accel_model_base);
}

// A campaign over seeds and memory timings, one process per seed (not run by ctest: it skips
// without PASSIM_MODEL_CAMPAIGN=<tiny|small|base>:<seed>). The seed draws a clock of 50 to 250
// MHz (or 100), a latency of 10 to 500 ns and a bandwidth of 0.25 to 8 bytes per ns; even
// seeds run 400 random programs, odd ones 200 streamed-tile programs. docs/cycle-model.md
// gives the loop.
TEST(ModelDeviceCampaign, SeedFromEnvironment) {
  const char* env = std::getenv("PASSIM_MODEL_CAMPAIGN");
  const std::string arg = env != nullptr ? env : "";
  const std::size_t colon = arg.find(':');
  if (colon == std::string::npos) {
    GTEST_SKIP() << "set PASSIM_MODEL_CAMPAIGN=<tiny|small|base>:<seed>";
  }
  const std::string config = arg.substr(0, colon);
  const std::uint64_t seed = std::stoull(arg.substr(colon + 1));
  std::mt19937_64 draw(seed ^ 0x5EED);
  const double latency = double(1 + draw() % 50) * 10, bandwidth = double(1 + draw() % 32) / 4;
  const double clock = draw() % 3 == 0 ? 100.0 : double(50 + draw() % 200);
  const hw::HwConfig& cfg = config == "tiny"    ? hw::kTiny
                            : config == "small" ? hw::kSmall
                                                : hw::kBase;
  const ModelFactory make = config == "tiny"    ? sim::make_accel_model_tiny
                            : config == "small" ? sim::make_accel_model_small
                                                : sim::make_accel_model_base;
  std::cout << config << " seed " << seed << ": " << clock << " MHz, " << latency << " ns, "
            << bandwidth << " bytes per ns\n";
  if (seed % 2 == 0) {
    random_programs(cfg, make, seed, 400, {latency, bandwidth, clock});
  } else {
    streamed(cfg, make, seed, 200, {latency, bandwidth, clock});
  }
}

}  // namespace
