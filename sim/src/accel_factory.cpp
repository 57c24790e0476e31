// SPDX-License-Identifier: Apache-2.0
// One configuration's make_accel_model_<cfg>(trace): the model built with FST tracing support
// when a waveform is wanted, the faster one built without it otherwise (sim/CMakeLists.txt).
// Compiled with PASSIM_ACCEL_FACTORY, PASSIM_ACCEL_PLAIN and PASSIM_ACCEL_TRACE defined.
#include "passim/sim/accel_model.hpp"

namespace passim::sim {

std::unique_ptr<AccelModel> PASSIM_ACCEL_PLAIN(bool trace);  // accel_model.cpp, no tracing
std::unique_ptr<AccelModel> PASSIM_ACCEL_TRACE(bool trace);  // accel_model.cpp, --trace-fst

std::unique_ptr<AccelModel> PASSIM_ACCEL_FACTORY(bool trace) {
  return trace ? PASSIM_ACCEL_TRACE(true) : PASSIM_ACCEL_PLAIN(false);
}

}  // namespace passim::sim
