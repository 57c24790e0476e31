// SPDX-License-Identifier: Apache-2.0
/// \file Helpers shared by the kernel tests: seeded generators, measured-error records and
/// first-mismatch reports.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace passim::test {

/// Bound on the relative error of `iexp_q10` over inputs in [-10, 0] (derived and checked in
/// IexpQ10.RelativeErrorVsExpOverMinusTenToZero). Softmax, SiLU and attention tolerances use it.
inline constexpr double kIexpRelErr = 0.022;

/// Bound on the absolute error of `iexp_q10(x) / kExpOne` against exp(x) over every x <= 0
/// (checked in IexpQ10.AbsoluteErrorVsExp). The SiLU tolerance uses it.
inline constexpr double kIexpAbsErr = 0.002;

/// A `std::mt19937` with a fixed seed. The seed is printed and recorded in the XML report so a
/// failure can be replayed; tests also add it to their failure messages.
inline std::mt19937 seeded_rng(std::uint32_t seed) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf("[   SEED   ] %s.%s: std::mt19937 seed %u\n", info->test_suite_name(), info->name(),
              seed);
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return std::mt19937(seed);
}

/// A uniform integer in [lo, hi], converted to `T` (the caller keeps [lo, hi] inside `T`).
template <typename T>
T uniform_int(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
  return static_cast<T>(std::uniform_int_distribution<std::int64_t>(lo, hi)(rng));
}

/// A uniform real in [lo, hi).
inline double uniform_real(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

/// The largest error seen against a reference, where it happened, and how many samples ran.
/// `print` writes the line that docs/numerics.md quotes.
struct MaxError {
  double value = 0.0;
  std::string where;
  std::size_t samples = 0;

  void add(double err, const std::string& at) {
    ++samples;
    if (err > value) {
      value = err;
      where = at;
    }
  }
  /// `source` says where the samples came from: `"seed 7"` or `"exhaustive"`.
  void print(const std::string& what, const std::string& unit, const std::string& source) const {
    std::printf("[ MEASURED ] %s: max |error| = %.6g %s over %zu samples (%s)%s%s\n", what.c_str(),
                value, unit.c_str(), samples, source.c_str(), where.empty() ? "" : ", at ",
                where.c_str());
    ::testing::Test::RecordProperty("max_error", std::to_string(value) + " " + unit);
  }
  void print(const std::string& what, const std::string& unit, std::uint32_t seed) const {
    print(what, unit, "seed " + std::to_string(seed));
  }
};

/// Index of the first element where `a` and `b` differ (or of the first missing element);
/// `a.size()` when they are equal.
template <typename A, typename B>
std::size_t first_mismatch(const A& a, const B& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) {
      return i;
    }
  }
  return a.size() == b.size() ? a.size() : n;
}

/// "first bad index i: expected E, found F" for a failed whole-vector comparison.
template <typename A, typename B>
std::string mismatch_report(const A& expected, const B& found) {
  const std::size_t i = first_mismatch(expected, found);
  std::ostringstream os;
  if (i >= expected.size() || i >= found.size()) {
    os << "sizes differ: expected " << expected.size() << ", found " << found.size();
  } else {
    os << "first bad index " << i << ": expected " << +expected[i] << ", found " << +found[i];
  }
  return os.str();
}

}  // namespace passim::test
