#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the seed folder of one fuzz target (tests/fuzz/README.md) at run time, from the shared
# data, the repository's own models and, when given, two built programs. Nothing it writes is
# committed.
#
#   bash tools/fuzz/seeds.sh <target> <out dir>    # target: llama2c tokenizer gguf psm program
#
#   PASSIM_DATA              the shared data folder (default: ../shared/data next to the repository)
#   PASSIM_FUZZ_PASSIM       a built `passim`: .psm seeds made by `passim quantize`
#   PASSIM_FUZZ_SEED_WRITER  a built `passim_fuzz_seeds`: small whole files, compiled programs
#   PASSIM_FUZZ_SEED_BYTES   longer data files are cut to their first bytes (default 65536)
#
# A data file missing from the default folder is left out with a warning. A bad argument or
# variable (an unknown target, a PASSIM_DATA that is not a folder, a tool that is not an
# executable) is an error, exit 2, before anything is written.
set -euo pipefail

repo=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
source "$repo/tools/fuzz/checks.sh"
(($# == 2)) || fuzz_usage_error seeds "usage: seeds.sh <target> <out dir>"
target=$1
out=$2
fuzz_require_target seeds "$target"
data=${PASSIM_DATA:-$repo/../shared/data}
[[ $data == /* ]] || data=$repo/$data
if [[ -n ${PASSIM_DATA:-} && ! -d $data ]]; then
  fuzz_usage_error seeds "PASSIM_DATA: expected the shared data folder, found no folder $data"
fi
cut_bytes=${PASSIM_FUZZ_SEED_BYTES:-65536}
fuzz_require_count seeds PASSIM_FUZZ_SEED_BYTES "$cut_bytes" 1 1073741824
passim=${PASSIM_FUZZ_PASSIM:-}
writer=${PASSIM_FUZZ_SEED_WRITER:-}
[[ -z $passim ]] || fuzz_require_exe seeds PASSIM_FUZZ_PASSIM "$passim"
[[ -z $writer ]] || fuzz_require_exe seeds PASSIM_FUZZ_SEED_WRITER "$writer"
[[ -z $passim ]] || passim=$(fuzz_exe_path "$passim")
[[ -z $writer ]] || writer=$(fuzz_exe_path "$writer")
[[ -n $out && ! -e $out || -d $out ]] ||
  fuzz_usage_error seeds "<out dir>: expected a folder or a new path, found '$out'"
mkdir -p "$out"

# cut_seed <file> [prefix bytes (printf escapes)]: the file's first $cut_bytes bytes as a seed.
cut_seed() {
  local file=$1 prefix=${2:-}
  if [[ ! -f $file ]]; then
    echo "seeds: $file not found, left out (set PASSIM_DATA)" >&2
    return 0
  fi
  local name
  name=$(basename "$(dirname "$file")")-$(basename "$file")  # models-tok512.bin
  { printf "$prefix"; head -c "$cut_bytes" "$file"; } >"$out/$name"
}

# le32 <n>: the printf escapes of n as a little-endian int32.
le32() {
  local n=$1
  printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((n & 255)) $((n >> 8 & 255)) $((n >> 16 & 255)) \
    $((n >> 24 & 255))
}

# quantize <name> <passim quantize options...>: a .psm seed from the passim tool (whole).
quantize() {
  local name=$1
  shift
  [[ -x $passim ]] || return 0
  if ! "$passim" quantize "$@" --out "$out/$name.psm" >"$out/$name.log" 2>&1; then
    echo "seeds: passim quantize $* failed:" >&2
    cat "$out/$name.log" >&2
    return 1
  fi
  rm -f "$out/$name.log"
}

case $target in
  llama2c)
    cut_seed "$data/models/stories260K.bin"
    cut_seed "$data/models/stories260K_q80_gs4.bin"
    ;;
  tokenizer)  # the target reads vocab_size (int32) first, then the file
    cut_seed "$data/models/tok512.bin" "$(le32 512)"
    cut_seed "$data/models/llama2c-tok32k/tokenizer.bin" "$(le32 32000)"
    ;;
  gguf)
    cut_seed "$data/models/stories260K.gguf"
    cut_seed "$repo/models/ln-gpt/ln-gpt.gguf"
    cut_seed "$repo/models/bn-gpt/bn-gpt.gguf"
    ;;
  psm)
    if [[ -f $data/models/stories260K.bin ]]; then
      quantize stories260K --model "$data/models/stories260K.bin" \
        --tokenizer "$data/models/tok512.bin"
    fi
    quantize ln-gpt --model "$repo/models/ln-gpt/ln-gpt.gguf"
    ;;
  program) ;;  # no data file holds programs: the seed writer compiles them
esac
if [[ -x $writer ]]; then
  "$writer" "$target" "$out"
fi
echo "seeds: $target: $(ls "$out" | wc -l) files in $out"
