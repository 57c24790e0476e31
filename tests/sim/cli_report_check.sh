#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `passim report show` and `passim report compare` on reports of real rtl runs (docs/reports.md):
# the tables come back from the JSON; compare gives per-layer deltas of two configs, refuses two
# models without --force, and with --threshold 5% exits 1 when a total grows by 6 % and 0 when
# it grows by 4 %; bad options and files exit 2. The clock and DRAM options reach the report;
# --trace-window refuses bad windows; --progress prints its line, --quiet silences it.
#   cli_report_check.sh <passim> <models-dir> <work-dir>
set -euo pipefail
passim=$1 models=$2 work=$3
mkdir -p "$work"
cd "$work"
run() {  # run <report> <model> <config> [options...]
  local out=$1 model=$2 cfg=$3
  shift 3
  "$passim" run -m "$models/$model/$model.gguf" -b rtl --config "$cfg" -i "ROMEO:" -n "${STEPS:-10}" \
    --report "$out" "$@" > /dev/null 2> "$out.err"
}
run ln-tiny.json ln-gpt tiny
run ln-small.json ln-gpt small --clock-mhz 250 --dram-latency 80 --dram-bandwidth 3.2
run bn-tiny.json bn-gpt tiny
expect() {  # expect <code> <command...>: the exit code is <code>
  local want=$1
  shift
  set +e
  "$@" > last.out 2> last.err
  local got=$?
  set -e
  if [ "$got" != "$want" ]; then
    echo "FAIL: expected exit $want, found $got: $*"; cat last.out last.err; exit 1
  fi
}

# show: the class table's total is the report's, and every table is there.
expect 0 "$passim" report show ln-tiny.json
python3 - ln-tiny.json last.out <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
for name in ("classes", "phases", "layers", "opcodes", "units", "dma", "throughput"):
    assert f"{name}: " in text, name
total = r["cycles"]["total"]
assert any(l.split()[:2] == ["total", str(total)] for l in text.splitlines()), total
PY
expect 0 "$passim" report show ln-tiny.json --table layers --csv
python3 - ln-tiny.json last.out <<'PY'
import csv, json, sys
r = json.load(open(sys.argv[1])); rows = list(csv.reader(open(sys.argv[2])))
assert rows[0][0] == "layer" and rows[0][-1] == "total", rows[0]
sums = {}
for rec in r["cycles"]["records"]:
    sums[rec["layer"]] = sums.get(rec["layer"], 0) + rec["cycles"]
assert {row[0]: int(row[-1]) for row in rows[1:]} == sums, (rows, sums)
PY

# The clock and the DRAM timing are in the report; throughput is items / simulated seconds.
python3 - ln-small.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); h = r["hardware"]; t = r["cycles"]["throughput"]
assert h["clock_mhz"] == 250 and h["dram"] == {"latency_ns": 80, "bytes_per_ns": 3.2}, h
assert t["all"]["cycles"] == r["cycles"]["total"] and t["all"]["items"] == 10, t
assert abs(t["all"]["per_second"] - 10 / (r["cycles"]["total"] / 250e6)) < 1e-6, t
defs = r["cycles"]["counters"]
assert defs["total_cycles"]["value"] == r["cycles"]["total"] and defs["total_cycles"]["definition"]
PY

# compare: two configs of one model, a delta per layer, B - A exact.
expect 0 "$passim" report compare ln-tiny.json ln-small.json --table layers --csv
python3 - ln-tiny.json ln-small.json last.out <<'PY'
import csv, json, sys
def by_layer(p):
    s = {}
    for rec in json.load(open(p))["cycles"]["records"]:
        s[rec["layer"]] = s.get(rec["layer"], 0) + rec["cycles"]
    return s
a, b = by_layer(sys.argv[1]), by_layer(sys.argv[2])
rows = list(csv.reader(open(sys.argv[3])))
assert rows[0] == ["layer", "A", "B", "B - A", "change %"], rows[0]
assert [r[0] for r in rows[1:]] == ["0", "1", "2", "3", "head"], rows
for r in rows[1:]:
    assert (int(r[1]), int(r[2]), int(r[3])) == (a[r[0]], b[r[0]], b[r[0]] - a[r[0]]), r
PY

# Different models: refused (exit 2, naming both), unless --force.
expect 2 "$passim" report compare ln-tiny.json bn-tiny.json
grep -q "cannot be compared: model" last.err
expect 0 "$passim" report compare ln-tiny.json bn-tiny.json --force

# --threshold 5%: a total 6 % larger exits 1 (naming it), 4 % larger exits 0.
python3 - ln-tiny.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for pct in (4, 6):
    g = json.loads(json.dumps(r))
    g["cycles"]["total"] = r["cycles"]["total"] * (100 + pct) // 100
    json.dump(g, open(f"grown{pct}.json", "w"))
