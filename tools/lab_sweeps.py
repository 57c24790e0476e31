#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The sweep labs of docs/labs/: each one command that runs its grid, prints its table (Markdown)
and writes its plot.

    lab_sweeps.py probe-d   [--backend rtl|model] [--out DIR]   attention against projections
    lab_sweeps.py softmax   [--backend rtl|model] [--out DIR]   three-pass against online Softmax
    lab_sweeps.py crossover [--backend rtl|model] [--out DIR]   array size x lanes
    lab_sweeps.py dram      [--backend rtl|model] [--out DIR]   DRAM bandwidth, streamed/resident

Every point is one `passim run` or `passim encode` with `--report`; the reports go to
DIR/<lab>/ and `passim sweep collect` turns them into DIR/<lab>.csv. Cycles come from the
reports only (the RTL's counters on `--backend rtl`, the cycle model's closed forms, equal to
them instruction by instruction, on `--backend model`); this script computes sums, shares and
slopes. `--check-rtl N` also runs the first N points on rtl and stops if any cycle count differs.
"""
import argparse
import csv
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, "
          "speak.\n\nFirst Citizen:\nYou are all resolved rather to die than to famish?\n\n"
          "All:\nResolved. resolved.\n")
# The encoder of the attention labs: BERT's proportions (FFN 4 d, d / heads = 64) at a width
# whose matmuls fit a MATMUL's k field (docs/workloads.md), one block.
ENCODER = ["--dim", "256", "--hidden", "1024", "--heads", "4", "--layers", "1"]
SEQS = [16, 32, 64, 128, 256, 512]


def encoder_point(seq, config, extra=()):
    return ["encode", "--seq", str(seq), "--context", "512", *ENCODER, "--config", config,
            *extra]


def gpt_point(prompt_tokens, steps, config, extra=()):
    return ["run", "--prompt", PROMPT[:prompt_tokens - 1], "--steps", str(steps),
            "--config", config, *extra]


def run_points(passim, points, backend, out_dir):
    """Runs every (name, args) point with --backend and --report; returns the report paths."""
    os.makedirs(out_dir, exist_ok=True)

    def one(item):
        name, args = item
        report = os.path.join(out_dir, f"{name}.json")
        cmd = [passim, *args, "--backend", backend, "--quiet", "--report", report]
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"lab_sweeps.py: {' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
        return report

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return list(pool.map(one, points))


def collect(passim, out_dir, csv_path):
    subprocess.run([passim, "sweep", "collect", out_dir, "-o", csv_path], check=True,
                   stderr=subprocess.DEVNULL)
    with open(csv_path, newline="") as f:
        return {row["report"][:-5]: row for row in csv.DictReader(f)}


def check_rtl(passim, points, rows, out_dir, n):
    """Runs the first n points on rtl too; exits if a total or class differs from `rows`."""
    if n <= 0:
        return
    rtl_dir = out_dir + "-rtl"
    run_points(passim, points[:n], "rtl", rtl_dir)
    rtl = collect(passim, rtl_dir, rtl_dir + ".csv")
    for name, _ in points[:n]:
        for col in ("total_cycles", "cycles_matmul", "cycles_attention", "cycles_softmax"):
            if rtl[name][col] != rows[name][col]:
                sys.exit(f"lab_sweeps.py: {name}: {col} {rows[name][col]} on the model, "
                         f"{rtl[name][col]} on rtl")
    print(f"(the first {n} points checked on rtl: the same cycles)\n")


def n(row, col):
    return int(row[col]) if row[col] not in ("", None) else 0


def slope(xs, ys):
    """Least-squares slope of log y against log x."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return (sum((a - mx) * (b - my) for a, b in zip(lx, ly)) /
            sum((a - mx) ** 2 for a in lx))


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def lab_probe_d(args, passim):
    points = [(f"seq{s:04}", encoder_point(s, "base")) for s in SEQS]
    out = os.path.join(args.out, "probe-d")
    run_points(passim, points, args.backend, out)
    rows = collect(passim, out, out + ".csv")
    check_rtl(passim, points, rows, out, args.check_rtl)
    att, proj = [], []
    print("| seq | QKᵀ and PV (attention) | Softmax | attention in all | projections and FFN "
          "(matmul) | total | attention share |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in SEQS:
        r = rows[f"seq{s:04}"]
        a, sm, mm = n(r, "cycles_attention"), n(r, "cycles_softmax"), n(r, "cycles_matmul")
        att.append(a + sm)
        proj.append(mm)
        print(f"| {s} | {a:,} | {sm:,} | {a + sm:,} | {mm:,} | {n(r, 'total_cycles'):,} | "
              f"{100.0 * (a + sm) / n(r, 'total_cycles'):.1f} % |")
    upper = [i for i, s in enumerate(SEQS) if s >= 64]
    sa = slope([SEQS[i] for i in upper], [att[i] for i in upper])
    sp = slope([SEQS[i] for i in upper], [proj[i] for i in upper])
    print(f"\nlog-log slopes over seq 64..512: attention {sa:.2f}, projections and FFN {sp:.2f} "
          f"(over 16..512: {slope(SEQS, att):.2f} and {slope(SEQS, proj):.2f})")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog(SEQS, att, "o-", label=f"attention: QKᵀ, Softmax, PV (slope {sa:.2f})")
    ax.loglog(SEQS, proj, "s-", label=f"projections and FFN (slope {sp:.2f})")
    ax.set_xlabel("sequence length")
    ax.set_ylabel("cycles")
    ax.set_title(f"Probe D: encoder d=256, FFN 1024, 4 heads, one block, base ({args.backend})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "probe-d.png"))


def lab_softmax(args, passim):
    points = [(f"{m}-seq{s:04}", encoder_point(s, "base", ["--softmax", m]))
              for m in ("3pass", "online") for s in SEQS]
    out = os.path.join(args.out, "softmax")
    run_points(passim, points, args.backend, out)
    rows = collect(passim, out, out + ".csv")
    check_rtl(passim, points, rows, out, args.check_rtl)
    print("| seq | 3-pass Softmax cycles (passes) | online (passes) | online / 3-pass | "
          "total, 3-pass | total, online | saved of the total |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    three, online = [], []
    for s in SEQS:
        a, b = rows[f"3pass-seq{s:04}"], rows[f"online-seq{s:04}"]
        three.append(n(a, "cycles_softmax"))
        online.append(n(b, "cycles_softmax"))
        ta, tb = n(a, "total_cycles"), n(b, "total_cycles")
        print(f"| {s} | {three[-1]:,} ({n(a, 'passes_softmax'):,}) | {online[-1]:,} "
              f"({n(b, 'passes_softmax'):,}) | {online[-1] / three[-1]:.3f} | {ta:,} | {tb:,} | "
              f"{100.0 * (ta - tb) / ta:.2f} % |")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog(SEQS, three, "o-", label="three-pass Softmax")
    ax.loglog(SEQS, online, "s-", label="online Softmax (two passes)")
    ax.set_xlabel("sequence length")
    ax.set_ylabel("Softmax cycles")
    ax.set_title(f"Softmax modes, encoder on base ({args.backend})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "softmax.png"))


ARRAYS = [4, 8, 16, 32]
LANES = [2, 4, 8, 16, 32]
CROSS_WORKLOADS = {
    "ln-gpt": lambda cfg: gpt_point(64, 65, cfg),           # a 64-token prefill, one decode
    "encoder": lambda cfg: encoder_point(128, cfg),          # one 128-token pass
}


def lab_crossover(args, passim):
    points = [(f"{w}-{r:02}x{r:02}-l{l:02}", make(f"{r}x{r}:l{l}:vector=65536:input=16384"))
              for w, make in CROSS_WORKLOADS.items() for r in ARRAYS for l in LANES]
    out = os.path.join(args.out, "crossover")
    run_points(passim, points, args.backend, out)
    rows = collect(passim, out, out + ".csv")
    check_rtl(passim, points, rows, out, args.check_rtl)
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, w in zip(axes, CROSS_WORKLOADS):
        print(f"\n{w}: busy shares array / vector (%) and total cycles; **bold** where the "
              "vector unit is busier than the array\n")
        print("| array \\ lanes | " + " | ".join(f"L = {l}" for l in LANES) + " |")
        print("| --- |" + " ---: |" * len(LANES))
        for r in ARRAYS:
            cells, totals = [], []
            for l in LANES:
                row = rows[f"{w}-{r:02}x{r:02}-l{l:02}"]
                arr, vec = float(row["array_busy_pct"]), float(row["vector_busy_pct"])
                cell = f"{arr:.0f} / {vec:.0f}, {n(row, 'total_cycles') / 1e3:,.0f} k"
                cells.append(f"**{cell}**" if vec > arr else cell)
                totals.append(n(row, "total_cycles"))
            print(f"| {r}x{r} | " + " | ".join(cells) + " |")
            ax.loglog(LANES, totals, "o-", base=2, label=f"{r}x{r} array")
        ax.set_xlabel("vector lanes L")
        ax.set_ylabel("total cycles")
        ax.set_title(f"{w} ({args.backend})")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "crossover.png"))


BANDWIDTHS = ["0.2", "0.4", "0.8", "1.6", "3.2", "6.4"]
DRAM_CASES = [("small", "streamed"), ("base", "streamed"), ("base", "resident")]


def lab_dram(args, passim):
    decode = 32
    points = [(f"{c}-{wts}-bw{float(b):05.2f}",
               gpt_point(16, 16 + decode, c, ["--weights", wts, "--dram-bandwidth", b]))
              for c, wts in DRAM_CASES for b in BANDWIDTHS]
    out = os.path.join(args.out, "dram")
    run_points(passim, points, args.backend, out)
    rows = collect(passim, out, out + ".csv")
    check_rtl(passim, points, rows, out, args.check_rtl)
    print(f"decode cycles per token (ln-gpt, {decode} tokens after a 16-token prompt; exposed "
          "DMA share of all the run's cycles in brackets)\n")
    print("| DRAM bytes/ns | " + " | ".join(f"{c} {w}" for c, w in DRAM_CASES) + " |")
    print("| ---: |" + " ---: |" * len(DRAM_CASES))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    series = {case: [] for case in DRAM_CASES}
    for b in BANDWIDTHS:
        cells = []
        for c, w in DRAM_CASES:
            r = rows[f"{c}-{w}-bw{float(b):05.2f}"]
            per = n(r, "decode_cycles") / decode
            series[(c, w)].append(per)
            cells.append(f"{per:,.0f} ({100.0 * n(r, 'dma_exposed') / n(r, 'total_cycles'):.0f} %)")
        print(f"| {b} | " + " | ".join(cells) + " |")
    for (c, w), ys in series.items():
        ax.loglog([float(b) for b in BANDWIDTHS], ys, "o-", label=f"{c}, weights {w}")
    ax.set_xlabel("DRAM bandwidth (bytes per ns)")
    ax.set_ylabel("decode cycles per token")
    ax.set_title(f"ln-gpt decode against DRAM bandwidth ({args.backend})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "dram.png"))


LABS = {"probe-d": lab_probe_d, "softmax": lab_softmax, "crossover": lab_crossover,
        "dram": lab_dram}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("lab", choices=sorted(LABS))
    p.add_argument("--passim", default=os.path.join(ROOT, "build", "passim"))
    p.add_argument("--backend", choices=["model", "rtl"], default="rtl")
    p.add_argument("--out", default=os.path.join(ROOT, "build", "labs"))
    p.add_argument("--check-rtl", type=int, default=0, metavar="N",
                   help="also run the first N points on rtl and require the same cycles")
    args = p.parse_args()
    if not os.access(args.passim, os.X_OK):
        sys.exit(f"lab_sweeps.py: {args.passim}: expected the passim executable (build first)")
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        sys.exit(f"lab_sweeps.py: --out {args.out}: cannot create it: {e.strerror or e}")
    LABS[args.lab](args, args.passim)
    print(f"\nplot: {os.path.join(args.out, args.lab + '.png')}", file=sys.stderr)


if __name__ == "__main__":
    main()
