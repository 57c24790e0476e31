#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The golden set: what `passim` writes for the shipped models, recorded once and compared
exactly ever after. A refactor must leave every byte of it unchanged: the .psm files that
`passim quantize` writes, and the text, token ids, final logits, cycle counters and
per-instruction report records of `passim run` (and the numbers of `perplexity` and
`accuracy`) on the float, cpu and rtl backends.

    golden_check.py <passim> <models-dir> <data-dir> <work-dir> <case>    # compare one case
    golden_check.py <passim> <models-dir> <data-dir> <work-dir> --record  # re-record all
    golden_check.py --list                                                # the case names

Exit codes: 0 equal, 1 different (the first difference is printed), 77 skipped (the case
needs ../shared/data and it is missing). CMake adds the rtl cases only to builds with the
simulator. Recorded files live next to this
script in data/<case>.json; tests/golden/README.md says when re-recording is allowed.
"""
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77

# Report fields that measure the host, not the model or the hardware.
TIMING_KEYS = {"seconds", "tokens_per_second", "prefill_seconds"}


def cases(models, data):
    """Every case: name -> (needs, command line after the passim binary, kind)."""
    st = ["-m", f"{data}/models/stories260K.bin", "-z", f"{data}/models/tok512.bin"]
    st_gguf = ["-m", f"{data}/models/stories260K.gguf"]
    ln = ["-m", f"{models}/ln-gpt/ln-gpt.gguf"]
    bn = ["-m", f"{models}/bn-gpt/bn-gpt.gguf"]
    story = ["-i", "Once upon a time"]
    romeo = ["-i", "ROMEO:"]
    c = {}

    def run(name, needs, args):
        # The rtl cases of position-by-position runs keep their cycles from before whole
        # sequences existed; the *_prefill cases run the prompt as one pass.
        if "rtl" in needs and not name.endswith("_prefill"):
            args = args + ["--prefill", "off"]
        c[name] = (needs, ["run"] + args, "run")

    # .psm bytes written by `passim quantize`
    c["quantize_stories"] = ({"data"}, ["quantize"] + st, "quantize")
    c["quantize_ln"] = (set(), ["quantize"] + ln, "quantize")
    c["quantize_bn_unfused"] = (set(), ["quantize"] + bn + ["--batchnorm", "unfused"], "quantize")
    c["quantize_bn_folded"] = (set(), ["quantize"] + bn + ["--batchnorm", "folded"], "quantize")
    # stories260K (llama: RMSNorm, RoPE, grouped-query attention, SwiGLU)
    run("stories_float", {"data"}, st + story + ["-n", "40", "-b", "float"])
    run("stories_gguf_float", {"data"}, st_gguf + story + ["-n", "24", "-b", "float"])
    run("stories_cpu", {"data"}, st + story + ["-n", "40", "-b", "cpu"])
    run("stories_cpu_sampled", {"data"},
        st + ["-i", "Lily", "-n", "40", "-t", "0.8", "-s", "7", "-b", "cpu"])
    run("stories_cpu_online", {"data"},
        st + story + ["-n", "40", "-b", "cpu", "--softmax", "online", "--config", "small"])
    run("stories_rtl_tiny", {"data", "rtl"}, st + story + ["-n", "24", "-b", "rtl", "--config", "tiny"])
    run("stories_rtl_tiny_online", {"data", "rtl"},
        st + story + ["-n", "24", "-b", "rtl", "--config", "tiny", "--softmax", "online"])
    run("stories_rtl_small", {"data", "rtl"}, st + story + ["-n", "40", "-b", "rtl", "--config", "small"])
    run("stories_rtl_small_sampled", {"data", "rtl"},
        st + ["-i", "Lily", "-n", "32", "-t", "0.8", "-s", "7", "-b", "rtl", "--config", "small"])
    # the character GPTs (learned positions, LayerNorm or BatchNorm, GELU, biases)
    run("stories_rtl_tiny_prefill", {"data", "rtl"},
        st + ["-i", "Once upon a time, there was a little girl named Lily. She loved to play",
              "-n", "40", "-b", "rtl", "--config", "tiny"])
    run("ln_float", set(), ln + romeo + ["-n", "48", "-b", "float"])
    run("ln_cpu", set(), ln + romeo + ["-n", "48", "-b", "cpu"])
    run("ln_cpu_builtin", set(), ["-i", "KING:", "-n", "32", "-b", "cpu"])
    run("ln_rtl_tiny", {"rtl"}, ln + romeo + ["-n", "24", "-b", "rtl", "--config", "tiny"])
    run("ln_rtl_tiny_online", {"rtl"},
        ln + romeo + ["-n", "24", "-b", "rtl", "--config", "tiny", "--softmax", "online"])
    run("ln_rtl_small", {"rtl"}, ln + romeo + ["-n", "48", "-b", "rtl", "--config", "small"])
    run("ln_rtl_tiny_prefill", {"rtl"},
        ln + ["-i", "ROMEO:\nBut soft, what light", "-n", "34", "-b",
              "rtl", "--config", "tiny"])
    run("bn_float", set(), bn + romeo + ["-n", "48", "-b", "float"])
    run("bn_cpu_unfused", set(), bn + romeo + ["-n", "48", "-b", "cpu", "--batchnorm", "unfused"])
    run("bn_cpu_folded", set(), bn + romeo + ["-n", "48", "-b", "cpu", "--batchnorm", "folded"])
    run("bn_rtl_tiny_unfused", {"rtl"},
        bn + romeo + ["-n", "24", "-b", "rtl", "--config", "tiny", "--batchnorm", "unfused"])
    run("bn_rtl_tiny_folded", {"rtl"},
        bn + romeo + ["-n", "24", "-b", "rtl", "--config", "tiny", "--batchnorm", "folded"])
    run("bn_rtl_small_unfused", {"rtl"},
        bn + romeo + ["-n", "32", "-b", "rtl", "--config", "small", "--batchnorm", "unfused"])
    # perplexity and the int8-against-float accuracy report
    text = f"{data}/text"
    c["perplexity_stories_cpu"] = ({"data"}, ["perplexity"] + st + [
        "--text", f"{text}/tinystories_sample.txt", "-b", "cpu"], "report")
    c["perplexity_ln_float"] = ({"data"}, ["perplexity"] + ln + [
        "--text", f"{text}/tinyshakespeare.txt", "--split", "val", "--max-windows", "3",
        "-b", "float"], "report")
    c["accuracy_stories"] = ({"data"}, ["accuracy"] + st + [
        "--text", f"{text}/tinystories_sample.txt"], "report")
    c["accuracy_bn_folded"] = ({"data"}, ["accuracy"] + bn + [
        "--batchnorm", "folded", "--text", f"{text}/tinyshakespeare.txt", "--split", "val",
        "--max-windows", "2"], "report")
    return c


def normalise(value):
    """Drops host timings and file paths (which differ between machines); keeps the rest."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in TIMING_KEYS or k == "path":
                continue
            out[k] = normalise(v)
        return out
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def observe(passim, name, case, work, data, models):
    """Runs one case and returns what the golden set keeps of it."""
    _, args, kind = case
    args = list(args)
    out_file = os.path.join(work, name + (".psm" if kind == "quantize" else ".json"))
    if os.path.exists(out_file):
        os.remove(out_file)
    args += ["-o", out_file] if kind == "quantize" else ["--report", out_file]
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    p = subprocess.run([passim] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode(errors="replace"))
        raise SystemExit(f"{name}: passim exited with {p.returncode}")
    if kind == "quantize":
        blob = open(out_file, "rb").read()
        return {"bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest()}
    report = json.load(open(out_file))
    records = report.get("cycles", {}).get("records")
    if records is not None:  # one compact row per record keeps the recorded files small
        report["cycles"]["records"] = [
            [r["phase"], r["layer"], r["op"], r.get("moves", ""), r["class"],
             ",".join(f"{k}={v}" for k, v in r["shape"].items()), r["count"], r["passes"],
             r["cycles"], r["stall_cycles"], r["macs"], r["saturated"]]
            for r in records]
    if kind == "report":
        report.pop("text", None)  # the text file's path
    stdout = p.stdout.decode(errors="replace")
    for folder, name in ((data, "<data>"), (models, "<models>")):  # paths differ by machine
        stdout = stdout.replace(folder, name)
    return {"stdout": stdout, "report": normalise(report)}


def first_difference(a, b, where="$"):
    if type(a) is not type(b):
        return f"{where}: recorded {json.dumps(a)[:200]}, found {json.dumps(b)[:200]}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}: {'missing now' if k not in b else 'new'}"
            d = first_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: recorded {len(a)} entries, found {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{where}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{where}: recorded {json.dumps(a)[:200]}, found {json.dumps(b)[:200]}"


def available(needs, data):
    if "data" in needs and not os.path.isfile(f"{data}/models/stories260K.bin"):
        return "stories260K and the texts are not in " + data
    return None


def main():
    if sys.argv[1:] == ["--list"]:
        print(";".join(cases("", "")))
        return 0
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    passim, models, data, work, which = sys.argv[1:]
    if os.environ.get("PASSIM_DATA", "").startswith("/"):
        data = os.environ["PASSIM_DATA"]
    os.makedirs(work, exist_ok=True)
    all_cases = cases(models, data)
    if which == "--record":
        for name, case in all_cases.items():
            why = available(case[0], data)
            if why:
                raise SystemExit(f"{name}: cannot record: {why}")
            got = observe(passim, name, case, work, data, models)
            with open(os.path.join(HERE, "data", name + ".json"), "w") as f:
                json.dump({"case": name, "observed": got}, f, separators=(",", ":"),
                          sort_keys=True)
                f.write("\n")
            print("recorded", name)
        return 0
    if which not in all_cases:
        raise SystemExit(f"unknown case {which}; expected one of {', '.join(all_cases)}")
    case = all_cases[which]
    why = available(case[0], data)
    if why:
        print(f"{which}: skipped: {why}")
        return SKIP
    recorded = json.load(open(os.path.join(HERE, "data", which + ".json")))["observed"]
    got = observe(passim, which, case, work, data, models)
    diff = first_difference(recorded, got)
    if diff:
        print(f"{which}: differs from the golden set at {diff}")
        return 1
    print(f"{which}: identical to the golden set")
    return 0


if __name__ == "__main__":
    sys.exit(main())
