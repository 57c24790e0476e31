#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The random co-simulation campaign (not part of CI): passim_cosim on tiny, small and base,
# each until the accelerator has retired INSTRUCTIONS random instructions, once at the DRAM
# timing drawn from the seed and once at a long latency and low bandwidth; then a run of
# broken programs per configuration. Prints one line per run (programs, retired instructions,
# mismatches, wall time) and exits 1 if any run found a mismatch.
#   cosim_campaign.sh <passim_cosim> [instructions=100000] [seed=1] [configs="tiny small base"]
set -u
tool=${1:?usage: cosim_campaign.sh <passim_cosim> [instructions] [seed] [configs]}
instructions=${2:-100000}
seed=${3:-1}
configs=${4:-"tiny small base"}
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
status=0
for config in $configs; do
  "$tool" --config "$config" --seed "$seed" --instructions "$instructions" || status=1
  "$tool" --config "$config" --seed "$((seed + 1))" --instructions "$instructions" \
    --latency-ns 400 --bytes-per-ns 0.5 || status=1
  "$tool" --config "$config" --seed "$((seed + 2))" --invalid --programs 2000 || status=1
done
exit "$status"
