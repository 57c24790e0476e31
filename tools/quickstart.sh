#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job for a newcomer: install packages, build, run the built-in model (the
# project's LayerNorm character GPT, no data needed) on the integer backend and on the
# simulated accelerator with its cycle report; then, if llama2.c's stories260K is present,
# quantise it once and generate text on the float and int8 (cpu) backends.
#
#   bash tools/quickstart.sh [passim run options for stories260K; default: --prompt "Once upon a time" --steps 256]
#
# stories260K.bin and tok512.bin are read from $PASSIM_DATA/models (default: ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
# Only what the main job runs: the passim CLI and the three Verilated configurations it links,
# without their waveform (--trace) models. The README's test command configures the same tree
# with the tests, benchmarks and waveform models (every unit's Verilated model and Yosys
# netlist) and builds the rest.
start=$SECONDS
cmake --preset quickstart
cmake --build --preset quickstart
echo "quickstart: configured and built passim in $((SECONDS - start)) s" >&2

echo "== built-in model (models/ln-gpt), cpu backend ==" >&2
./build/passim run --prompt "ROMEO:" --steps 128
echo "== the same on the simulated accelerator (small: 8x8 array, 8 lanes), cycles from its counters ==" >&2
./build/passim run --prompt "ROMEO:" --steps 48 --backend rtl --config small --report build/run_rtl.json
echo "report: build/run_rtl.json" >&2

data="${PASSIM_DATA:-../shared/data}"
model="$data/models/stories260K.bin"
tok="$data/models/tok512.bin"
if [[ ! -f "$model" || ! -f "$tok" ]]; then
  cat >&2 <<MSG
quickstart: stories260K not found at $model (or $tok); the llama part is skipped.
Download llama2.c's published files and point PASSIM_DATA at their parent folder:
  mkdir -p ~/passim-data/models
  curl -L -o ~/passim-data/models/stories260K.bin \\
    https://huggingface.co/karpathy/tinyllamas/resolve/main/stories260K/stories260K.bin
  curl -L -o ~/passim-data/models/tok512.bin \\
    https://huggingface.co/karpathy/tinyllamas/resolve/main/stories260K/tok512.bin
  PASSIM_DATA=~/passim-data bash tools/quickstart.sh
MSG
  exit 0
fi

psm=build/stories260K.psm
if [[ ! -f "$psm" || "$model" -nt "$psm" ]]; then
  ./build/passim quantize --model "$model" --tokenizer "$tok" --out "$psm"
fi
args=("$@")
if ((${#args[@]} == 0)); then
  args=(--prompt "Once upon a time" --steps 256)
fi
echo "== float backend (llama2.c run.c semantics) ==" >&2
./build/passim run --model "$model" --tokenizer "$tok" --backend float "${args[@]}"
echo "== cpu backend (integer kernels, the golden model) ==" >&2
./build/passim run --model "$psm" --tokenizer "$tok" --backend cpu \
  --report build/run_cpu.json "${args[@]}"
echo "report: build/run_cpu.json" >&2
