#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two identical runs write byte-identical reports, apart from the wall-clock fields of
# `timings` (seconds, prefill_seconds, tokens_per_second; docs/reports.md), on cpu and on rtl.
#   cli_determinism_check.sh <passim> <work-dir>
set -euo pipefail
passim=$1 work=$2
mkdir -p "$work"
for backend in cpu rtl; do
  for run in 1 2; do
    "$passim" run -b "$backend" --config tiny -i "ROMEO:" -n 12 --temperature 0.8 --seed 7 \
      --report "$work/$backend.$run.json" > "$work/$backend.$run.txt" 2> /dev/null
  done
  cmp "$work/$backend.1.txt" "$work/$backend.2.txt"
  python3 - "$work/$backend.1.json" "$work/$backend.2.json" <<'PY'
import json, sys
TIMING = ("seconds", "prefill_seconds", "tokens_per_second")
def strip(path):
    text = open(path, "rb").read()
    r = json.loads(text)
    for k in TIMING:
        r["timings"].pop(k)
    return r, text
(a, ta), (b, tb) = strip(sys.argv[1]), strip(sys.argv[2])
assert a == b, "reports differ outside the timing fields: " + sys.argv[1] + " " + sys.argv[2]
# Byte-identical once the timing values are blanked in the text itself (same key order).
import re
blank = lambda t: re.sub(rb'"(seconds|prefill_seconds|tokens_per_second)": [^,}\n]+', b'"\\1": 0', t)
assert blank(ta) == blank(tb), "the report bytes differ outside the timing fields"
print(sys.argv[1], "== run 2 outside timings;", len(ta), "bytes")
PY
done
