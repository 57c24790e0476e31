#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One short run of one fuzz target (the CTest tests fuzz_<name>): PASSIM_FUZZ_SECONDS (default
# 30) of libFuzzer on the target's seeds. Fails on any crash, sanitizer report, leak, input
# slower than 1 s or memory use over 2 GB, and keeps that input in <work>/artifacts/<name>/.
#
#   bash tests/fuzz/run_target.sh <fuzzer> <name> <work dir>
#
# Seeds: $PASSIM_FUZZ_SEEDS/<name> when PASSIM_FUZZ_SEEDS is set, else <work>/seeds/<name>, made
# once by tools/fuzz/seeds.sh (its header lists the variables it reads). A bad argument or
# PASSIM_FUZZ_SECONDS is an error (exit 2). Each run starts from the seeds alone: it empties
# <work>/corpus/<name> first, so give it a folder of its own, not a campaign's
# (tools/fuzz/campaign.sh keeps its corpus between runs).
set -uo pipefail

repo=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
source "$repo/tools/fuzz/checks.sh"
(($# == 3)) || fuzz_usage_error run_target "usage: run_target.sh <fuzzer> <name> <work dir>"
fuzzer=$1
name=$2
work=$3
fuzz_require_target run_target "$name"
fuzz_require_exe run_target "<fuzzer>" "$fuzzer"
fuzzer=$(fuzz_exe_path "$fuzzer")
[[ -n $work ]] || fuzz_usage_error run_target "<work dir>: expected a folder, found ''"
seconds=${PASSIM_FUZZ_SECONDS:-30}
fuzz_require_count run_target PASSIM_FUZZ_SECONDS "$seconds" 1 86400
seconds=$((10#$seconds))
seeds=${PASSIM_FUZZ_SEEDS:-$work/seeds}/$name
if [[ ! -d $seeds ]]; then  # made under another name first: a failed run leaves no folder
  rm -rf "$seeds.partial"
  bash "$repo/tools/fuzz/seeds.sh" "$name" "$seeds.partial" && mv "$seeds.partial" "$seeds" ||
    exit 1
fi
corpus=$work/corpus/$name
artifacts=$work/artifacts/$name
log=$work/logs/$name.log
rm -rf "$corpus"
mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"

extra=()
[[ $name == program ]] && extra=(-max_len=4096)  # tiny's program memory: 256 instructions
# libFuzzer exits with 77 on a crash by default, which CTest would take for a skip.
"$fuzzer" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 -error_exitcode=1 \
  -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$artifacts/" "${extra[@]}" \
  "$corpus" "$seeds" >"$log" 2>&1
status=$?
grep -E '^(INFO: seed corpus|stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb))' \
  "$log"
if ((status != 0)); then
  tail -n 60 "$log"
  echo "fuzz_$name: libFuzzer exit status $status; input kept in $artifacts, log in $log"
  exit 1
fi
echo "fuzz_$name: no crash, leak or timeout in ${seconds} s (log in $log)"
