// SPDX-License-Identifier: Apache-2.0
// The entry point of a model Verilated on first use (accel_build.cpp): compiled at run time,
// with PASSIM_ACCEL_HEADER (the Verilated class header) and PASSIM_ACCEL_CLASS defined, into a
// shared object that make_accel_model() loads. Its configuration comes from the caller.
#include PASSIM_ACCEL_HEADER

#include "accel_model_impl.hpp"

/// A new model of `cfg` (which the caller checked equals the parameters it was Verilated
/// with), with FST tracing when `trace` (only in a model Verilated with --trace-fst). The
/// caller owns the result. Returns nullptr and copies the message to `error` (size
/// `error_size`, NUL-terminated) if construction throws.
extern "C" passim::sim::AccelModel* passim_accel_plugin_make(const passim::hw::HwConfig* cfg,
                                                            bool trace, char* error,
                                                            unsigned long error_size) {
  try {
    return new passim::sim::VerilatedAccel<PASSIM_ACCEL_CLASS>(*cfg, trace);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const std::size_t n = std::min<std::size_t>(what.size(), error_size - 1);
    std::copy_n(what.data(), n, error);
    error[n] = '\0';
    return nullptr;
  }
}
