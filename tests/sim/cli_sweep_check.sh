#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `passim sweep`: a four-point grid (two configs x two sequence lengths of the random encoder)
# listed with --print-commands and run through GNU parallel; `passim sweep collect` gives a CSV
# of four rows whose configs, lengths and cycles are those of the reports; tools/plot.py turns
# the CSV, one report and a comparison into valid PNG and SVG files. `passim sweep` runs a grid
# itself too, and bad grids exit 2.
#   cli_sweep_check.sh <passim> <plot.py> <work-dir>
set -euo pipefail
passim=$1 plot=$2 work=$3
rm -rf "$work"
mkdir -p "$work"

"$passim" sweep --model encoder --config tiny,small --seq 4,8 --out "$work/points" \
  --print-commands > "$work/commands.txt"
[[ $(wc -l < "$work/commands.txt") == 4 ]] || { cat "$work/commands.txt"; exit 1; }
parallel --will-cite --halt now,fail=1 -j 2 < "$work/commands.txt" > "$work/parallel.log" 2>&1 ||
  { echo "a point failed under GNU parallel:"; tail -20 "$work/parallel.log"; exit 1; }
"$passim" sweep collect "$work/points" -o "$work/sweep.csv"
python3 - "$work" <<'PY'
import csv, json, sys
w = sys.argv[1]
rows = list(csv.DictReader(open(f"{w}/sweep.csv")))
assert len(rows) == 4, len(rows)
assert [(r["config"], r["seq"]) for r in rows] == [("tiny", "4"), ("tiny", "8"), ("small", "4"),
                                                  ("small", "8")], rows
for r in rows:
    rep = json.load(open(f"{w}/points/{r['report']}"))
    assert int(r["total_cycles"]) == rep["cycles"]["total"] > 0, r
    assert int(r["cycles_softmax"]) == rep["cycles"]["by_class"]["softmax"]["cycles"], r
assert int(rows[0]["total_cycles"]) < int(rows[1]["total_cycles"]), "longer sequence, fewer cycles"
print("sweep.csv:", len(rows), "rows")
PY

# The plots: each file exists and is a PNG (its 8-byte signature) or an SVG document.
"$plot" "$work/sweep.csv" -o "$work/sweep.png" --y total_cycles,cycles_softmax
"$plot" "$work/sweep.csv" -o "$work/sweep.svg" --logx --logy
"$plot" "$work/points/0002.json" -o "$work/report.png"
"$plot" "$work/points/0002.json" "$work/points/0003.json" -o "$work/compare.svg"
python3 - "$work" <<'PY'
import sys, xml.etree.ElementTree as ET
w = sys.argv[1]
for name in ("sweep.png", "report.png"):
    data = open(f"{w}/{name}", "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000, name
for name in ("sweep.svg", "compare.svg"):
    root = ET.parse(f"{w}/{name}").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg", (name, root.tag)
print("plots: 2 PNG, 2 SVG")
PY
if "$plot" "$work/sweep.csv" -o "$work/x.png" --y no_such_column 2> "$work/plot_err.txt"; then
  echo "plot.py accepted an unknown column"; exit 1
fi
grep -q "column no_such_column: expected one of" "$work/plot_err.txt" ||
  { cat "$work/plot_err.txt"; exit 1; }

# The grid run by passim itself: the character GPTs' prefill on tiny, one report per point.
"$passim" sweep --model ln-gpt,bn-gpt --config tiny --seq 6 --out "$work/own" -j 2 \
  2> "$work/own.log"
[[ -s "$work/own/0000.json" && -s "$work/own/0001.json" ]] || { cat "$work/own.log"; exit 1; }

expect_exit2() {  # <pattern> <args...>
  local pattern=$1; shift
  local code=0
  "$passim" "$@" > /dev/null 2> "$work/err.txt" || code=$?
  [[ $code == 2 ]] ||
    { echo "passim $*: expected exit 2, found $code"; cat "$work/err.txt"; exit 1; }
  grep -q -- "$pattern" "$work/err.txt" ||
    { echo "no '$pattern' in:"; cat "$work/err.txt"; exit 1; }
}
echo '{"config": ["tiny"], "seq": []}' > "$work/empty.json"
expect_exit2 "the grid has no points" sweep --grid "$work/empty.json" --out "$work/x"
expect_exit2 "sweep --model gpt-5: expected one of ln-gpt, bn-gpt, encoder" \
  sweep --model gpt-5 --out "$work/x"
expect_exit2 "sweep --seq 0: expected a whole number" sweep --seq 0 --out "$work/x"
expect_exit2 "array_rows (R): expected 1 to 64, found 65" sweep --config 65x4:l4 --out "$work/x"
expect_exit2 "expected --out DIR" sweep --seq 4
expect_exit2 "sweep --softmax foo: expected one of" sweep --softmax foo --out "$work/x"
expect_exit2 "sweep --dram-bandwidth 0: expected 0.001 to" sweep --dram-bandwidth 0 --out "$work/x"
expect_exit2 "found reports of an earlier sweep" \
  sweep --model encoder --config tiny --seq 4 --out "$work/points"
# The character GPTs' points are one line each (GNU parallel reads a command per line).
"$passim" sweep --model ln-gpt,bn-gpt --seq 40 --out "$work/gpt" --print-commands > "$work/gpt.txt"
[[ $(wc -l < "$work/gpt.txt") == 2 ]] || { cat "$work/gpt.txt"; exit 1; }
expect_exit2 "expected a directory of reports" sweep collect "$work/no-such-dir"
echo "sweep checks passed"
