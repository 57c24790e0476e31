#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The runtime's dependency rules (docs/architecture.md, "Dependency rules"), checked on every
`#include` under runtime/include/passim and runtime/src:

  hw        -> (nothing: the generated spec and the configuration rules)
  kernels   -> fixed_point
  model     -> fixed_point
  quant     -> model, kernels, fixed_point
  io        -> model, quant, fixed_point
  compiler  -> quant, model, kernels, hw, fixed_point
  device    -> compiler, quant, model, kernels, hw, fixed_point
  eval      -> every stage above

No runtime file includes the simulator (passim/sim, Verilator, SystemC), and only the float
computations (model/float_backend, the float reference, and model/speech_front_end, the host's
float front end) include Eigen. Exit 1 with one line per broken rule.

    check_deps.py [repository root]
"""
import os
import re
import sys

ALLOWED = {
    "hw": {"hw"},
    "kernels": {"kernels", "fixed_point"},
    "model": {"model", "fixed_point"},
    "quant": {"quant", "model", "kernels", "fixed_point"},
    "io": {"io", "model", "quant", "fixed_point"},
    "compiler": {"compiler", "quant", "model", "kernels", "hw", "fixed_point"},
    "device": {"device", "compiler", "quant", "model", "kernels", "hw", "fixed_point"},
    "eval": {"eval", "io", "model", "quant", "kernels", "compiler", "device", "hw",
             "fixed_point"},
}
FORBIDDEN = re.compile(r'#include\s*[<"](passim/sim/|verilated|systemc|tlm)')
EIGEN_FILES = ("float_backend", "speech_front_end")  # model/: the float computations
INCLUDE = re.compile(r'#include\s*[<"]passim/([a-z_]+)(/|\.hpp)')


def stage_of(rel):
    parts = rel.split(os.sep)
    for p in parts:
        if p in ALLOWED:
            return p
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    broken = []
    checked = 0
    for top in ("runtime/include/passim", "runtime/src"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if not name.endswith((".hpp", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, os.path.join(root, top))
                stage = stage_of(rel)
                if stage is None:
                    continue  # fixed_point, the generated hw header
                checked += 1
                text = open(path, encoding="utf-8").read()
                for n, line in enumerate(text.splitlines(), 1):
                    where = f"{os.path.join(top, rel)}:{n}"
                    if FORBIDDEN.search(line):
                        broken.append(f"{where}: the runtime includes the simulator: {line.strip()}")
                    if "<Eigen/" in line and not name.startswith(EIGEN_FILES):
                        broken.append(f"{where}: only the float computations include Eigen")
                    m = INCLUDE.search(line)
                    if m and m.group(1) not in ALLOWED[stage]:
                        broken.append(f"{where}: {stage} may not include passim/{m.group(1)}: "
                                      f"expected one of {sorted(ALLOWED[stage])}")
    for b in broken:
        print(b)
    print(f"{checked} files checked, {len(broken)} broken dependency rules")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
