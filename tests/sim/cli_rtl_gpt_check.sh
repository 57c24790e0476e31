#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The project's character GPTs through `passim run --backend rtl` (tiny): the same text as
# --backend cpu, and report records with LAYERNORM 3, BATCHNORM 1, SOFTMAX 3 (online: 2)
# passes per row, and no norm instruction at all for a folded BatchNorm.
#   cli_rtl_gpt_check.sh <passim> <models-dir> <work-dir>
set -euo pipefail
passim=$1 models=$2 work=$3
mkdir -p "$work"
check() {  # <name> <expected norm op or -> <softmax passes> passim-args...
  local name=$1 norm_op=$2 sm_passes=$3
  shift 3
  "$passim" run "$@" -i "KING:" -n 12 --config tiny -b cpu > "$work/$name.cpu.txt" 2>/dev/null
  "$passim" run "$@" -i "KING:" -n 12 --config tiny -b rtl > "$work/$name.prefill.txt" \
    2>/dev/null
  cmp "$work/$name.cpu.txt" "$work/$name.prefill.txt"
  "$passim" run "$@" -i "KING:" -n 12 --config tiny -b rtl --prefill off \
    --report "$work/$name.json" > "$work/$name.rtl.txt" 2>/dev/null
  cmp "$work/$name.cpu.txt" "$work/$name.rtl.txt"
  python3 - "$work/$name.json" "$norm_op" "$sm_passes" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
norm_op, sm_passes = sys.argv[2], int(sys.argv[3])
c = r["cycles"]
assert c["class_totals_sum_to_total_plus_dma_hidden"] and c["records_sum_to_class_totals"], c["total"]
per_row = {"LAYERNORM": 3, "BATCHNORM": 1, "SOFTMAX": sm_passes, "GELU": 1}
steps, layers = r["timings"]["positions"], r["model"]["config"]["n_layers"]
norms = [x for x in c["records"] if x["class"] == "norm"]
for x in c["records"]:
    if x["op"] in per_row:
        assert x["passes"] == per_row[x["op"]] * x["shape"]["rows"] * x["count"], x
if norm_op == "-":
    assert not norms and c["by_class"]["norm"] == {"cycles": 0, "passes": 0}, norms
else:
    assert {x["op"] for x in norms} == {norm_op}, norms
    assert sum(x["count"] for x in norms) == steps * (2 * layers + 1), norms
    assert c["by_class"]["norm"]["passes"] == per_row[norm_op] * steps * (2 * layers + 1)
assert r["model"]["config"]["arch"] == "gpt"
print(sys.argv[1], "ok:", c["total"], "cycles, norm passes", c["by_class"]["norm"]["passes"])
PY
}
check ln LAYERNORM 3 -m "$models/ln-gpt/ln-gpt.gguf"
check ln_online LAYERNORM 2 -m "$models/ln-gpt/ln-gpt.gguf" --softmax online
check bn BATCHNORM 3 -m "$models/bn-gpt/bn-gpt.gguf" --batchnorm unfused
check bn_folded - 3 -m "$models/bn-gpt/bn-gpt.gguf" --batchnorm folded
