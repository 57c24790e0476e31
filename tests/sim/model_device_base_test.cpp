// SPDX-License-Identifier: Apache-2.0
// The analytical cycle model (ModelDevice) against the Verilated accelerator (SimDevice) on
// base (16 x 16 array, 16 lanes), as model_device_test.cpp does on tiny and small: random
// programs, the GPTs, the random encoder and stories260K decoding, every record and counter
// equal. A few seconds in all, so labelled `sim` like the others.
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

}  // namespace
