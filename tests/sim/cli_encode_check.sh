#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `passim encode --backend rtl` on tiny: the random post-norm encoder's sequence in one pass
# picks the same class with the same logits as `--backend cpu`, and the report's cycles hold:
# every class, the DMA split, 3 LayerNorm passes per row in each block, 3 Softmax passes per
# row and head, and no RMSNorm; --attention array gives the same; a sequence longer than one
# pass runs in chunks with the same logits; and --max-cycles stops the pass with a partial
# report.
#   cli_encode_check.sh <passim> <work-dir>
set -euo pipefail
passim=$1 work=$2
mkdir -p "$work"
args=(encode --dim 16 --hidden 32 --layers 2 --heads 2 --context 16 --seq 8 --config tiny)
"$passim" "${args[@]}" -b cpu --report "$work/cpu.json" > "$work/cpu.txt"
"$passim" "${args[@]}" -b rtl --report "$work/rtl.json" > "$work/rtl.txt" 2> "$work/rtl.err"
cmp "$work/cpu.txt" "$work/rtl.txt"
# Streamed weights (each tile loaded under the previous tile's MATMUL) pick the same class.
"$passim" "${args[@]}" -b rtl --weights streamed --report "$work/streamed.json" \
  > "$work/streamed.txt" 2> /dev/null
cmp "$work/cpu.txt" "$work/streamed.txt"
grep -q "cycles by op class (tiny config" "$work/rtl.err"
# Attention's products on the array (room for them: the weights streamed) give the same class
# and logits; the report says where they ran, and a forced choice that does not fit says so.
"$passim" "${args[@]}" -b rtl --attention array --weights streamed --report "$work/array.json" \
  > "$work/array.txt" 2> "$work/array.err"
cmp "$work/cpu.txt" "$work/array.txt"
grep -q "attention (--attention array), prefill: q k^T on the array" "$work/array.err"
if grep -q "notice: --attention" "$work/array.err"; then cat "$work/array.err"; exit 1; fi
"$passim" encode --seq 2 -b rtl --config tiny --attention array > /dev/null 2> "$work/nofit.err"
grep -q "notice: --attention array: in prefill, passes whose operands do not fit" \
  "$work/nofit.err" || { cat "$work/nofit.err"; exit 1; }
# An unmasked sequence longer than one pass holds (tiny: 2 rows of the default encoder) runs
# in chunks of rows, layer by layer, with the same logits; one whose keys and values alone do
# not fit is refused before anything runs.
long=(encode --seq 6 --layers 1 --config tiny)
"$passim" "${long[@]}" -b cpu --report "$work/long_cpu.json" > /dev/null
"$passim" "${long[@]}" -b rtl --report "$work/long_rtl.json" > /dev/null 2> "$work/long.err"
python3 -c 'import json, sys; a, b = (json.load(open(p))["final_logits"] for p in sys.argv[1:])
assert a == b, (a, b)' "$work/long_cpu.json" "$work/long_rtl.json"
if "$passim" encode --seq 20 -b rtl --config tiny > /dev/null 2> "$work/nochunk.err"; then
  echo "encode --seq 20 on tiny: expected an error"; exit 1
fi
grep -q -- "config tiny: a sequence of 20 positions does not fit even in chunks" \
  "$work/nochunk.err" || { cat "$work/nochunk.err"; exit 1; }
python3 - "$work/cpu.json" "$work/rtl.json" "$work/streamed.json" "$work/array.json" <<'PY'
import json, sys
cpu, rtl, streamed, array = (json.load(open(p)) for p in sys.argv[1:5])
assert cpu["final_logits"] == rtl["final_logits"], (cpu["final_logits"], rtl["final_logits"])
assert array["final_logits"] == rtl["final_logits"]
att = array["cycles"]["attention"]
assert att["requested"] == "array" and att["prefill"]["scores"]["vector"] == 0, att
assert att["prefill"]["scores"]["array"] > 0 and att["prefill"]["values"]["array"] > 0, att
assert rtl["cycles"]["attention"]["requested"] == "auto", rtl["cycles"]["attention"]
assert streamed["final_logits"] == rtl["final_logits"]
s = streamed["cycles"]
assert s["weights"]["mode"] == "streamed" and s["dma_hidden"] > 0, s["dma_hidden"]
assert s["class_totals_sum_to_total_plus_dma_hidden"], s
assert cpu["sequence_tokens"] == rtl["sequence_tokens"]
c = rtl["cycles"]
assert c["class_totals_sum_to_total_plus_dma_hidden"] and c["records_sum_to_class_totals"], c
assert c["dma_hidden"] + c["dma_exposed"] == c["busy"]["dma"], c
rows, layers, heads = 8, 2, 2
assert c["by_class"]["norm"]["passes"] == 3 * rows * layers * 2, c["by_class"]["norm"]
assert c["by_class"]["softmax"]["passes"] == 3 * rows * layers * heads, c["by_class"]["softmax"]
ops = {x["op"] for x in c["records"]}
assert "LAYERNORM" in ops and "RMSNORM" not in ops and "GELU" in ops, ops
phases = c["by_phase"]  # the sequence is one prefill pass (after the preload of resident weights)
assert phases["prefill"]["total"] + phases.get("preload", {}).get("total", 0) == c["total"], phases
PY
# The watchdog stops the pass: a clear error and a non-zero exit, no class line, the cycle
# tables up to the stop, and a partial report without logits.
if "$passim" "${args[@]}" -b rtl --max-cycles 3000 --report "$work/partial.json" \
    > "$work/partial.txt" 2> "$work/partial.err"; then
  echo "encode --max-cycles 3000: expected a non-zero exit"; exit 1
fi
grep -q "passim: error: encode: simulation watchdog: the run did not end within 3000 cycles" \
  "$work/partial.err" || { cat "$work/partial.err"; exit 1; }
grep -q "partial report written" "$work/partial.err"
grep -q "cycles by op class (tiny config" "$work/partial.err"
[ ! -s "$work/partial.txt" ] ||
  { echo "a stopped pass printed a class:"; cat "$work/partial.txt"; exit 1; }
python3 - "$work/partial.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["partial"] is True and "watchdog" in r["stopped_by"], r.get("stopped_by")
assert r["final_logits"] is None, r["final_logits"]
c = r["cycles"]
assert 3000 <= c["total"] and c["class_totals_sum_to_total_plus_dma_hidden"], c["total"]
PY
