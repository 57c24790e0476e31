#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Measures the LayerNorm-vs-BatchNorm lab (docs/labs/layernorm-vs-batchnorm.md).

Runs the project's two character GPTs on the simulated accelerator and on the integer
reference, and writes:
  - <out>/norms.json: every measured number (cycles and passes per op class from the RTL
    counters, for each model, BatchNorm lowering, Softmax variant and hardware config;
    validation perplexity in float and int8 from `passim accuracy`);
  - <out>/layernorm-vs-batchnorm.png: cycles per op class, stacked, per model and config;
  - the Markdown tables of the lab page on standard output.

Cycles come from `passim run --backend rtl --report` (the hardware's own counters); this
script never computes a cycle count itself.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CLASSES = ["matmul", "attention", "softmax", "norm", "other_vector", "dma", "control"]
VARIANTS = [  # (label, model, extra passim options)
    ("LayerNorm", "ln-gpt", []),
    ("BatchNorm (1 pass)", "bn-gpt", ["--batchnorm", "unfused"]),
    ("BatchNorm (folded)", "bn-gpt", ["--batchnorm", "folded"]),
]


def run(cmd, tolerate=None):
    """Runs a command; on failure prints its stderr and exits with its code, unless
    tolerate(proc) says the failure is a result (the caller then reads proc.returncode)."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 and not (tolerate and tolerate(proc)):
        sys.stderr.write(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
        sys.exit(proc.returncode)
    return proc


def model_path(root, name):
    path = os.path.join(root, "models", name, f"{name}.gguf")
    if not os.path.isfile(path):
        sys.exit(f"{path}: not found (the project's models are committed under models/)")
    return path


def measure_cycles(args, model, extra, config, softmax, tmp):
    report = os.path.join(tmp, "run.json")
    run([args.passim, "run", "--model", model, *extra, "--backend", "rtl", "--config", config,
         "--softmax", softmax, "--prompt", args.prompt, "--steps", str(args.steps),
         "--prefill", "off", "--report", report])  # every position alone, as the lab measures
    with open(report, encoding="utf-8") as f:
        cycles = json.load(f)["cycles"]
    if not cycles["class_totals_sum_to_total_plus_dma_hidden"]:
        sys.exit(f"{model} {config}: class totals do not sum to the total")
    out = {"total": cycles["total"], "mem_stall": cycles["mem_stall"],
           "by_class": cycles["by_class"]}
    # passes of each norm/softmax instruction, from the per-op records
    per_op = {}
    for r in cycles["records"]:
        if r["class"] in ("norm", "softmax"):
            e = per_op.setdefault(r["op"], {"count": 0, "passes": 0, "cycles": 0})
            e["count"] += r["count"]
            e["passes"] += r["passes"]
            e["cycles"] += r["cycles"]
    out["norm_and_softmax_ops"] = per_op
    return out


def measure_accuracy(args, model, extra, tmp):
    report = os.path.join(tmp, "acc.json")
    run([args.passim, "accuracy", "--model", model, *extra, "--text", args.text,
         "--split", "val", "--max-windows", str(args.windows), "--report", report])
    with open(report, encoding="utf-8") as f:
        acc = json.load(f)
    return {"float": acc["perplexity"]["float"], "int8": acc["perplexity"]["int8"],
            "positions": acc["text"]["positions"], "warnings": acc["warnings"]}


def plot(results, path):
    """Two panels: every op class (left), and only the vector unit's classes (right), where
    the norms' passes show."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = []
    runs = []
    for config in results["configs"]:
        for label, _, _ in VARIANTS:
            short = {"LayerNorm": "LN", "BatchNorm (1 pass)": "BN 1 pass",
                     "BatchNorm (folded)": "BN folded"}[label]
            labels.append(f"{short}\n{config}")
            runs.append(results["runs"][config][label]["3pass"])
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    for ax, classes, scale, unit, title in (
            (axes[0], CLASSES, 1e6, "millions", "all op classes"),
            (axes[1], ["softmax", "norm", "other_vector"], 1e3, "thousands",
             "vector unit only (Softmax, norm, other)")):
        bottom = [0.0] * len(labels)
        for c in classes:
            vals = [r["by_class"][c]["cycles"] / scale for r in runs]
            ax.bar(range(len(labels)), vals, bottom=bottom, label=c,
                   color=f"C{CLASSES.index(c)}")
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylabel(f"cycles ({unit}), RTL counters")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle(f"{results['steps']} steps of the character GPTs (prompt "
                 f"{results['prompt']!r}), three-pass Softmax")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def tables(results):
    lines = []
    for config in results["configs"]:
        lines.append(f"\n**`{config}`** ({results['steps']} steps, prompt {results['prompt']!r}, "
                     "three-pass Softmax)\n")
        lines.append("| model | total cycles | matmul | attention | Softmax | norm | other vector "
                     "| DMA | control | norm passes | norm share |")
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for label, _, _ in VARIANTS:
            r = results["runs"][config][label]["3pass"]
            b = r["by_class"]
            norm_share = 100.0 * b["norm"]["cycles"] / r["total"]
            lines.append(
                f"| {label} | {r['total']:,} | " +
                " | ".join(f"{b[c]['cycles']:,}" for c in CLASSES) +
                f" | {b['norm']['passes']:,} | {norm_share:.1f} % |")
    lines.append("\nPasses per norm and Softmax instruction (from the per-op records):\n")
    lines.append("| config | model | Softmax | op | instructions | passes | passes per row |")
    lines.append("| --- | --- | --- | --- | ---: | ---: | ---: |")
    for config in results["configs"]:
        for label, _, _ in VARIANTS:
            for sm in ("3pass", "online"):
                r = results["runs"][config][label].get(sm)
                if r is None:
                    continue
                for op, e in sorted(r["norm_and_softmax_ops"].items()):
                    lines.append(f"| {config} | {label} | {sm} | {op} | {e['count']:,} | "
                                 f"{e['passes']:,} | {e['passes'] / e['count']:.0f} |")
    lines.append("\nOnline against three-pass Softmax (LayerNorm model):\n")
    lines.append("| config | Softmax cycles, 3 passes | Softmax cycles, online | ratio | total ratio |")
    lines.append("| --- | ---: | ---: | ---: | ---: |")
    for config in results["configs"]:
        a = results["runs"][config]["LayerNorm"]["3pass"]
        o = results["runs"][config]["LayerNorm"]["online"]
        sa, so = a["by_class"]["softmax"]["cycles"], o["by_class"]["softmax"]["cycles"]
        lines.append(f"| {config} | {sa:,} | {so:,} | {so / sa:.3f} | "
                     f"{o['total'] / a['total']:.4f} |")
    lines.append(f"\nValidation perplexity ({results['accuracy_positions']:,} characters of the "
                 "validation split):\n")
    lines.append("| model | float | int8 | int8 vs float |")
    lines.append("| --- | ---: | ---: | ---: |")
    for label, _, _ in VARIANTS:
        a = results["accuracy"][label]
        lines.append(f"| {label} | {a['float']:.4f} | {a['int8']:.4f} | "
                     f"{100 * (a['int8'] / a['float'] - 1):+.2f} % |")
    return "\n".join(lines)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--passim", default=os.path.join(root, "build", "passim"),
                   help="passim binary built with the simulator (default: build/passim)")
    p.add_argument("--text", default=os.path.join(root, "..", "shared", "data", "text",
                                                  "tinyshakespeare.txt"),
                   help="tinyshakespeare.txt (the models' training text)")
    p.add_argument("--out", default=os.path.join(root, "docs", "labs"),
                   help="folder for norms.json and the PNG")
    p.add_argument("--configs", default="small,base", help="hardware configs, comma separated")
    p.add_argument("--steps", type=int, default=64, help="decode steps per run")
    p.add_argument("--prompt", default="ROMEO:", help="prompt of every run")
    p.add_argument("--windows", type=int, default=0,
                   help="validation windows for the perplexities (0 = the whole split)")
    p.add_argument("--replot", action="store_true",
                   help="do not measure: redraw the plot and tables from <out>/norms.json")
    args = p.parse_args()
    try:
        import matplotlib  # noqa: F401  (checked before minutes of measuring)
    except ImportError:
        sys.exit("matplotlib is missing: run this script with Debian's /usr/bin/python3 "
                 "(python3-matplotlib, installed by tools/setup.sh)")
    if args.replot:
        with open(os.path.join(args.out, "norms.json"), encoding="utf-8") as f:
            results = json.load(f)
        plot(results, os.path.join(args.out, "layernorm-vs-batchnorm.png"))
        print(tables(results))
        return
    if not os.access(args.passim, os.X_OK):
        sys.exit(f"{args.passim}: not an executable passim (build it first: cmake --workflow "
                 "--preset test)")
    if not os.path.isfile(args.text):
        sys.exit(f"{args.text}: not found (give --text)")
    configs = [c for c in args.configs.split(",") if c]
    results = {"steps": args.steps, "prompt": args.prompt, "configs": configs, "runs": {},
               "accuracy": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for config in configs:
            results["runs"][config] = {}
            for label, name, extra in VARIANTS:
                path = model_path(root, name)
                entry = {}
                softmaxes = ["3pass", "online"] if name == "ln-gpt" else ["3pass"]
                for sm in softmaxes:
                    print(f"measuring {label} on {config}, Softmax {sm}", file=sys.stderr)
                    entry[sm] = measure_cycles(args, path, extra, config, sm, tmp)
                results["runs"][config][label] = entry
        for label, name, extra in VARIANTS:
            print(f"measuring the accuracy of {label}", file=sys.stderr)
            results["accuracy"][label] = measure_accuracy(args, model_path(root, name), extra, tmp)
    results["accuracy_positions"] = results["accuracy"]["LayerNorm"]["positions"]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "norms.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    plot(results, os.path.join(args.out, "layernorm-vs-batchnorm.png"))
    print(tables(results))


if __name__ == "__main__":
    main()
