#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `passim run --backend rtl` prints the same text as `--backend cpu`, and its report's class
# totals sum exactly to the total cycles plus the DMA hidden behind compute, with 3 Softmax (2 with --softmax online) and 2 RMSNorm
# passes per row. The per-op records add up to the class counters, show the same passes per
# row, and their MACs are the model's.
#   cli_rtl_check.sh <passim> <data-dir> <work-dir> [config, default tiny] [3pass | online]
# An absolute PASSIM_DATA in the environment replaces <data-dir>, as for the GoogleTest suites.
set -euo pipefail
passim=$1 data=$2 work=$3 config=${4:-tiny} softmax=${5:-3pass}
if [[ ${PASSIM_DATA:-} == /* ]]; then data=$PASSIM_DATA; fi
model="$data/models/stories260K.bin" tok="$data/models/tok512.bin"
if [[ ! -f "$model" ]]; then
  echo "stories260K not found in $data: skipped"
  exit 77
fi
mkdir -p "$work"
"$passim" quantize -m "$model" -z "$tok" -o "$work/m.psm" 2>/dev/null
# The cpu backend takes the config too: the online Softmax follows its lane order.
args=(-m "$work/m.psm" -z "$tok" -i "Once upon a time" -n 6 --config "$config" --softmax "$softmax")
"$passim" run "${args[@]}" -b cpu > "$work/cpu.txt" 2>/dev/null
# The prompt as whole-sequence passes (the default) prints the same text; the report run goes
# position by position, so that every per-position count below holds.
"$passim" run "${args[@]}" -b rtl > "$work/rtl_prefill.txt" 2>/dev/null
cmp "$work/cpu.txt" "$work/rtl_prefill.txt"
"$passim" run "${args[@]}" -b rtl --prefill off --report "$work/rtl.json" > "$work/rtl.txt"
cmp "$work/cpu.txt" "$work/rtl.txt"
# Weights streamed by every MATMUL print the same text as resident ones (where they fit).
"$passim" run "${args[@]}" -b rtl --weights streamed > "$work/rtl_streamed.txt" 2>/dev/null
cmp "$work/cpu.txt" "$work/rtl_streamed.txt"
# stories260K fits only base's weight scratchpad: elsewhere --weights resident is refused.
if [[ $config != base ]]; then
  if "$passim" run "${args[@]}" -b rtl --weights resident > /dev/null 2> "$work/forced.err"; then
    echo "--weights resident on $config: expected an error"; exit 1
  fi
  grep -q "does not fit" "$work/forced.err"
fi
python3 - "$work/rtl.json" "$config" "$softmax" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["cycles"]
online = sys.argv[3] == "online"
softmax_passes = 2 if online else 3
assert r["softmax"]["mode"] == sys.argv[3], r["softmax"]
assert not online or r["softmax"]["lanes"] == r["hardware"]["lanes"], r["softmax"]
total = sum(v["cycles"] for v in c["by_class"].values())
# A hidden DMA cycle is in the dma class and in the class of the op it ran under.
assert c["class_totals_sum_to_total_plus_dma_hidden"], c
assert total == c["total"] + c["dma_hidden"], (total, c["total"], c["dma_hidden"])
assert c["dma_hidden"] + c["dma_exposed"] == c["busy"]["dma"], c["busy"]
for ph in c.get("by_phase", {}).values():
    assert sum(v["cycles"] for v in ph["by_class"].values()) == ph["total"] + ph["dma_hidden"], ph
steps, layers, heads = r["timings"]["positions"], r["model"]["config"]["n_layers"], r["model"]["config"]["n_heads"]
sm = c["by_class"]["softmax"]
assert sm["passes"] == softmax_passes * steps * layers * heads, sm
assert c["by_class"]["norm"]["passes"] == 2 * steps * (2 * layers + 1), c["by_class"]["norm"]
assert r["hardware"]["config"] == sys.argv[2] and len(r["hardware"]["config_hash"]) == 64
# Per-op records: summed per class they equal the class counters (control has no records).
recs = c["records"]
assert c["records_sum_to_class_totals"] is True
keys = {"phase", "layer", "op", "class", "shape", "count", "passes", "cycles", "stall_cycles", "macs",
        "saturated"}
dma_ops = ("DMA_LOAD", "DMA_STORE")
assert recs and all(set(x) == keys | ({"moves"} if x["op"] in dma_ops else set()) for x in recs), recs[:1]
# What the DMA moves: every DMA record says it, and the split adds up to the DMA records.
moves = c["dma_by_moves"]
assert set(moves) == {"weights", "activations", "kv_cache"}, moves
for kind, v in moves.items():
    mine = [x for x in recs if x.get("moves") == kind]
    phases = v["prefill_cycles"] + v["decode_cycles"] + v.get("preload_cycles", 0)
    assert v["cycles"] == sum(x["cycles"] for x in mine) == phases, (kind, v)
assert moves["weights"]["cycles"] > 0 and moves["kv_cache"]["cycles"] > 0, moves
# Weights: resident on base (loaded once in the preload, no tile load in any step), streamed
# elsewhere (every tile in every step).
w = c["weights"]
loads = w["tile_loads"]
if sys.argv[2] == "base":
    assert w["mode"] == "resident" and w["weight_words"] <= w["weight_scratchpad_words"], w
    assert loads == {"preload": w["tiles"], "prefill": 0, "decode": 0}, w
    assert w["preloaded_bytes"] > 0 and w["streamed_bytes_per_pass"] == 0, w
    assert "preload_cycles" in moves["weights"] and c["by_phase"]["preload"]["total"] > 0
else:
    assert w["mode"] == "streamed" and w["weight_words"] > w["weight_scratchpad_words"], w
    assert loads == {"preload": 0, "prefill": 0, "decode": w["tiles"] * steps}, w
    assert w["preloaded_bytes"] == 0 and w["streamed_bytes_per_pass"] > 0, w
    assert "preload_cycles" not in moves["weights"] and "preload" not in c["by_phase"]
    # Double buffering: the streamed tiles load under the previous tile's MATMUL.
    assert c["dma_hidden"] > 0, c["dma_hidden"]
assert sum(v["cycles"] for v in moves.values()) == sum(x["cycles"] for x in recs if x["op"] in dma_ops)
for cls, v in c["by_class"].items():
    mine = [x for x in recs if x["class"] == cls]
    if cls != "control":
        assert sum(x["cycles"] for x in mine) == v["cycles"], (cls, v)
    assert sum(x["passes"] for x in mine) == v["passes"], (cls, v)
for x in recs:
    per_row = {"SOFTMAX": softmax_passes, "RMSNORM": 2}.get(x["op"])
    if per_row:
        assert x["passes"] == per_row * x["shape"]["rows"] * x["count"], x
    assert x["stall_cycles"] <= x["cycles"], x
assert sum(x["stall_cycles"] for x in recs if x["class"] == "dma") <= c["mem_stall"]
# MACs from the instruction shapes = the model's: projections, attention, classifier.
m = r["model"]["config"]
dim, hid, kv = m["dim"], m["hidden_dim"], m["dim"] * m["n_kv_heads"] // m["n_heads"]
per_layer = 2 * dim * dim + 2 * dim * kv + 3 * dim * hid
want = sum(layers * (per_layer + 2 * dim * (pos + 1)) + dim * m["vocab_size"]
           for pos in range(steps))
assert sum(x["macs"] for x in recs) == want, (sum(x["macs"] for x in recs), want)
print("rtl report ok:", sys.argv[3], "Softmax,", c["total"], "cycles,", len(recs), "records")
PY
