// SPDX-License-Identifier: Apache-2.0
/// \file `passim <args...>` run in-process (app.hpp's run_cli), both streams captured.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "app.hpp"

namespace passim::test {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

/// Runs `passim <args...>` in-process and captures both streams.
inline CliResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "passim");
  std::ostringstream out;
  std::ostringstream err;
  CliResult r;
  r.code = passim::app::run_cli(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace passim::test
