#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tokens per second of `passim run --backend cpu` against llama2.c's run.c (float32).

Builds run.c with `gcc -O3` (no -march, as llama2.c's `make run`), quantises stories260K to a
.psm with `passim quantize` unless one is given, then runs the two programs INTERLEAVED in one
loop (run.c, passim, run.c, passim, ...) for every step count: greedy, the same prompt. Both
print `achieved tok/s` (first position excluded); the script prints the medians and the ratio
passim / run.c. Python 3 standard library only.

    bench/peer_compare.py --passim build/passim --data ../shared/data \
        --peers ../shared/peers --steps 256 512 --rounds 10
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

TOK_S = re.compile(r"achieved tok/s:\s*([0-9.]+)")


def tokens_per_second(cmd: list[str]) -> float:
    """Runs `cmd` and returns the `achieved tok/s` figure it prints (stdout or stderr)."""
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    found = TOK_S.findall(res.stdout + res.stderr)
    if not found:
        sys.exit(f"no 'achieved tok/s' in the output of {' '.join(cmd)}")
    return float(found[-1])


def build_run_c(peers: Path, out_dir: Path) -> Path:
    """gcc -O3 run.c -lm, the way llama2.c's own `make run` builds it."""
    exe = out_dir / "run"
    src = peers / "llama2c" / "run.c"
    subprocess.run(["gcc", "-O3", "-o", str(exe), str(src), "-lm"], check=True)
    return exe


def make_psm(passim: Path, models: Path, out_dir: Path) -> Path:
    """stories260K quantised by `passim quantize` (its own calibration)."""
    psm = out_dir / "stories260K.psm"
    subprocess.run([str(passim), "quantize", "--model", str(models / "stories260K.bin"),
                    "--tokenizer", str(models / "tok512.bin"), "--out", str(psm)],
                   check=True, capture_output=True)
    return psm


def compare(run_c: Path, passim: Path, psm: Path, models: Path, steps: int, rounds: int,
            prompt: str) -> tuple[float, float]:
    """Interleaved rounds at one step count; returns the medians (run.c, passim) in tok/s."""
    tok = str(models / "tok512.bin")
    peer_cmd = [str(run_c), str(models / "stories260K.bin"), "-z", tok, "-t", "0",
                "-n", str(steps), "-i", prompt]
    # --prefill off: like run.c, the prompt runs position by position and only the first
    # position is left out of tok/s.
    ours_cmd = [str(passim), "run", "--model", str(psm), "--tokenizer", tok, "--backend",
                "cpu", "-t", "0", "-n", str(steps), "-i", prompt, "--prefill", "off"]
    peer, ours = [], []
    for _ in range(rounds):
        peer.append(tokens_per_second(peer_cmd))
        ours.append(tokens_per_second(ours_cmd))
    return statistics.median(peer), statistics.median(ours)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--passim", type=Path, required=True, help="the passim executable")
    ap.add_argument("--data", type=Path, required=True, help="folder holding models/")
    ap.add_argument("--peers", type=Path, required=True, help="folder holding llama2c/run.c")
    ap.add_argument("--psm", type=Path, help="stories260K .psm (default: quantise one)")
    ap.add_argument("--steps", type=int, nargs="+", default=[256, 512])
    ap.add_argument("--rounds", type=int, default=10, help="runs of each program per step count")
    ap.add_argument("--prompt", default="Once upon a time")
    args = ap.parse_args()
    models = args.data / "models"
    with tempfile.TemporaryDirectory(prefix="passim-peer-") as tmp:
        run_c = build_run_c(args.peers, Path(tmp))
        psm = args.psm or make_psm(args.passim, models, Path(tmp))
        print(f"{'steps':>5}  {'run.c tok/s':>11}  {'passim cpu tok/s':>16}  {'ratio':>6}"
              f"  (medians of {args.rounds} interleaved runs each)")
        for steps in args.steps:
            peer, ours = compare(run_c, args.passim, psm, models, steps, args.rounds,
                                 args.prompt)
            print(f"{steps:>5}  {peer:>11.1f}  {ours:>16.1f}  {ours / peer:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
