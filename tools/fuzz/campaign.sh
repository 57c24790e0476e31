#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A fuzzing campaign (tests/fuzz/README.md); not part of CI. Builds the `fuzz` preset, makes each
# target's seeds (tools/fuzz/seeds.sh), then runs each target for PASSIM_FUZZ_RUNS executions,
# one after the other, with a 1 s limit per input and 2 GB of memory. New inputs go to a
# corpus kept between campaigns; crashes, leaks, timeouts and out-of-memory inputs to the
# artifacts folder, which the summary lists. Exit 1 when any target found something.
#
#   bash tools/fuzz/campaign.sh [target...]   # default: llama2c tokenizer gguf psm program
#
#   PASSIM_FUZZ_RUNS     executions per target (default 10000000)
#   PASSIM_FUZZ_SECONDS  also stop each target after this many seconds (default: no limit)
#   PASSIM_FUZZ_OUT      corpus/, artifacts/, logs/ and seeds/ (default: build-fuzz/campaign)
#   PASSIM_FUZZ_JOBS     compile jobs (default 2)
#   PASSIM_DATA          the shared data folder (default: ../shared/data next to the repository)
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
targets=("$@")
((${#targets[@]})) || targets=(llama2c tokenizer gguf psm program)
runs=${PASSIM_FUZZ_RUNS:-10000000}
out=${PASSIM_FUZZ_OUT:-$repo/build-fuzz/campaign}
build=$repo/build-fuzz

cmake --preset fuzz >/dev/null || exit 1
cmake --build --preset fuzz -j "${PASSIM_FUZZ_JOBS:-2}" || exit 1
export PASSIM_FUZZ_PASSIM=$build/passim
export PASSIM_FUZZ_SEED_WRITER=$build/tests/fuzz/passim_fuzz_seeds

limits=(-runs="$runs" -timeout=1 -rss_limit_mb=2048 -print_final_stats=1)
[[ -n ${PASSIM_FUZZ_SECONDS:-} ]] && limits+=(-max_total_time="$PASSIM_FUZZ_SECONDS")
found=0
summary=()
for t in "${targets[@]}"; do
  rm -rf "$out/seeds/$t"
  bash tools/fuzz/seeds.sh "$t" "$out/seeds/$t" || exit 1
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t" "$out/logs"
  extra=()
  case $t in
    program) extra=(-max_len=4096) ;;  # tiny's program memory: 256 instructions
    # The seed writer's whole models fit in 32 KB, and a run spends its time on its largest
    # inputs: uncapped, the 360 KB stories260K .psm cuts the executions per second by four.
    gguf | psm) extra=(-max_len=32768) ;;
  esac
  log=$out/logs/$t.log
  echo "campaign: $t: $runs runs, log in $log"
  "$build/tests/fuzz/passim_fuzz_$t" "${limits[@]}" "${extra[@]}" \
    -artifact_prefix="$out/artifacts/$t/" "$out/corpus/$t" "$out/seeds/$t" >"$log" 2>&1
  status=$?
  n_found=$(find "$out/artifacts/$t" -type f | wc -l)
  ((status != 0 || n_found > 0)) && found=1
  row=("$t")
  for s in number_of_executed_units average_exec_per_sec new_units_added slowest_unit_time_sec; do
    row+=("$(grep -m1 "^stat::$s:" "$log" | awk '{print $2}')")
  done
  summary+=("$(printf '%-10s %12s %8s %7s %8s %8s' "${row[@]}" "$n_found")")
done
printf '%-10s %12s %8s %7s %8s %8s\n' target executions exec/s new slowest findings
printf '%s\n' "${summary[@]}"
echo "campaign: findings in $out/artifacts/<target>/ (reproduce: passim_fuzz_<target> <file>)"
exit "$found"
