#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `passim run --trace F --trace-scope UNIT --trace-window A:B` on tiny: the waveform, read back,
# starts at cycle A and ends in cycle B - 1 (100 MHz: 10,000 ps a cycle, the last sample half a
# period into it), and every variable in it lies below that unit's instance; the whole
# waveform has signals outside it. The scoped model is Verilated on first use into the test's
# cache. Bad uses exit 2.
#   cli_trace_scope_check.sh <passim> <fst_scopes> <work-dir>
set -euo pipefail
passim=$1 fst_scopes=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
export PASSIM_CACHE_DIR="$work/cache"
run() {  # <fst> [options...]
  local fst=$1; shift
  "$passim" run -b rtl --config tiny -i "RO" -n 3 --trace "$work/$fst" --trace-window 2000:9000 \
    "$@" > /dev/null 2> "$work/$fst.log" || { cat "$work/$fst.log"; exit 1; }
  "$fst_scopes" "$work/$fst" > "$work/$fst.txt"
}
run all.fst
for unit in softmax:psm_accel.u_vector.u_softmax. dma:psm_accel.u_dma.; do
  run "${unit%%:*}.fst" --trace-scope "${unit%%:*}"
  python3 - "$work" "${unit%%:*}" "${unit#*:}" <<'PY'
import sys
w, unit, prefix = sys.argv[1:]
def read(name):
    lines = open(f"{w}/{name}.fst.txt").read().split("\n")
    return int(lines[0].split()[1]), int(lines[1].split()[1]), [l for l in lines[2:] if l]
start, end, names = read(unit)
assert (start, end) == (2000 * 10000, 8999 * 10000 + 5000), (start, end)
assert len(names) > 20, names
outside = [n for n in names if prefix not in n]
assert not outside, f"{unit}: {len(outside)} signals outside {prefix}, e.g. {outside[:3]}"
_, _, every = read("all")
assert any(prefix not in n for n in every) and len(every) > 5 * len(names), len(every)
print(f"{unit}: {len(names)} signals, all below {prefix} (the whole waveform has {len(every)})")
PY
done
grep -q "with a waveform of softmax only: Verilating it on first use" "$work/softmax.fst.log" ||
  { cat "$work/softmax.fst.log"; exit 1; }
code=0
"$passim" run -b rtl --config tiny -n 2 --trace "$work/x.fst" --trace-scope alu > /dev/null \
  2> "$work/err.txt" || code=$?
[[ $code == 2 ]] && grep -q -- "--trace-scope: alu not in" "$work/err.txt" ||
  { echo "unknown unit: expected exit 2, found $code"; cat "$work/err.txt"; exit 1; }
code=0
"$passim" run -b rtl --config tiny -n 2 --trace-scope dma > /dev/null 2> "$work/err.txt" || code=$?
[[ $code == 2 ]] && grep -q -- "--trace-scope: only with --trace" "$work/err.txt" ||
  { echo "--trace-scope without --trace: expected exit 2, found $code"; cat "$work/err.txt"
    exit 1; }
echo "trace scope checks passed"
