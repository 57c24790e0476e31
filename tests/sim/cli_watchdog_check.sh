#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `passim run --backend rtl --max-cycles N` on a run longer than N cycles: the watchdog stops
# it with a clear message and a non-zero exit, and still prints the cycle tables and writes the
# report, marked partial, whose counters cover the run up to the stop (no cycle counter above
# the total) and whose prompt and positions are those known at the stop.
#   cli_watchdog_check.sh <passim> <work-dir>
set -euo pipefail
passim=$1 work=$2
mkdir -p "$work"
rm -f "$work/partial.json"
if "$passim" run -b rtl --config tiny -i "ROMEO:" -n 24 --max-cycles 5000 \
    --report "$work/partial.json" > "$work/out.txt" 2> "$work/err.txt"; then
  echo "expected a non-zero exit from the watchdog"; exit 1
fi
grep -q "simulation watchdog: the run did not end within 5000 cycles" "$work/err.txt" ||
  { echo "no watchdog message:"; cat "$work/err.txt"; exit 1; }
grep -q "partial run:.*; 0 position(s) completed;" "$work/err.txt" ||
  { echo "no partial-run line naming the completed positions"; cat "$work/err.txt"; exit 1; }
grep -q "partial report written" "$work/err.txt" || { cat "$work/err.txt"; exit 1; }
grep -qi "cycles by class" "$work/err.txt" || grep -q "matmul" "$work/err.txt" ||
  { echo "no cycle tables on stderr"; cat "$work/err.txt"; exit 1; }
python3 - "$work/partial.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["partial"] is True and "watchdog" in r["stopped_by"], r.get("stopped_by")
c = r["cycles"]
assert c["total"] >= 5000, c["total"]
for key in ("mem_stall", "unit_stall", "dma_hidden", "dma_exposed"):
    assert c[key] <= c["total"], (key, c[key], c["total"])
for unit, busy in c["busy"].items():
    assert busy <= c["total"], (unit, busy, c["total"])
assert c["class_totals_sum_to_total_plus_dma_hidden"], c
# The stop came inside the prompt's prefill pass: the prompt's tokens (BOS and "ROMEO:") are
# known, no position completed, nothing was generated.
assert r["prompt_tokens"][0] == 0 and len(r["prompt_tokens"]) == 7, r["prompt_tokens"]
assert r["timings"]["positions"] == 0 and r["timings"]["prefill_positions"] == 0, r["timings"]
assert r["generated_tokens"] == [], r["generated_tokens"]
print("partial report: total", c["total"], "mem_stall", c["mem_stall"])
PY
