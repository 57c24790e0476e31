#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Ctrl-C (SIGINT) during `passim run --backend rtl --trace --report`: the run stops at the end
# of its simulation quantum, says so, closes the waveform (a whole FST file: every block
# complete, the geometry and hierarchy blocks written at close) and writes the report marked
# partial; the exit is non-zero. SIGTERM (a job scheduler's cancel) does the same.
#   cli_interrupt_check.sh <passim> <work-dir> <INT|TERM>
set -euo pipefail
passim=$1 work=$2 sig=$3
rm -rf "$work"
mkdir -p "$work"
"$passim" run -b rtl --config small -i "ROMEO:" -n 100 --trace "$work/run.fst" \
  --report "$work/run.json" > "$work/out.txt" 2> "$work/err.txt" &
pid=$!
for _ in $(seq 600); do  # the simulation has started once the waveform exists
  [[ -s "$work/run.fst" ]] && break
  sleep 0.1
done
sleep 1
kill -s "$sig" "$pid" || { echo "passim ended before the signal:"; cat "$work/err.txt"; exit 1; }
code=0
wait "$pid" || code=$?
[[ $code != 0 ]] || { echo "expected a non-zero exit after SIG$sig"; exit 1; }
for msg in "partial run: interrupted at cycle" "run.fst is closed, a complete waveform" \
           "partial report written"; do
  grep -q "$msg" "$work/err.txt" || { echo "no '$msg' on stderr:"; cat "$work/err.txt"; exit 1; }
done
python3 - "$work" <<'PY'
import json, struct, sys
w = sys.argv[1]
r = json.load(open(f"{w}/run.json"))
assert r["partial"] is True and r["stopped_by"].startswith("interrupted at cycle"), r["stopped_by"]
assert r["cycles"]["total"] > 0 and r["cycles"]["class_totals_sum_to_total_plus_dma_hidden"]
# FST blocks: one type byte, then a big-endian 64-bit length that counts itself. A closed
# file is a whole number of blocks with the header (0), geometry (3) and hierarchy (4, 6 or 7).
data = open(f"{w}/run.fst", "rb").read()
pos, types = 0, []
while pos < len(data):
    assert pos + 9 <= len(data), f"block at {pos} cut short: the waveform was not closed"
    kind, length = data[pos], struct.unpack(">Q", data[pos + 1:pos + 9])[0]
    assert length >= 8, (pos, length)
    types.append(kind)
    pos += 1 + length
assert pos == len(data), f"last block runs past the end ({pos} > {len(data)})"
assert types[0] == 0 and 3 in types and {4, 6, 7} & set(types), types
print("interrupted at", r["stopped_by"].split(";")[0], "waveform blocks", len(types))
PY
