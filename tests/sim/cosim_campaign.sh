#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The random co-simulation campaign (not part of CI): passim_cosim on tiny, small and base,
# each until the accelerator has retired INSTRUCTIONS random instructions, at SimOptions'
# default DRAM timing (50 ns, 1.6 B/ns), at a long latency and low bandwidth (400 ns,
# 0.5 B/ns) and at a timing drawn from the seed; then 2000 broken programs per configuration.
# Prints one line per run (programs, retired instructions, mismatches, wall time) and exits 1
# if any run found a mismatch or failed, 2 on a bad argument (before anything runs).
# passim_cosim is built by a build with the simulator (the release preset): build/passim_cosim.
#   cosim_campaign.sh <passim_cosim> [instructions=100000] [seed=1] [configs="tiny small base"]
set -u
usage="usage: cosim_campaign.sh <passim_cosim> [instructions] [seed] [configs]"
die() {
  echo "cosim_campaign.sh: $1" >&2
  exit 2
}
(($# >= 1 && $# <= 4)) || die "$usage"
tool=$1
instructions=${2:-100000}
seed=${3:-1}
configs=${4:-"tiny small base"}
[[ -f $tool && -x $tool ]] ||
  die "$tool: expected the passim_cosim executable, found no executable file"
[[ $tool == */* ]] || tool=./$tool  # the file checked above, not one found on PATH
[[ $instructions =~ ^[0-9]{1,11}$ ]] && ((10#$instructions >= 1 && 10#$instructions <= 10**10)) ||
  die "instructions: expected a decimal number in 1..10000000000, found '$instructions'"
[[ $seed =~ ^[0-9]{1,18}$ ]] ||
  die "seed: expected a decimal number of at most 18 digits, found '$seed'"
seed=$((10#$seed))
set -f  # split on any white space, newlines included, and expand no pattern
config_list=($configs)
set +f
((${#config_list[@]})) || die "configs: expected one or more of tiny small base, found none"
for config in "${config_list[@]}"; do
  [[ $config =~ ^(tiny|small|base)$ ]] ||
    die "configs: expected tiny, small or base, found '$config'"
done
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
status=0
for config in "${config_list[@]}"; do
  "$tool" --config "$config" --seed "$seed" --instructions "$instructions" \
    --latency-ns 50 --bytes-per-ns 1.6 || status=1
  "$tool" --config "$config" --seed "$((seed + 1))" --instructions "$instructions" \
    --latency-ns 400 --bytes-per-ns 0.5 || status=1
  "$tool" --config "$config" --seed "$((seed + 2))" --instructions "$instructions" || status=1
  "$tool" --config "$config" --seed "$((seed + 3))" --invalid --programs 2000 || status=1
done
exit "$status"
