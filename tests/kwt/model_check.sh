#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# KWT-1 on `--backend model` (the cycle model) against `--backend rtl`: on two keyword clips
# (int8 scales from two calibration clips) the reports' `cycles` sections are equal but for
# `source`, and so are the labels and logits. Exit 77 (skipped) without the model.
#   model_check.sh <passim> <kwt1.tflite> <clip-dir> <config> <work-dir>
set -euo pipefail
passim=$1 model=$2 clips=$3 cfg=$4 work=$5
[[ -f "$model" ]] || { echo "no $model: skipped"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
for be in rtl model; do
  "$passim" classify --model "$model" --backend "$be" --config "$cfg" \
    --audio "$clips/yes_en-us_120.wav" "$clips/stop_en-gb_170.wav" \
    --calib-audio "$clips/calib/bed_en-us_120.wav" "$clips/calib/wow_en-gb_170.wav" \
    --logits --report "$work/$be.json" > "$work/$be.txt" 2> "$work/$be.log" ||
    { cat "$work/$be.log"; exit 1; }
done
cmp "$work/rtl.txt" "$work/model.txt" || { echo "labels or logits differ"; exit 1; }
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
r, m = (json.load(open(f"{w}/{be}.json"))["cycles"] for be in ("rtl", "model"))
assert (r.pop("source"), m.pop("source")) == ("rtl", "model")
bad = sorted(k for k in set(r) | set(m) if r.get(k) != m.get(k))
assert not bad, f"model differs from rtl in {bad}"
print(f"KWT-1, 2 clips: {r['total']} cycles, {len(r['records'])} records, model == rtl")
PY
