# SPDX-License-Identifier: Apache-2.0
"""The spec generator that tools/gen_spec.py runs: it validates spec/passim.json and writes
the SystemVerilog package, the C++ header and the tables of docs/isa.md from it.

  common.py    paths, SpecError, the naming rules and the field layout every part shares
  load.py      reads the spec JSON and the runtime constants the spec is compared with
  check.py     validation: collects every broken rule, each message naming its field
  sv.py        rtl/pkg/psm_pkg.sv and the psm_pkg_check module (struct layouts vs localparams)
  cpp.py       runtime/include/passim/hw/spec.hpp
  docs.py      the tables between the GENERATED markers of docs/isa.md
  cli.py       the command line: regenerate, --check, --sv-check, --selftest
  selftest.py  --selftest: broken specs and hand-edited outputs must be caught

Python 3 standard library only.
"""
