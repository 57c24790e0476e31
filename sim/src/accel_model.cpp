// SPDX-License-Identifier: Apache-2.0
// One Verilated model's `AccelModel` factory. Compiled once per configuration and variant with
// PASSIM_ACCEL_HEADER (the Verilated class header), PASSIM_ACCEL_CLASS, PASSIM_ACCEL_CONFIG
// (a passim::hw config constant) and PASSIM_ACCEL_FACTORY (the function name) defined.
#include PASSIM_ACCEL_HEADER

#include "accel_model_impl.hpp"

namespace passim::sim {

std::unique_ptr<AccelModel> PASSIM_ACCEL_FACTORY(bool trace) {
  return std::make_unique<VerilatedAccel<PASSIM_ACCEL_CLASS>>(hw::PASSIM_ACCEL_CONFIG, trace);
}

}  // namespace passim::sim
