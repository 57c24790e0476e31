#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Measures the where-the-cycles-go lab (docs/labs/where-the-cycles-go.md).

Runs whole-sequence workloads on the simulated accelerator and writes:
  - <out>/cycles.json: every measured number (cycles and passes per op class and phase from
    the RTL counters, each unit's busy share, the array's MAC utilisation);
  - <out>/where-the-cycles-go.png: the share of each op class, per workload, config and phase;
  - the Markdown tables of the lab page on standard output.

Cycles come from `passim run --backend rtl --report` (the hardware's own counters); this
script never computes a cycle count itself, only shares of the counted ones.
"""
import argparse
import json
import os
import sys
import tempfile

from lab_norms import run  # runs a command, exits with its code on failure

CLASSES = ["matmul", "attention", "softmax", "norm", "other_vector", "dma", "control"]
PHASES = ["preload", "prefill", "decode"]


def first_words(path, chars):
    """The first `chars` characters of a text file, cut at a word boundary."""
    with open(path, encoding="utf-8") as f:
        text = " ".join(f.read(chars * 4).split())
    return text[:chars].rsplit(" ", 1)[0]


def kwt_workload(args, tmp):
    """KWT-1 (docs/kwt.md) on one spoken clip ("yes"), int8 scales calibrated on the test
    suite's calibration clips, which tests/kwt/make_clips.sh speaks into `tmp`."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    clips = os.path.join(tmp, "kwt_clips")
    run(["bash", os.path.join(root, "tests", "kwt", "make_clips.sh"), clips])
    calib_dir = os.path.join(clips, "calib")
    calib = sorted(os.path.join(calib_dir, f) for f in os.listdir(calib_dir))
    return ("KWT-1, one clip",
            ["classify",
             "--model", os.path.join(args.data, "models", "kwt1", "non_stream.tflite"),
             "--calib-audio", *calib, "--audio", os.path.join(clips, "yes_en-us_170.wav")])


def workloads(args):
    """(name, passim command and options) of every workload: the decoders' prompts come from
    the data; the encoder is `passim encode`'s random post-norm encoder (dim 32, FFN 128, 2
    heads, 2 blocks: BERT's proportions at 1/24 of BERT-Base's width) at three lengths; KWT-1
    (trained by others, 99 positions) is added by measure_all()."""
    shakespeare = first_words(os.path.join(args.data, "text", "tinyshakespeare.txt"), 120)
    shakespeare = shakespeare.ljust(120, ".")  # 120 characters: 120 prompt tokens
    stories = first_words(os.path.join(args.data, "text", "tinystories_sample.txt"), 160)
    encoder = ["encode", "--dim", "32", "--hidden", "128", "--heads", "2", "--layers", "2"]
    return [
        ("ln-gpt, 120-token prompt", ["run", "--prompt", shakespeare, "--steps", "128"]),
        ("stories260K, prompt + decode",
         ["run", "--model", os.path.join(args.data, "models", "stories260K.bin"),
          "--tokenizer", os.path.join(args.data, "models", "tok512.bin"),
          "--prompt", stories, "--steps", "128"]),
    ] + [(f"random encoder, seq {n}", encoder + ["--seq", str(n)]) for n in (32, 64, 128)]


def too_long(proc):
    """An unmasked sequence that does not fit one pass of the config (encode, classify)."""
    return "cannot be split" in proc.stderr or "does not fit" in proc.stderr


def measure(args, options, config, tmp):
    """One run on the RTL: class cycles and passes per phase, units, MAC utilisation."""
    report = os.path.join(tmp, "run.json")
    cmd = [args.passim, *options, "--backend", "rtl", "--config", config, "--report", report]
    # An unmasked sequence must fit one pass: a config too small for it is a result.
    proc = run(cmd, tolerate=too_long)
    if proc.returncode != 0:
        return {"does_not_fit": proc.stderr.strip().splitlines()[-1]}
    with open(report, encoding="utf-8") as f:
        rep = json.load(f)
    cycles = rep["cycles"]
    if not cycles["class_totals_sum_to_total_plus_dma_hidden"]:
        sys.exit(f"{config}: class totals do not sum to the total")
    tokens = rep.get("prompt_tokens", rep.get("sequence_tokens", []))
    out = {"total": cycles["total"], "prompt_tokens": len(tokens),
           "by_class": cycles["by_class"], "by_phase": cycles.get("by_phase", {}),
           "units": cycles["units"]}
    return out


UNITS = ["vector", "array", "auto"]  # --attention


def measure_attention(args, options, config, tmp):
    """The same run with attention's products on each unit (--attention vector, array, auto):
    per phase the total and the attention class's cycles, and where auto put them."""
    out = {}
    for unit in UNITS:
        report = os.path.join(tmp, "att.json")
        cmd = [args.passim, *options, "--backend", "rtl", "--config", config,
               "--attention", unit, "--report", report]
        proc = run(cmd, tolerate=too_long)
        if proc.returncode != 0:
            return {"does_not_fit": proc.stderr.strip().splitlines()[-1]}
        with open(report, encoding="utf-8") as f:
            cycles = json.load(f)["cycles"]
        out[unit] = {"attention": cycles["attention"],
                     "phases": {ph: {"total": v["total"],
                                     "attention": v["by_class"]["attention"]["cycles"]}
                                for ph, v in cycles["by_phase"].items() if ph != "preload"}}
    return out


def attention_table(results):
    """Prefill and decode cycles with attention on the vector unit, on the array, and where
    --attention auto put it."""
    att = results.get("attention", {})
    lines = ["| workload | config | phase | vector: total | attention | array: total | "
             "attention | auto: total | auto ran q k^T / p v on |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for w in results["workloads"]:
        for config in results["configs"]:
            r = att.get(w, {}).get(config)
            if r is None or "does_not_fit" in r:
                continue
            for phase in ("prefill", "decode"):
                if phase not in r["vector"]["phases"]:
                    continue
                v, a, u = (r[k]["phases"][phase] for k in UNITS)
                where = r["auto"]["attention"].get(phase, {})
                on = " / ".join(
                    "array" if where[p]["array"] and not where[p]["vector"] else
                    "vector" if not where[p]["array"] else "both"
                    for p in ("scores", "values")) if where else "-"
                lines.append(f"| {w} | {config} | {phase} | {v['total']:,} | "
                             f"{v['attention']:,} | {a['total']:,} | {a['attention']:,} | "
                             f"{u['total']:,} | {on} |")
    return "\n".join(lines)


def share(phase, cls):
    """A class's share of a phase's cycles (%). DMA counts only its exposed cycles: a DMA
    cycle behind a MATMUL is already the matmul class's, so the shares add up to 100."""
    total = phase["total"]
    cycles = phase["by_class"][cls]["cycles"]
    if cls == "dma":
        cycles = phase.get("dma_exposed", cycles)
    return 100.0 * cycles / total if total else 0.0


def hidden_share(phase):
    """The DMA cycles behind compute, as a share of the phase's cycles (%)."""
    return 100.0 * phase.get("dma_hidden", 0) / phase["total"] if phase["total"] else 0.0


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for w in results["workloads"]:
        for config in results["configs"]:
            run_ = results["runs"][w][config]
            if "does_not_fit" in run_:
                continue
            for phase in ("prefill", "decode"):  # the preload is all DMA: left out of the plot
                if phase in run_["by_phase"]:
                    rows.append((f"{w}\n{config}, {phase}", run_["by_phase"][phase]))
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(rows) + 1.5))
    left = [0.0] * len(rows)
    for i, cls in enumerate(CLASSES):
        vals = [share(ph, cls) for _, ph in rows]
        label = "dma (exposed)" if cls == "dma" else cls
        ax.barh(range(len(rows)), vals, left=left, label=label, color=f"C{i}")
        left = [a + b for a, b in zip(left, vals)]
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("share of the phase's cycles (%), RTL counters")
    ax.set_xlim(0, 100)
    ax.legend(fontsize=7, ncol=len(CLASSES), loc="upper center", bbox_to_anchor=(0.5, -0.08))
    fig.suptitle("Where the cycles go: op classes per phase")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def tables(results):
    heads = [("dma (exposed)" if c == "dma" else c) for c in CLASSES]
    lines = ["| workload | config | phase | cycles | " + " | ".join(heads) +
             " | DMA hidden | MAC util. | MAC util. of matmul |",
             "| --- | --- | --- | ---: | " + " | ".join("---:" for _ in CLASSES) +
             " | ---: | ---: | ---: |"]
    for w in results["workloads"]:
        for config in results["configs"]:
            r = results["runs"][w][config]
            if "does_not_fit" in r:
                lines.append(f"| {w} | {config} | - | does not fit one pass | " +
                             " | ".join("-" for _ in CLASSES) + " | - | - | - |")
                continue
            for phase in PHASES:
                if phase not in r["by_phase"]:
                    continue
                ph, u = r["by_phase"][phase], r["units"][phase]
                lines.append(
                    f"| {w} | {config} | {phase} | {ph['total']:,} | " +
                    " | ".join(f"{share(ph, c):.1f} %" for c in CLASSES) +
                    f" | {hidden_share(ph):.1f} % | {u['mac_utilisation']:.1f} % | "
                    f"{u['matmul_class_mac_utilisation']:.1f} % |")
    lines += ["", "Passes per op class (whole run):", "",
              "| workload | config | " + " | ".join(CLASSES) + " |",
              "| --- | --- | " + " | ".join("---:" for _ in CLASSES) + " |"]
    for w in results["workloads"]:
        for config in results["configs"]:
            if "does_not_fit" in results["runs"][w][config]:
                continue
            bc = results["runs"][w][config]["by_class"]
            lines.append(f"| {w} | {config} | " +
                         " | ".join(f"{bc[c]['passes']:,}" for c in CLASSES) + " |")
    lines += ["", "Attention on the vector unit and on the array (`--attention`):", "",
              attention_table(results)]
    return "\n".join(lines)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--passim", default=os.path.join(root, "build", "passim"),
                   help="passim binary built with the simulator (default: build/passim)")
    p.add_argument("--data", default=os.path.join(root, "..", "shared", "data"),
                   help="the data folder (models/stories260K.bin, tok512.bin, text/)")
    p.add_argument("--out", default=os.path.join(root, "docs", "labs"),
                   help="folder for cycles.json and the PNG")
    p.add_argument("--configs", default="small,base", help="hardware configs, comma separated")
    p.add_argument("--replot", action="store_true",
                   help="do not measure: redraw the plot and tables from <out>/cycles.json")
    args = p.parse_args()
    try:
        import matplotlib  # noqa: F401  (checked before minutes of measuring)
    except ImportError:
        sys.exit("matplotlib is missing: run this script with Debian's /usr/bin/python3 "
                 "(python3-matplotlib, installed by tools/setup.sh)")
    json_path = os.path.join(args.out, "cycles.json")
    if args.replot:
        with open(json_path, encoding="utf-8") as f:
            results = json.load(f)
    else:
        if not os.access(args.passim, os.X_OK):
            sys.exit(f"{args.passim}: not an executable passim (build it first: cmake "
                     "--workflow --preset test)")
        for need in ("models/stories260K.bin", "models/tok512.bin", "text/tinyshakespeare.txt",
                     "text/tinystories_sample.txt"):
            if not os.path.isfile(os.path.join(args.data, need)):
                sys.exit(f"{os.path.join(args.data, need)}: not found (give --data)")
        results = measure_all(args)
        os.makedirs(args.out, exist_ok=True)
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
            f.write("\n")
    plot(results, os.path.join(args.out, "where-the-cycles-go.png"))
    print(tables(results))


def measure_all(args):
    configs = [c for c in args.configs.split(",") if c]
    with tempfile.TemporaryDirectory() as tmp:
        loads = workloads(args) + [kwt_workload(args, tmp)]
        results = {"configs": configs, "workloads": [w for w, _ in loads], "runs": {},
                   "attention": {}}
        for name, options in loads:
            results["runs"][name] = {}
            results["attention"][name] = {}
            for config in configs:
                print(f"measuring {name} on {config}", file=sys.stderr)
                results["runs"][name][config] = measure(args, options, config, tmp)
                results["attention"][name][config] = measure_attention(args, options, config,
                                                                       tmp)
    return results


if __name__ == "__main__":
    main()
