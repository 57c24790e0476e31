#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""KWT-1: clips per second of `passim classify` against Google's LiteRT, and the simulator.

Makes the spoken test clips (tests/kwt/make_clips.sh) unless they exist, then runs, INTERLEAVED
in one loop per round: LiteRT (tools/litert/kwt_logits.mjs), `passim classify --backend cpu`
and `--backend float`, each on the first `--few` clips and on all of them. A backend's time
per clip is (t_all - t_few) / (all - few): process start, model loading and (cpu) calibration
cancel out. Prints the medians over the rounds and the ratios to LiteRT. With --rtl it also
runs `--backend rtl --config base` on 1 and on 3 clips per round: wall time per clip,
cycles per clip (the report's counters) and simulated cycles per second. Python 3 standard
library only.

    bench/kwt_compare.py --passim build/passim --data ../shared/data --rounds 5 --rtl
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def per_clip(cmd, few: list[str], all_clips: list[str]) -> float:
    """Seconds per clip of `cmd(clips)`, from a run on `few` and one on `all_clips`."""
    return (wall(cmd(all_clips)) - wall(cmd(few))) / (len(all_clips) - len(few))


def rtl_clip(passim: str, model: Path, calib: list[str], clips: list[str], report: Path):
    """Wall seconds and cycles of `passim classify --backend rtl --config base` on `clips`."""
    t = wall([passim, "classify", "--model", str(model), "--backend", "rtl", "--config", "base",
              "--calib-audio", *calib, "--audio", *clips, "--report", str(report)])
    return t, json.loads(report.read_text())["cycles"]["total"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--passim", default="build/passim")
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--clips", help="folder of the test clips (default: made in a temp folder)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--few", type=int, default=10)
    ap.add_argument("--rtl", action="store_true", help="also time the simulator on base")
    a = ap.parse_args()
    model = Path(a.data) / "models" / "kwt1" / "non_stream.tflite"
    tmp = Path(tempfile.mkdtemp(prefix="passim_kwt_"))
    clipdir = Path(a.clips) if a.clips else tmp / "clips"
    subprocess.run(["bash", str(REPO / "tests" / "kwt" / "make_clips.sh"), str(clipdir)],
                   check=True, capture_output=True)
    clips = sorted(str(p) for p in clipdir.glob("*.wav"))
    calib = sorted(str(p) for p in (clipdir / "calib").glob("*.wav"))
    few = clips[: a.few]
    peer = ["node", str(REPO / "tools" / "litert" / "kwt_logits.mjs"), str(model)]
    runs = {
        "litert": lambda c: peer + c,
        "passim cpu": lambda c: [a.passim, "classify", "--model", str(model), "--backend", "cpu",
                                 "--calib-audio", *calib, "--audio", *c],
        "passim float": lambda c: [a.passim, "classify", "--model", str(model), "--audio", *c],
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    rtl: list[tuple[float, int]] = []
    for r in range(a.rounds):
        for name, cmd in runs.items():
            times[name].append(per_clip(cmd, few, clips))
        if a.rtl:
            t1, c1 = rtl_clip(a.passim, model, calib, clips[:1], tmp / "r1.json")
            t3, c3 = rtl_clip(a.passim, model, calib, clips[:3], tmp / "r3.json")
            rtl.append(((t3 - t1) / 2, (c3 - c1) // 2))
        print(f"round {r + 1}: " + ", ".join(f"{n} {1 / t[-1]:.1f} clips/s"
                                             for n, t in times.items()), flush=True)
    base = statistics.median(times["litert"])
    print(f"\nmedians over {a.rounds} rounds, {len(clips)} clips (time per clip from "
          f"{len(clips)} - {len(few)} clips):")
    for name, t in times.items():
        m = statistics.median(t)
        print(f"  {name:13s} {1 / m:8.1f} clips/s  {1000 * m:7.2f} ms/clip  "
              f"{base / m:5.2f}x LiteRT")
    if rtl:
        wall_s = statistics.median(t for t, _ in rtl)
        cycles = statistics.median(c for _, c in rtl)
        print(f"  rtl base      {wall_s:8.2f} s/clip   {cycles:,.0f} cycles/clip  "
              f"{cycles / wall_s / 1e6:.2f} M simulated cycles/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
