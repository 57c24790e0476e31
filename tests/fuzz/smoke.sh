#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The fuzz smoke test of the normal test suite (CTest `fuzz_smoke`, label fuzz): configures the
# `fuzz` preset (clang 14) into a build folder of its own, builds only the fuzz targets, makes
# their seeds with this build's `passim` and `passim_fuzz_seeds`, and runs each target for
# PASSIM_FUZZ_SECONDS (30 s) through the fuzz build's tests (run_target.sh). Any crash, leak or
# input slower than 1 s fails it. Exit 77 (CTest: skipped) without clang++-14 or libFuzzer.
#
#   bash tests/fuzz/smoke.sh <build dir> <passim> <passim_fuzz_seeds> <data dir>
#
#   PASSIM_DATA       overrides <data dir> when it is an absolute path (as for the tests)
#                     (a <data dir> that does not exist is skipped with a warning per file)
#   PASSIM_FUZZ_JOBS  compile jobs of the clang build (default 1: the test takes one core)
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$1
passim=$2
writer=$3
# Without the data folder the seeds come from the repository and the seed writer only.
[[ ${PASSIM_DATA:-} == /* || ! -d $4 ]] || export PASSIM_DATA=$4
jobs=${PASSIM_FUZZ_JOBS:-1}
t0=$SECONDS
elapsed() { echo "fuzz smoke: $1 after $((SECONDS - t0)) s"; }

mkdir -p "$build"
probe='extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }'
if ! command -v clang++-14 >/dev/null; then
  echo "fuzz smoke: skipped: clang++-14 not found (tools/setup.sh installs clang-14)"
  exit 77
fi
if ! clang++-14 -x c++ -fsanitize=fuzzer - -o "$build/probe" <<<"$probe" >/dev/null 2>&1; then
  echo "fuzz smoke: skipped: clang++-14 cannot link libFuzzer (tools/setup.sh installs" \
    "libfuzzer-14-dev)"
  exit 77
fi

cd "$repo" || exit 1
if ! cmake --preset fuzz -B "$build" >"$build/configure.log" 2>&1; then
  cat "$build/configure.log"
  exit 1
fi
elapsed configured
cmake --build "$build" -j "$jobs" --target passim_fuzz_all >"$build/build.log" 2>&1 || {
  tail -n 80 "$build/build.log"
  exit 1
}
elapsed built
export PASSIM_FUZZ_SEEDS=$build/seeds PASSIM_FUZZ_PASSIM=$passim PASSIM_FUZZ_SEED_WRITER=$writer
rm -rf "$PASSIM_FUZZ_SEEDS"
for target in llama2c tokenizer gguf psm program; do
  bash tools/fuzz/seeds.sh "$target" "$PASSIM_FUZZ_SEEDS/$target" || exit 1
done
elapsed "seeds made"
ctest --test-dir "$build" -L fuzz --output-on-failure
status=$?
elapsed "fuzzed (ctest status $status)"
exit $((status == 0 ? 0 : 1))
