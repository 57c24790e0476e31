// SPDX-License-Identifier: Apache-2.0
// One configuration's make_accel_model_<cfg>(trace): the model built with FST tracing support
// when a waveform is wanted, the faster one built without it otherwise (sim/CMakeLists.txt).
// Compiled with PASSIM_ACCEL_FACTORY and PASSIM_ACCEL_PLAIN defined, and PASSIM_ACCEL_TRACE
// when the tracing models are built (PASSIM_TRACE_MODELS).
#include <stdexcept>

#include "passim/sim/accel_model.hpp"

namespace passim::sim {

std::unique_ptr<AccelModel> PASSIM_ACCEL_PLAIN(bool trace);  // accel_model.cpp, no tracing

#ifdef PASSIM_ACCEL_TRACE
std::unique_ptr<AccelModel> PASSIM_ACCEL_TRACE(bool trace);  // accel_model.cpp, --trace-fst

std::unique_ptr<AccelModel> PASSIM_ACCEL_FACTORY(bool trace) {
  return trace ? PASSIM_ACCEL_TRACE(true) : PASSIM_ACCEL_PLAIN(false);
}
#else
// Built with PASSIM_TRACE_MODELS=OFF (the quickstart preset): no model with tracing.
std::unique_ptr<AccelModel> PASSIM_ACCEL_FACTORY(bool trace) {
  if (trace) {
    throw std::runtime_error(
        "--trace: this passim was built without the waveform models (PASSIM_TRACE_MODELS=OFF, "
        "the quickstart preset); build them with: cmake --preset release && cmake --build "
        "--preset release --target passim");
  }
  return PASSIM_ACCEL_PLAIN(false);
}
#endif

}  // namespace passim::sim
