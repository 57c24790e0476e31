#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `--config` beyond the named configurations: a spec RxC:lL[:memory=depth]... or a JSON file.
#   - values outside the spec's limits exit 2 with a message naming the field, the expected
#     range and the value found;
#   - a configuration that is not built in is Verilated on first use (its steps on stderr),
#     cached (the second run builds nothing), and runs bit for bit like cpu with the same
#     --config; its report names its sizes;
#   - a JSON file with the same numbers gives the same run.
#   cli_config_check.sh <passim> <work-dir>
set -euo pipefail
passim=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
export PASSIM_CACHE_DIR="$work/cache"

expect_usage_error() {  # <pattern> <config>
  if "$passim" run --backend cpu --config "$2" -n 2 > /dev/null 2> "$work/err.txt"; then
    echo "--config $2: expected exit 2, it succeeded"; exit 1
  fi
  local code=0
  "$passim" run --backend cpu --config "$2" -n 2 > /dev/null 2>&1 || code=$?
  [[ $code == 2 ]] || { echo "--config $2: expected exit 2, found $code"; exit 1; }
  grep -q -- "$1" "$work/err.txt" ||
    { echo "--config $2: no '$1' in:"; cat "$work/err.txt"; exit 1; }
}
expect_usage_error "array_rows (R): expected 1 to 64, found 65" 65x4:l4
expect_usage_error "array_cols (C): expected 1 to 64, found 128" 4x128:l4
expect_usage_error "lanes (L): expected 1 to 64, found 0" 4x4:l0
expect_usage_error "expected at least 2 PEs" 1x1:l4
expect_usage_error "depths.weight: expected a power of two from 2 to 65536, found 1000" \
  4x4:l4:weight=1000
expect_usage_error "depths.param: expected a power of two from 2 to 4096, found 8192" \
  4x4:l4:param=8192
expect_usage_error "expected memory=depth" 4x4:l4:sram=64
expect_usage_error "expected RxC:lL" 4x4
expect_usage_error "expected tiny, small, base or RxC:lL" medium
echo '{"array_rows": 4, "array_cols": 4, "lanes": 4, "depths": {"acc": 100}}' > "$work/bad.json"
expect_usage_error "bad.json: depths.acc: expected a power of two from 2 to 65536, found 100" \
  "$work/bad.json"
mkdir -p "$work/dir.json"
expect_usage_error "dir.json: expected a JSON configuration file, found a directory" \
  "$work/dir.json"
echo '{"name": "4x4:l4", "array_rows": 8, "array_cols": 8, "lanes": 8}' > "$work/named.json"
expect_usage_error "reads as another configuration's spec" "$work/named.json"
expect_usage_error "expected each memory once, found acc twice" 4x4:l4:acc=256:acc=512
echo '{"array_rows": 4, "array_cols": 4}' > "$work/nolanes.json"
expect_usage_error "nolanes.json: lanes: expected a whole number, found none" "$work/nolanes.json"

# A configuration that is not built in: 3 x 4 array, 2 lanes, small memories (a fast build).
cfg="3x4:l2:input=1024:weight=2048:vector=1024:param=256:acc=128:prog=256"
"$passim" run --backend cpu --config "$cfg" -i "ROMEO:" -n 10 --report "$work/cpu.json" \
  > "$work/cpu.txt" 2> /dev/null
"$passim" run --backend rtl --config "$cfg" -i "ROMEO:" -n 10 --report "$work/rtl.json" \
  > "$work/rtl.txt" 2> "$work/rtl_err.txt" ||
  { echo "rtl run on $cfg failed:"; cat "$work/rtl_err.txt"; exit 1; }
for step in "\[1/4\] Verilating psm_accel" "\[2/4\] compiling" "\[4/4\] linking" \
            "model built in"; do
  grep -q "$step" "$work/rtl_err.txt" ||
    { echo "no '$step' on stderr:"; cat "$work/rtl_err.txt"; exit 1; }
done
cmp "$work/cpu.txt" "$work/rtl.txt" || { echo "cpu and rtl texts differ on $cfg"; exit 1; }
"$passim" run --backend rtl --config "$cfg" -i "ROMEO:" -n 10 --report "$work/rtl2.json" \
  > "$work/rtl2.txt" 2> "$work/rtl2_err.txt"
if grep -q "Verilating" "$work/rtl2_err.txt"; then
  echo "the second run built the model again instead of loading it from the cache"; exit 1
fi
printf '{"name": "three-by-four", "array_rows": 3, "array_cols": 4, "lanes": 2, "depths": %s}\n' \
  '{"input": 1024, "weight": 2048, "vector": 1024, "param": 256, "acc": 128, "prog": 256}' \
  > "$work/cfg.json"
"$passim" run --backend rtl --config "$work/cfg.json" -i "ROMEO:" -n 10 \
  --report "$work/file.json" > "$work/file.txt" 2> /dev/null
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
cpu, rtl, rtl2, f = (json.load(open(f"{w}/{n}.json")) for n in ("cpu", "rtl", "rtl2", "file"))
for r in (rtl, rtl2, f):
    assert r["generated_tokens"] == cpu["generated_tokens"], (r["generated_tokens"], cpu)
    assert r["final_logits"] == cpu["final_logits"], "final logits differ from cpu"
    h = r["hardware"]
    assert (h["array_rows"], h["array_cols"], h["lanes"]) == (3, 4, 2), h
assert rtl["hardware"]["config"].startswith("3x4:l2"), rtl["hardware"]["config"]
assert f["hardware"]["config"] == "three-by-four", f["hardware"]["config"]
assert rtl2["cycles"]["total"] == rtl["cycles"]["total"] == f["cycles"]["total"]
print("3x4:l2 on rtl == cpu;", rtl["cycles"]["total"], "cycles")
PY
