#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generates the hardware facts of spec/passim.json into SystemVerilog, C++ and Markdown.

spec/passim.json is the ONE source of hardware facts (DESIGN.md section 2). This tool validates
it and writes:

  rtl/pkg/psm_pkg.sv                    package psm_pkg (localparams, enums, instruction structs)
  runtime/include/passim/hw/spec.hpp    namespace passim::hw (constants, enums, HwConfig)
  docs/isa.md                           the tables between <!-- GENERATED:x --> markers

Usage:
  tools/gen_spec.py            regenerate the three files
  tools/gen_spec.py --check    exit 1 with a diff if a committed file differs from the spec
  tools/gen_spec.py --selftest show that --check and the validation catch broken inputs

Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

# The generator's modules are the package tools/spec/, beside this script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from spec.check import validate  # noqa: E402
from spec.common import (DEFAULT_SPEC, HPP_OUT, MD_OUT, ROOT, RUNTIME_INCLUDE,  # noqa: E402
                         SV_OUT, SpecError)
from spec.cpp import render_hpp  # noqa: E402
from spec.docs import render_md  # noqa: E402
from spec.load import load_spec  # noqa: E402
from spec.sv import render_sv, render_sv_check  # noqa: E402


# ------------------------------------------------------------------------------------------
# Driver
# ------------------------------------------------------------------------------------------

def render_all(spec: dict) -> dict[Path, str]:
    """Every generated file, keyed by its path relative to the output root."""
    md_template = ROOT / MD_OUT
    if not md_template.exists():
        raise SpecError(f"{MD_OUT}: missing (it holds the prose and the GENERATED markers)")
    return {SV_OUT: render_sv(spec), HPP_OUT: render_hpp(spec),
            MD_OUT: render_md(spec, md_template.read_text(encoding="utf-8"))}


def check_outputs(outputs: dict[Path, str], out_dir: Path) -> int:
    """Prints a diff for every file that differs from `outputs`; returns how many differ."""
    stale = 0
    for rel, text in outputs.items():
        path = out_dir / rel
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old == text:
            continue
        stale += 1
        print(f"{rel} differs from spec (run tools/gen_spec.py to regenerate):")
        sys.stdout.writelines(difflib.unified_diff(
            old.splitlines(keepends=True), text.splitlines(keepends=True),
            f"{rel} (committed)", f"{rel} (from spec)", n=1))
    return stale


def write_outputs(outputs: dict[Path, str], out_dir: Path) -> None:
    """Writes every generated file that changed."""
    for rel, text in outputs.items():
        path = out_dir / rel
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {rel}")



def run(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    validate(spec, args.runtime_dir)
    if args.sv_check:
        args.sv_check.parent.mkdir(parents=True, exist_ok=True)
        args.sv_check.write_text(render_sv_check(spec), encoding="utf-8")
        return 0
    outputs = render_all(spec)
    if args.check:
        stale = check_outputs(outputs, args.out_dir)
        if stale:
            print(f"gen_spec: {stale} generated file(s) out of date", file=sys.stderr)
            return 1
        print("gen_spec: generated files match the spec")
        return 0
    write_outputs(outputs, args.out_dir)
    return 0


# ------------------------------------------------------------------------------------------
# Self-test: every check must be able to fail
# ------------------------------------------------------------------------------------------

def find(items: list[dict], name: str) -> dict:
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
    return subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv],
                          capture_output=True, text=True, check=False)


def write_spec(spec: dict, path: Path) -> Path:
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


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC,
                        help="spec JSON (default: spec/passim.json)")
    parser.add_argument("--out-dir", type=Path, default=ROOT,
                        help="root that the generated paths are relative to (default: repo)")
    parser.add_argument("--runtime-dir", type=Path, default=RUNTIME_INCLUDE,
                        help="runtime headers to compare widths with (default: "
                             "runtime/include/passim)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="do not write; exit 1 with a diff if a generated file is stale")
    mode.add_argument("--selftest", action="store_true",
                      help="check that --check and the validation detect broken inputs")
    mode.add_argument("--sv-check", type=Path, metavar="FILE",
                      help="only write psm_pkg_check.sv (struct layouts vs localparams) to FILE")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        if args.selftest:
            return selftest(args.spec)
        return run(args)
    except SpecError as exc:
        print(f"gen_spec: invalid spec {args.spec}:", file=sys.stderr)
        for line in str(exc).splitlines():
            print(f"  {line}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
