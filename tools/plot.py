#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Plots Passim's cycle reports with matplotlib, as PNG or SVG (the output's extension).

    plot.py REPORT.json -o classes.png
        one report: the cycles of each op class, one bar per phase (prefill, decode, preload)
    plot.py A.json B.json -o compare.svg
        a comparison: each op class's cycles in A and in B side by side, with B's change in %
    plot.py SWEEP.csv -o sweep.png [--x seq] [--y total_cycles,cycles_softmax]
            [--series config] [--logx] [--logy]
        a sweep (passim sweep collect): one line per value of --series and column of --y,
        against --x

Every number drawn comes from the files as they are (the hardware's counters); the script
computes only sums and shares. Exits 2 with a message naming the file and what was expected
when an input is not a report or a sweep CSV, or a column does not exist.
"""
import argparse
import csv
import json
import os
import sys

CLASSES = ["matmul", "attention", "softmax", "norm", "other_vector", "dma", "control"]
PHASES = ["preload", "prefill", "decode"]


def fail(msg):
    print(f"plot.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def pyplot():
    try:
        import matplotlib
    except ImportError:
        fail(f"matplotlib: expected it for {sys.executable}, found none (Debian's "
             "python3-matplotlib, tools/setup.sh, is for /usr/bin/python3)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, out):
    """Writes the figure; exits 2 naming the file when it cannot."""
    try:
        fig.savefig(out)
    except OSError as e:
        fail(f"{out}: cannot write the plot: {e.strerror or e}")


def read_report(path):
    """The report's `cycles` section; exits 2 unless it is a Passim report with cycles."""
    try:
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
    except (OSError, ValueError) as e:  # UnicodeDecodeError is a ValueError
        fail(f"{path}: expected a JSON report, {e}")
    if not isinstance(r, dict) or r.get("format_version") != 1:
        fail(f"{path}: expected a Passim report (format_version 1)")
    cycles = r.get("cycles")
    if not isinstance(cycles, dict) or not isinstance(cycles.get("by_class"), dict):
        fail(f"{path}: cycles.by_class: expected the cycle section of an rtl run, found none")
    return r


def class_cycles(section, path, where):
    out = []
    for c in CLASSES:
        v = section.get("by_class", {}).get(c, {}).get("cycles")
        if not isinstance(v, int) or v < 0:
            fail(f"{path}: {where}.by_class.{c}.cycles: expected a count, found {v!r}")
        out.append(v)
    return out


def label_of(r, path):
    hw = r.get("hardware", {})
    return f"{os.path.basename(path)} ({hw.get('config', '?')})"


def plot_report(path, out):
    r = read_report(path)
    phases = [p for p in PHASES if p in r["cycles"].get("by_phase", {})] or ["all"]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    bottoms = [0] * len(phases)
    rows = []
    for p in phases:
        sec = r["cycles"] if p == "all" else r["cycles"]["by_phase"][p]
        where = "cycles" if p == "all" else f"cycles.by_phase.{p}"
        rows.append(class_cycles(sec, path, where))
    for i, c in enumerate(CLASSES):
        vals = [row[i] for row in rows]
        ax.bar(phases, vals, bottom=bottoms, label=c)
        bottoms = [b + v for b, v in zip(bottoms, vals)]
    ax.set_ylabel("cycles (RTL counters; a hidden DMA cycle counts twice)")
    ax.set_title(f"where the cycles go: {label_of(r, path)}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, out)


def plot_compare(a_path, b_path, out):
    a, b = read_report(a_path), read_report(b_path)
    ca = class_cycles(a["cycles"], a_path, "cycles")
    cb = class_cycles(b["cycles"], b_path, "cycles")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    xs = range(len(CLASSES))
    ax.bar([x - 0.2 for x in xs], ca, width=0.4, label=f"A: {label_of(a, a_path)}")
    ax.bar([x + 0.2 for x in xs], cb, width=0.4, label=f"B: {label_of(b, b_path)}")
    for x, va, vb in zip(xs, ca, cb):
        if va:
            ax.annotate(f"{100.0 * (vb - va) / va:+.1f}%", (x, max(va, vb)), ha="center",
                        va="bottom", fontsize=7)
    ax.set_xticks(list(xs), CLASSES, rotation=20)
    ax.set_ylabel("cycles")
    ax.set_title("B against A, per op class")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, out)


def number(v, path, line, col):
    try:
        return float(v)
    except ValueError:
        fail(f"{path}: line {line}: {col}: expected a number, found {v!r}")


def plot_sweep(path, out, args):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: {e}")
    except (UnicodeDecodeError, csv.Error) as e:
        fail(f"{path}: expected a UTF-8 CSV (passim sweep collect), {e}")
    if not rows:
        fail(f"{path}: expected a sweep CSV with a header and rows, found no rows")
    ys = args.y.split(",")
    for col in [args.x, args.series] + ys:
        if col not in rows[0]:
            fail(f"{path}: column {col}: expected one of {', '.join(rows[0])}")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    series = sorted({r[args.series] for r in rows})
    drawn = 0
    for s in series:
        pts = [r for r in rows if r[args.series] == s]
        for y in ys:
            data = sorted((number(r[args.x], path, i + 2, args.x), number(r[y], path, i + 2, y))
                          for i, r in enumerate(pts) if r[y] != "")
            drawn += len(data)
            ax.plot([d[0] for d in data], [d[1] for d in data], marker="o",
                    label=f"{args.series}={s}" + (f", {y}" if len(ys) > 1 else ""))
    if drawn == 0:
        fail(f"{path}: columns {', '.join(ys)}: expected numbers, found only empty cells (a "
             "phase that did not run?)")
    ax.set_xscale("log" if args.logx else "linear")
    ax.set_yscale("log" if args.logy else "linear")
    ax.set_xlabel(args.x)
    ax.set_ylabel(ys[0] if len(ys) == 1 else "value")
    ax.set_title(os.path.basename(path))
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="+", help="REPORT.json, A.json B.json, or SWEEP.csv")
    p.add_argument("-o", "--output", required=True, help="the plot: a .png or .svg file")
    p.add_argument("--x", default="seq", help="sweep: the x column")
    p.add_argument("--y", default="total_cycles", help="sweep: y columns, comma-separated")
    p.add_argument("--series", default="config", help="sweep: one line per value of this")
    p.add_argument("--logx", action="store_true")
    p.add_argument("--logy", action="store_true")
    args = p.parse_args()
    ext = os.path.splitext(args.output)[1].lower()
    if ext not in (".png", ".svg"):
        fail(f"{args.output}: expected a .png or .svg file name, found {ext or 'no extension'}")
    ins = args.inputs
    if len(ins) == 1 and ins[0].endswith(".csv"):
        plot_sweep(ins[0], args.output, args)
    elif len(ins) == 1:
        plot_report(ins[0], args.output)
    elif len(ins) == 2:
        plot_compare(ins[0], ins[1], args.output)
    else:
        fail(f"expected one report, two reports or one sweep CSV, found {len(ins)} inputs")
    print(f"plot.py: wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
