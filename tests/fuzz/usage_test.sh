#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The campaign scripts refuse a bad argument or variable before they build, write or run
# anything (CTest `campaign_script_usage`): exit 2 and a message that names it. Each case runs
# the script and checks both; every case that differs is listed, and then the test fails.
#
#   bash tests/fuzz/usage_test.sh <parent dir>   # works in a new folder inside it, then removes it
set -u
repo=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
if (($# != 1)) || [[ -z $1 ]]; then
  echo "usage_test.sh: usage: usage_test.sh <parent dir>" >&2
  exit 2
fi
mkdir -p "$1" && scratch=$(mktemp -d "$1/usage.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
failures=0
# A script that got past its checks would build: this cmake refuses, so it cannot.
mkdir -p "$scratch/bin"
printf '#!/bin/sh\necho "cmake: called although the arguments were bad" >&2\nexit 3\n' \
  >"$scratch/bin/cmake"
chmod +x "$scratch/bin/cmake"
export PATH=$scratch/bin:$PATH

# expect <message part> <command...>: the command exits 2 and prints the message part.
expect() {
  local want=$1 out code
  shift
  out=$("$@" 2>&1 </dev/null)
  code=$?
  if ((code != 2)) || [[ $out != *"$want"* ]]; then
    echo "FAIL: $*: expected exit 2 and '$want', found exit $code: $out"
    failures=$((failures + 1))
  else
    echo "ok: $*: $out"
  fi
}

campaign=$repo/tools/fuzz/campaign.sh
expect "found 'bogus'" bash "$campaign" program bogus
expect "found '../corpus'" bash "$campaign" ../corpus
expect "PASSIM_FUZZ_RUNS: expected a decimal number" env PASSIM_FUZZ_RUNS=abc bash "$campaign"
expect "found '0'" env PASSIM_FUZZ_RUNS=0 bash "$campaign"
expect "found '-5'" env PASSIM_FUZZ_RUNS=-5 bash "$campaign"
expect "found '2147483648'" env PASSIM_FUZZ_RUNS=2147483648 bash "$campaign"
expect "PASSIM_FUZZ_SECONDS" env PASSIM_FUZZ_SECONDS=abc bash "$campaign"
expect "PASSIM_FUZZ_JOBS" env PASSIM_FUZZ_JOBS=x bash "$campaign"
expect "PASSIM_DATA" env PASSIM_DATA="$scratch/none" bash "$campaign"
expect "PASSIM_FUZZ_OUT" env PASSIM_FUZZ_OUT=/proc/passim bash "$campaign"

seeds=$repo/tools/fuzz/seeds.sh
expect "usage: seeds.sh" bash "$seeds"
expect "found 'bogus'" bash "$seeds" bogus "$scratch/seeds"
expect "PASSIM_FUZZ_SEED_BYTES" env PASSIM_FUZZ_SEED_BYTES=abc bash "$seeds" gguf "$scratch/seeds"
expect "PASSIM_FUZZ_PASSIM" env PASSIM_FUZZ_PASSIM="$scratch/none" bash "$seeds" psm \
  "$scratch/seeds"
expect "PASSIM_FUZZ_SEED_WRITER" env PASSIM_FUZZ_SEED_WRITER=/tmp bash "$seeds" program \
  "$scratch/seeds"
if [[ -e $scratch/seeds ]]; then
  echo "FAIL: seeds.sh wrote $scratch/seeds although it refused its arguments"
  failures=$((failures + 1))
fi

run_target=$repo/tests/fuzz/run_target.sh
expect "usage: run_target.sh" bash "$run_target"
expect "PASSIM_FUZZ_SECONDS" env PASSIM_FUZZ_SECONDS=-3 bash "$run_target" /bin/true program \
  "$scratch/work"
expect "<fuzzer>: expected an executable file" bash "$run_target" "$scratch/none" program \
  "$scratch/work"
expect "<fuzzer>: expected an executable file" bash "$run_target" /tmp program "$scratch/work"
expect "work dir" bash "$run_target" /bin/true program ""

cosim=$repo/tests/sim/cosim_campaign.sh
expect "usage: cosim_campaign.sh" bash "$cosim"
expect "expected the passim_cosim executable" bash "$cosim" "$scratch/none"
expect "instructions: expected" bash "$cosim" /bin/true 0
expect "instructions: expected" bash "$cosim" /bin/true -5
expect "instructions: expected" bash "$cosim" /bin/true 20000000000
expect "expected the passim_cosim executable" bash "$cosim" /tmp
expect "seed: expected" bash "$cosim" /bin/true 10 1+1
expect "seed: expected" bash "$cosim" /bin/true 10 -3
expect "configs: expected one or more" bash "$cosim" /bin/true 10 1 " "
expect "found 'huge'" bash "$cosim" /bin/true 10 1 "tiny huge"
expect "found 'huge'" bash "$cosim" /bin/true 10 1 $'tiny\nhuge'

((failures == 0)) || {
  echo "$failures case(s) failed"
  exit 1
}
echo "every bad argument was refused by name"
