#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `--backend model` (the analytical cycle model) through the CLI gives the same cycle report as
# `--backend rtl`: every counter, class, phase, unit share and per-instruction record, for a
# decoder run (prefill and decode) and an encoder pass, on tiny, small and a configuration that
# is not built in (Verilated on first use into the test's own cache); only `cycles.source`
# differs. Options that need the simulator are refused on model (exit 2).
#   cli_model_check.sh <passim> <work-dir>
set -euo pipefail
passim=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
export PASSIM_CACHE_DIR="$work/cache"
odd="3x4:l2:input=1024:weight=2048:vector=1024:param=256:acc=128:prog=256"
for cfg in tiny small "$odd"; do
  tag=${cfg%%:*}
  for be in rtl model; do
    "$passim" run -b "$be" --config "$cfg" -i "ROMEO:" -n 12 --dram-latency 80 \
      --report "$work/run_${tag}_$be.json" > /dev/null 2> "$work/run_${tag}_$be.log" ||
      { cat "$work/run_${tag}_$be.log"; exit 1; }
    "$passim" encode -b "$be" --config "$cfg" --seq 6 --dram-bandwidth 0.8 \
      --report "$work/enc_${tag}_$be.json" > /dev/null 2> "$work/enc_${tag}_$be.log" ||
      { cat "$work/enc_${tag}_$be.log"; exit 1; }
  done
done
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
for tag in ("tiny", "small", "3x4"):
    for run in ("run", "enc"):
        r, m = (json.load(open(f"{w}/{run}_{tag}_{be}.json")) for be in ("rtl", "model"))
        cr, cm = r["cycles"], m["cycles"]
        assert cr["source"] == "rtl" and cm["source"] == "model", (cr["source"], cm["source"])
        del cr["source"], cm["source"]
        bad = sorted(k for k in set(cr) | set(cm) if cr.get(k) != cm.get(k))
        assert not bad, f"{run} on {tag}: model differs from rtl in {bad}"
        assert r.get("final_logits") == m.get("final_logits"), f"{run} on {tag}: logits differ"
        print(f"{run} on {tag}: {cr['total']} cycles, {len(cr['records'])} records, model == rtl")
PY
code=0
"$passim" run -b model --trace "$work/x.fst" -n 4 > /dev/null 2> "$work/err.txt" || code=$?
[[ $code == 2 ]] && grep -q -- "--trace: only for --backend rtl" "$work/err.txt" ||
  { echo "--trace on model: expected exit 2, found $code"; cat "$work/err.txt"; exit 1; }
