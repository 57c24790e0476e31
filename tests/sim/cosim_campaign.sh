#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The random co-simulation campaign (not part of CI): passim_cosim on tiny, small and base,
# each until the accelerator has retired INSTRUCTIONS random instructions, at SimOptions'
# default DRAM timing (50 ns, 1.6 B/ns), at a long latency and low bandwidth (400 ns,
# 0.5 B/ns) and at a timing drawn from the seed; then 2000 broken programs per configuration.
# Prints one line per run (programs, retired instructions, mismatches, wall time) and exits 1
# if any run found a mismatch.
#   cosim_campaign.sh <passim_cosim> [instructions=100000] [seed=1] [configs="tiny small base"]
set -u
tool=${1:?usage: cosim_campaign.sh <passim_cosim> [instructions] [seed] [configs]}
instructions=${2:-100000}
seed=${3:-1}
configs=${4:-"tiny small base"}
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
status=0
for config in $configs; do
  "$tool" --config "$config" --seed "$seed" --instructions "$instructions" \
    --latency-ns 50 --bytes-per-ns 1.6 || status=1
  "$tool" --config "$config" --seed "$((seed + 1))" --instructions "$instructions" \
    --latency-ns 400 --bytes-per-ns 0.5 || status=1
  "$tool" --config "$config" --seed "$((seed + 2))" --instructions "$instructions" || status=1
  "$tool" --config "$config" --seed "$((seed + 3))" --invalid --programs 2000 || status=1
done
exit "$status"
