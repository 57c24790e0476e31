#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generates the hardware facts of spec/passim.json into SystemVerilog, C++ and Markdown.

spec/passim.json is the one source of hardware facts: the RTL, the runtime and the docs take
their sizes, encodings, registers and counters from it and write none of them by hand. This
tool validates it and writes:

  rtl/pkg/psm_pkg.sv                    package psm_pkg (localparams, enums, instruction structs)
  runtime/include/passim/hw/spec.hpp    namespace passim::hw (constants, enums, HwConfig)
  docs/isa.md                           the tables between <!-- GENERATED:x --> markers

Usage:
  tools/gen_spec.py            regenerate the three files
  tools/gen_spec.py --check    exit 1 with a diff if a committed file differs from the spec
  tools/gen_spec.py --selftest show that --check and the validation catch broken inputs

The work is done by the package tools/spec/, one module per job (its __init__.py lists
them). Python 3 standard library only.
"""

import sys
from pathlib import Path

# The generator's modules are the package tools/spec/, beside this script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from spec.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
