#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A fuzzing campaign (tests/fuzz/README.md); not part of CI. Builds the `fuzz` preset, makes each
# target's seeds (tools/fuzz/seeds.sh), then runs each target for PASSIM_FUZZ_RUNS executions,
# one after the other, with a 1 s limit per input and 2 GB of memory. New inputs go to a
# corpus kept between campaigns; crashes, leaks, timeouts and out-of-memory inputs to the
# artifacts folder. The summary gives each target's executions and the findings of this
# campaign (files added to its artifacts folder). Exit 1 when any target found something or
# could not run, 2 on a bad argument or variable (before anything is built or written).
#
#   bash tools/fuzz/campaign.sh [target...]   # default: llama2c tokenizer gguf psm program
#
#   PASSIM_FUZZ_RUNS     executions per target (default 10000000)
#   PASSIM_FUZZ_SECONDS  also stop each target after this many seconds (default: no limit)
#   PASSIM_FUZZ_OUT      corpus/, artifacts/, logs/ and seeds/ (default: build-fuzz/campaign; a
#                        relative path is taken from the repository's folder)
#   PASSIM_FUZZ_JOBS     compile jobs (default 2)
#   PASSIM_DATA          the shared data folder (default: ../shared/data next to the repository)
set -uo pipefail

repo=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
cd "$repo" || exit 1
source tools/fuzz/checks.sh
targets=("$@")
((${#targets[@]})) || targets=("${fuzz_targets[@]}")
for t in "${targets[@]}"; do
  fuzz_require_target campaign "$t"
done
runs=${PASSIM_FUZZ_RUNS:-10000000}
# libFuzzer keeps -runs in 32 bits: 2^31 and more would replay the seeds or never stop.
fuzz_require_count campaign PASSIM_FUZZ_RUNS "$runs" 1 2147483647
fuzz_require_count campaign PASSIM_FUZZ_JOBS "${PASSIM_FUZZ_JOBS:-2}" 1 256
limits=(-runs="$((10#$runs))" -timeout=1 -rss_limit_mb=2048 -print_final_stats=1)
if [[ -n ${PASSIM_FUZZ_SECONDS:-} ]]; then
  fuzz_require_count campaign PASSIM_FUZZ_SECONDS "$PASSIM_FUZZ_SECONDS" 1 31536000
  limits+=(-max_total_time="$((10#$PASSIM_FUZZ_SECONDS))")
fi
if [[ -n ${PASSIM_DATA:-} && ! -d $PASSIM_DATA && ! -d $repo/$PASSIM_DATA ]]; then
  fuzz_usage_error campaign "PASSIM_DATA: expected the shared data folder, found no folder" \
    "$PASSIM_DATA (a relative path is taken from $repo)"
fi
out=${PASSIM_FUZZ_OUT:-$repo/build-fuzz/campaign}
[[ $out == /* ]] || out=$repo/$out
mkdir -p "$out/logs" 2>/dev/null && [[ -w $out ]] ||
  fuzz_usage_error campaign "PASSIM_FUZZ_OUT: expected a folder that can be written, found $out"
build=$repo/build-fuzz

cmake --preset fuzz >/dev/null || exit 1
cmake --build --preset fuzz -j "${PASSIM_FUZZ_JOBS:-2}" || exit 1
export PASSIM_FUZZ_PASSIM=$build/passim
export PASSIM_FUZZ_SEED_WRITER=$build/tests/fuzz/passim_fuzz_seeds

# fuzz_one <target>: seeds, then the run; prints the target's summary row. Exit 1 when the
# target found something or could not run.
fuzz_one() {
  local t=$1 fuzzer=$build/tests/fuzz/passim_fuzz_$1 log=$out/logs/$1.log
  local artifacts=$out/artifacts/$1 extra=() start=$out/logs/$1.start new code
  if [[ ! -x $fuzzer ]]; then
    printf '%-10s error: %s was not built\n' "$t" "$fuzzer"
    return 1
  fi
  rm -rf "$out/seeds/$t"
  if ! bash tools/fuzz/seeds.sh "$t" "$out/seeds/$t" >&2; then
    printf '%-10s error: its seeds could not be made (messages above)\n' "$t"
    return 1
  fi
  mkdir -p "$out/corpus/$t" "$artifacts"
  case $t in
    program) extra=(-max_len=4096) ;;  # tiny's program memory: 256 instructions
    # The seed writer's whole models fit in 32 KB, and a run spends its time on its largest
    # inputs: uncapped, the 360 KB stories260K .psm cuts the executions per second by four.
    gguf | psm) extra=(-max_len=32768) ;;
  esac
  echo "campaign: $t: $runs runs, log in $log" >&2
  touch "$start"  # a finding is a file written after it (libFuzzer rewrites a known crash)
  "$fuzzer" "${limits[@]}" "${extra[@]}" -artifact_prefix="$artifacts/" "$out/corpus/$t" \
    "$out/seeds/$t" >"$log" 2>&1
  code=$?
  new=$(find "$artifacts" -type f -newer "$start" | wc -l)
  local row=("$t") s
  for s in number_of_executed_units average_exec_per_sec new_units_added slowest_unit_time_sec; do
    row+=("$(grep -m1 "^stat::$s:" "$log" | awk '{print $2}')")
  done
  if ((code != 0 && new == 0)); then
    printf '%-10s error: libFuzzer exit status %d, see %s\n' "$t" "$code" "$log"
    return 1
  fi
  printf '%-10s %12s %8s %7s %8s %s\n' "${row[@]}" "$new"
  ((code == 0 && new == 0))
}

status=0
summary=()
for t in "${targets[@]}"; do
  row=$(fuzz_one "$t") || status=1
  summary+=("$row")
done
printf '%-10s %12s %8s %7s %8s %s\n' target executions exec/s new slowest findings
printf '%s\n' "${summary[@]}"
echo "campaign: 'slowest' is libFuzzer's slowest input in whole seconds (0: under 1 s)"
echo "campaign: findings in $out/artifacts/<target>/ (reproduce: passim_fuzz_<target> <file>)"
exit "$status"
