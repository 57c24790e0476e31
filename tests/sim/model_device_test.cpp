// SPDX-License-Identifier: Apache-2.0
// The analytical cycle model (ModelDevice, docs/cycle-model.md) against the Verilated
// accelerator in its SystemC system model (SimDevice) on tiny and small: the same programs on
// both, and every DMA, matmul and vector instruction's record (cycles, stall cycles, passes,
// saturated) and every run's 24 counters must be equal. Workloads: random programs of every
// opcode (tests/gen) at four memory timings, and the compiled programs of the shipped models
// (ln-gpt, bn-gpt, the random encoder, stories260K when ../shared has it). Each test prints
// how many instructions it compared and how many differed, per opcode. One SimDevice per
// process: one test case per workload and configuration. base: model_device_base_test.cpp.
#include "model_compare.hpp"

namespace {

using namespace passim;
using namespace passim::model_test;

TEST(ModelDeviceRtl, RandomProgramsOnTiny) {
  random_programs(hw::kTiny, sim::make_accel_model_tiny, 20261204, 1500, {50.0, 1.6});
}
TEST(ModelDeviceRtl, RandomProgramsOnTinySlowDram) {
  random_programs(hw::kTiny, sim::make_accel_model_tiny, 11, 600, {420.0, 0.4});
}
TEST(ModelDeviceRtl, RandomProgramsOnTinyFastDram) {
  random_programs(hw::kTiny, sim::make_accel_model_tiny, 7, 600, {10.0, 8.0});
}
// Times that are no whole number of picoseconds per cycle or per beat: 150 MHz (6667 ps),
// 3 bytes per ns (2667 ps per beat), 33.3 ns: the model rounds them as SystemC does.
TEST(ModelDeviceRtl, RandomProgramsOnTinyOddTiming) {
  random_programs(hw::kTiny, sim::make_accel_model_tiny, 13, 300, {33.3, 3.0, 150.0});
}
TEST(ModelDeviceRtl, RandomProgramsOnSmall) {
  random_programs(hw::kSmall, sim::make_accel_model_small, 5, 1000, {50.0, 1.6});
}

// DMA loads under MATMULs (double-buffered weight tiles and steps), random shapes.
TEST(ModelDeviceRtl, StreamedTilesOnTiny) {
  streamed(hw::kTiny, sim::make_accel_model_tiny, 3, 300, {50.0, 1.6});
}
TEST(ModelDeviceRtl, StreamedTilesOnTinySlowDram) {
  streamed(hw::kTiny, sim::make_accel_model_tiny, 4, 200, {420.0, 0.4});
}
TEST(ModelDeviceRtl, StreamedTilesOnSmallFastDram) {
  streamed(hw::kSmall, sim::make_accel_model_small, 5, 300, {10.0, 8.0});
}

// The model's memory timing defaults are the simulator's (one home: passim::DramTiming).
TEST(ModelDeviceRtl, TimingDefaultsAreTheSimulators) {
  const ModelDevice model(hw::kTiny);
  const sim::SimOptions sim;
  EXPECT_EQ(model.timing().clock_mhz, sim.clock_mhz);
  EXPECT_EQ(model.timing().latency_ns, sim.dram_latency_ns);
  EXPECT_EQ(model.timing().bytes_per_ns, sim.dram_bytes_per_ns);
  EXPECT_EQ(model.dram_bytes(), sim.dram_bytes);
  EXPECT_EQ(model.name(), "model");
}

TEST(ModelDeviceRtl, LayerNormGptDecodeOnTiny) {
  project_gpt("ln-gpt", BatchNormMode::kUnfused, hw::kTiny, sim::make_accel_model_tiny, kThreePass,
              false);
}
TEST(ModelDeviceRtl, LayerNormGptSequencesOnTiny) {
  project_gpt("ln-gpt", BatchNormMode::kUnfused, hw::kTiny, sim::make_accel_model_tiny, kThreePass,
              true);
}
TEST(ModelDeviceRtl, BatchNormGptDecodeOnTiny) {
  project_gpt("bn-gpt", BatchNormMode::kUnfused, hw::kTiny, sim::make_accel_model_tiny, kOnline,
              false);
}
TEST(ModelDeviceRtl, BatchNormGptSequencesOnTiny) {
  project_gpt("bn-gpt", BatchNormMode::kUnfused, hw::kTiny, sim::make_accel_model_tiny, kOnline,
              true);
}
TEST(ModelDeviceRtl, LayerNormGptDecodeOnSmall) {
  project_gpt("ln-gpt", BatchNormMode::kUnfused, hw::kSmall, sim::make_accel_model_small, kOnline,
              false);
}
TEST(ModelDeviceRtl, LayerNormGptSequencesOnSmall) {
  project_gpt("ln-gpt", BatchNormMode::kUnfused, hw::kSmall, sim::make_accel_model_small,
              kThreePass, true);
}
TEST(ModelDeviceRtl, FoldedBatchNormGptDecodeOnSmall) {
  project_gpt("bn-gpt", BatchNormMode::kFolded, hw::kSmall, sim::make_accel_model_small, kThreePass,
              false);
}
TEST(ModelDeviceRtl, BatchNormGptSequencesOnSmall) {
  project_gpt("bn-gpt", BatchNormMode::kUnfused, hw::kSmall, sim::make_accel_model_small, kOnline,
              true);
}

TEST(ModelDeviceRtl, RandomEncoderOnTiny) {
  encoder(hw::kTiny, sim::make_accel_model_tiny, AttentionUnit::kAuto);
}
TEST(ModelDeviceRtl, RandomEncoderArrayAttentionOnTiny) {
  encoder(hw::kTiny, sim::make_accel_model_tiny, AttentionUnit::kArray);
}
TEST(ModelDeviceRtl, RandomEncoderOnSmall) {
  encoder(hw::kSmall, sim::make_accel_model_small, AttentionUnit::kScores);
}

TEST(ModelDeviceRtl, Stories260kOnTiny) {
  PASSIM_REQUIRE_DATA();
  stories(hw::kTiny, sim::make_accel_model_tiny);
}
TEST(ModelDeviceRtl, Stories260kOnSmall) {
  PASSIM_REQUIRE_DATA();
  stories(hw::kSmall, sim::make_accel_model_small);
}

}  // namespace