PY
expect 1 "$passim" report compare ln-tiny.json grown6.json --threshold 5%
grep -q "^  total: .*(+6.0 %)" last.err
expect 0 "$passim" report compare ln-tiny.json grown4.json --threshold 5%
expect 0 "$passim" report compare ln-tiny.json grown6.json  # no threshold, no gate

# Bad input: exit 2 with the file or option named.
expect 2 "$passim" report compare ln-tiny.json grown6.json --threshold five
grep -q -- "--threshold five" last.err
expect 2 "$passim" report show ln-tiny.json --table nosuch
expect 2 "$passim" report compare ln-tiny.json grown6.json --threshold ""
expect 2 "$passim" report compare ln-tiny.json grown6.json --threshold 0x10
expect 2 "$passim" report compare ln-tiny.json ln-small.json --table units
# Fields of the wrong type or range, and JSON nested too deep: exit 1 naming the path.
python3 - ln-tiny.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = json.loads(json.dumps(r)); bad["cycles"]["total"] = -5; json.dump(bad, open("negative.json", "w"))
bad = json.loads(json.dumps(r)); bad["cycles"]["records"][3]["cycles"] = 2**63; json.dump(bad, open("huge.json", "w"))
bad = json.loads(json.dumps(r)); bad["cycles"]["records"][0]["class"] = "bogus"; json.dump(bad, open("class.json", "w"))
open("deep.json", "w").write('{"format_version": 1, "backend": ' + "[" * 100000 + "]" * 100000 + "}")
PY
expect 1 "$passim" report show negative.json
grep -q "negative.json: cycles.total: expected a whole number of 0 to 2^53, found -5" last.err
expect 1 "$passim" report show huge.json
grep -q "cycles.records\[3\].cycles: expected a whole number" last.err
expect 1 "$passim" report show class.json
grep -q "cycles.records\[0\].class: expected an op class" last.err
expect 1 "$passim" report show deep.json
grep -q "deep.json: expected a JSON report .*nested deeper than 64 levels" last.err
expect 2 "$passim" report compare ln-tiny.json negative.json
# A partial run (the watchdog) is refused by compare, flagged by show.
"$passim" run -m "$models/ln-gpt/ln-gpt.gguf" -b rtl --config tiny -i "ROMEO:" -n 10 \
  --max-cycles 3000 --report partial.json > /dev/null 2>&1 || true
expect 0 "$passim" report show partial.json
grep -q "notice: partial.json is a partial run" last.err
expect 2 "$passim" report compare ln-tiny.json partial.json --threshold 5%
grep -q "B is a partial run" last.err
# A different workload (fewer steps) is refused unless --force.
STEPS=8 run ln-tiny8.json ln-gpt tiny
expect 2 "$passim" report compare ln-tiny.json ln-tiny8.json
grep -q "sampling differs (different workloads)" last.err
echo '{"format_version": 1, "backend": "cpu"}' > cpu.json
expect 1 "$passim" report show cpu.json
grep -q "cpu.json: cycles: expected" last.err
expect 2 "$passim" report compare ln-tiny.json cpu.json
grep -q "cpu.json: cycles: expected" last.err
echo '{not json' > broken.json
expect 1 "$passim" report show broken.json
grep -q "broken.json: expected a JSON report" last.err
expect 1 "$passim" report show missing.json
expect 2 "$passim" run -b cpu --dram-latency 10 -n 2
grep -q -- "--dram-latency: only for --backend rtl" last.err
expect 2 "$passim" run -b rtl --clock-mhz 0 -n 2
# --trace-window: bad windows exit 2; a window past the run's end gets a notice.
for w in 5:3 5:5 abc 1:2:3 -1:5; do
  expect 2 "$passim" run -b rtl --config tiny -n 2 --trace w.fst --trace-window "$w"
  grep -q -- "--trace-window $w: expected" last.err
done
expect 2 "$passim" run -b rtl --config tiny -n 2 --trace-window 1:5
expect 0 "$passim" run -b rtl --config tiny -n 2 --trace late.fst --trace-window 900000000:900000001
grep -q "before the window; late.fst holds no values" last.err
# --progress N: a line every N simulated cycles, increasing; --quiet: none; rtl only.
expect 0 "$passim" run -b rtl --config tiny -n 4 --progress 100000
python3 - last.err <<'PY'
import re, sys
cycles = [int(m.group(1)) for m in re.finditer(r"^progress: cycle (\d+) .* at .*kHz", open(sys.argv[1]).read(), re.M)]
assert len(cycles) >= 3 and cycles == sorted(cycles) and all(c >= 100000 * (i + 1) for i, c in enumerate(cycles)), cycles
PY
expect 0 "$passim" run -b rtl --config tiny -n 4 --progress 100000 --quiet
! grep -q "^progress:" last.err
expect 2 "$passim" run -b cpu -n 2 --progress 10
grep -q -- "--progress: only for --backend rtl" last.err
echo "report show/compare: all checks passed"
