# SPDX-License-Identifier: Apache-2.0
"""`gen_spec.py --selftest`: shows that every check can fail.

It runs the command line on a fresh copy of the outputs (which must pass --check), on a
hand-edited spec.hpp and on a spec with a changed opcode (which --check must report), and on
broken copies of the spec, each of which the validation must refuse with a message naming
the broken field.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import HPP_OUT, TOOL
from .load import load_spec


def find(items: list[dict], name: str) -> dict:
    """The item called `name`."""
    return next(item for item in items if item["name"] == name)


def mut_opcode_value(s: dict) -> None:
    find(s["instruction"]["opcodes"], "add")["value"] = 0x3F  # unused, so still valid


def mut_duplicate_opcode(s: dict) -> None:
    find(s["instruction"]["opcodes"], "add")["value"] = 0x30


def mut_overlap(s: dict) -> None:
    find(find(s["instruction"]["opcodes"], "matmul")["fields"], "k")["lsb"] = 100


def mut_cross_word(s: dict) -> None:
    find(find(s["instruction"]["opcodes"], "softmax")["fields"], "len")["lsb"] = 88


def mut_tiny_macs(s: dict) -> None:
    find(s["configs"], "tiny")["array_rows"] = 4


def mut_depth(s: dict) -> None:
    find(s["configs"], "small")["depths"]["vector"] = 3000


def mut_qk_bits(s: dict) -> None:
    find(s["widths"], "qk_bits")["value"] = 13


def mut_register(s: dict) -> None:
    find(s["registers"]["list"], "cnt_lo")["offset"] = 24


def mut_param_bias(s: dict) -> None:
    find(s["param_format"], "rq_bias")["width"] = 25


# (name, mutation, substring the validation error must contain)
SELFTEST_INVALID = [
    ("duplicate opcode", mut_duplicate_opcode, "opcodes.add.value: 48 is already used"),
    ("overlapping fields", mut_overlap, "opcodes.matmul.fields.k: bit 100 overlaps field 'm'"),
    ("field crosses a word", mut_cross_word, "opcodes.softmax.fields.len: bits [103:88] cross"),
    ("tiny over 8 MACs", mut_tiny_macs, "configs.tiny: 4x4 = 16 MACs exceeds max_macs 8"),
    ("depth not a power of two", mut_depth, "configs.small.depths.vector: 3000"),
    ("drift from the runtime", mut_qk_bits, "widths.qk_bits: spec says 13 but"),
    ("register offset reused", mut_register, "registers.cnt_lo.offset: 24 is already used"),
    ("param bias narrower than the runtime's", mut_param_bias,
     "param_format.rq_bias: 25 bits but widths.requant_bias_bits is 26"),
]


def run_self(*argv: str) -> subprocess.CompletedProcess:
    """Runs tools/gen_spec.py with `argv`, capturing its output."""
    return subprocess.run([sys.executable, str(TOOL), *argv],
                          capture_output=True, text=True, check=False)


def write_spec(spec: dict, path: Path) -> Path:
    """Writes `spec` as JSON to `path`."""
    path.write_text(json.dumps(spec, indent=2), encoding="utf-8")
    return path


def selftest(spec_path: Path) -> int:
    """Runs the CLI on broken copies of the spec and outputs in a temp dir."""
    base = load_spec(spec_path)
    failures = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        out = tmp / "out"
        good = write_spec(base, tmp / "good.json")
        gen = run_self("--spec", str(good), "--out-dir", str(out))
        ok = run_self("--check", "--spec", str(good), "--out-dir", str(out))
        if gen.returncode or ok.returncode:
            failures.append(f"fresh output does not pass --check:\n{gen.stderr}{ok.stdout}")
        hpp = out / HPP_OUT
        hpp.write_text(hpp.read_text(encoding="utf-8") + "// hand edit\n", encoding="utf-8")
        edited = run_self("--check", "--spec", str(good), "--out-dir", str(out))
        if edited.returncode != 1 or "spec.hpp differs" not in edited.stdout:
            failures.append(f"--check missed a hand-edited spec.hpp:\n{edited.stderr}")
        changed = copy.deepcopy(base)
        mut_opcode_value(changed)
        stale = run_self("--check", "--spec", str(write_spec(changed, tmp / "changed.json")))
        if stale.returncode != 1 or "psm_pkg.sv differs" not in stale.stdout:
            failures.append(f"--check missed a changed opcode in the spec:\n{stale.stderr}")
        for name, mutate, expected in SELFTEST_INVALID:
            broken = copy.deepcopy(base)
            mutate(broken)
            result = run_self("--check", "--spec", str(write_spec(broken, tmp / "bad.json")))
            if result.returncode != 2 or expected not in result.stderr:
                failures.append(f"{name}: expected exit 2 and {expected!r}, got exit "
                                f"{result.returncode}:\n{result.stderr}")
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"gen_spec selftest: {3 + len(SELFTEST_INVALID) - len(failures)} passed, "
          f"{len(failures)} failed")
    return 1 if failures else 0
