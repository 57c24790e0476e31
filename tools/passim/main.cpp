// SPDX-License-Identifier: Apache-2.0
// Entry point of the `passim` command-line tool.
#include <iostream>
#include <string>
#include <vector>

#include "app.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
#ifdef PASSIM_WITH_RTL
  return passim::app::run_cli(args, std::cout, std::cerr, passim::app::simulator_factory());
#else
  return passim::app::run_cli(args, std::cout, std::cerr);
#endif
}
