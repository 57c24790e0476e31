#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""KWT-1 on the simulated accelerator against the int8 golden model, bit for bit.

    rtl_check.py PASSIM MODEL CLIPDIR CONFIG

Classifies three clips (yes, go and off, three voices) with --backend cpu and --backend rtl
--config CONFIG, both calibrated on CLIPDIR/calib, and fails unless every output line is the
same: label, score and the twelve logits, printed from the int32 Q.16 logits exactly. Exit 77
(skipped) when the model is missing.
"""
import pathlib
import subprocess
import sys

CLIPS = ["yes_en-us_120.wav", "go_en-029_170.wav", "off_en-gb_120.wav"]


def classify(passim, model, clipdir, extra):
    calib = sorted(str(p) for p in (clipdir / "calib").glob("*.wav"))
    args = [passim, "classify", "--model", str(model), "--logits", "--calib-audio", *calib,
            "--audio", *(str(clipdir / c) for c in CLIPS), *extra]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"rtl_check: {' '.join(extra)} failed:\n{run.stderr}")
        sys.exit(1)
    return run.stdout.splitlines(), run.stderr


def main():
    passim, model = sys.argv[1], pathlib.Path(sys.argv[2])
    clipdir, config = pathlib.Path(sys.argv[3]), sys.argv[4]
    if not model.exists():
        print(f"rtl_check: {model} not found (set PASSIM_DATA): skipped")
        return 77
    cpu, _ = classify(passim, model, clipdir, ["--backend", "cpu"])
    rtl, tables = classify(passim, model, clipdir, ["--backend", "rtl", "--config", config])
    total = [line for line in tables.splitlines() if line.startswith("total")]
    cycles = total[0].split()[1] if total else "?"
    print(f"rtl_check: {len(cpu)} clips on {config}, cycles {cycles}")
    for c, r in zip(cpu, rtl):
        print(("  same  " if c == r else "  DIFFER\n    cpu " + c + "\n    rtl ") + r)
    return 0 if cpu == rtl and len(cpu) == len(CLIPS) else 1


if __name__ == "__main__":
    sys.exit(main())
