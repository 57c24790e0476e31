# SPDX-License-Identifier: Apache-2.0
"""Generates the hardware facts of spec/passim.json into SystemVerilog, C++ and Markdown.

The command line of tools/gen_spec.py: load and validate the spec, then write the generated
files, compare them with the committed ones (--check), write only the psm_pkg_check module
(--sv-check), or run the self-test (--selftest). Exit status 0 on success, 1 when --check
finds a stale file, 2 when the spec is invalid.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

from .check import validate
from .common import (DEFAULT_SPEC, HPP_OUT, MD_OUT, REPORTS_MD_OUT, ROOT, RUNTIME_INCLUDE,
                     SV_OUT, SpecError)
from .cpp import render_hpp
from .docs import render_md
from .load import load_spec
from .selftest import selftest
from .sv import render_sv, render_sv_check


def render_all(spec: dict) -> dict[Path, str]:
    """Every generated file, keyed by its path relative to the output root."""
    outputs = {SV_OUT: render_sv(spec), HPP_OUT: render_hpp(spec)}
    for md in (MD_OUT, REPORTS_MD_OUT):
        template = ROOT / md
        if not template.exists():
            raise SpecError(f"{md}: missing (it holds the prose and the GENERATED markers)")
        outputs[md] = render_md(spec, template.read_text(encoding="utf-8"))
    return outputs


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


CFG_PKG = Path("rtl/top/psm_cfg_pkg.sv")


def check_cfg_pkg_tiny(spec: dict, out_dir: Path) -> int:
    """rtl/top/psm_cfg_pkg.sv writes the tiny config out by hand (`Tiny = make(...)`: Yosys
    0.23 reads no other package's names inside a package); returns 1, with a message, when its
    numbers differ from the spec's tiny config."""
    tiny = next(c for c in spec["configs"] if c["name"] == "tiny")
    d = tiny["depths"]
    want = [tiny["array_rows"], tiny["array_cols"], tiny["lanes"], d["input"], d["weight"],
            d["vector"], d["param"], d["acc"], d["prog"]]
    path = out_dir / CFG_PKG if (out_dir / CFG_PKG).exists() else ROOT / CFG_PKG  # not generated
    text = path.read_text(encoding="utf-8")
    m = re.search(r"localparam cfg_t Tiny = make\(([^)]*)\);", text)
    found = [int(v) for v in m.group(1).split(",")] if m else None
    if found != want:
        print(f"{CFG_PKG}: Tiny: expected make({', '.join(map(str, want))}) (spec config "
              f"tiny), found {'no Tiny = make(...)' if m is None else m.group(0)}",
              file=sys.stderr)
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    """Validates the spec, then writes, checks or writes the SV check module."""
    spec = load_spec(args.spec)
    validate(spec, args.runtime_dir)
    if args.sv_check:
        args.sv_check.parent.mkdir(parents=True, exist_ok=True)
        args.sv_check.write_text(render_sv_check(spec), encoding="utf-8")
        return 0
    outputs = render_all(spec)
    if args.check:
        stale = check_outputs(outputs, args.out_dir) + check_cfg_pkg_tiny(spec, args.out_dir)
        if stale:
            print(f"gen_spec: {stale} generated file(s) out of date", file=sys.stderr)
            return 1
        print("gen_spec: generated files match the spec")
        return 0
    write_outputs(outputs, args.out_dir)
    return 0


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The options; --check, --selftest and --sv-check exclude each other."""
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
    """Runs the command line; an invalid spec is reported on stderr with exit 2."""
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
