# SPDX-License-Identifier: Apache-2.0
# Checks shared by the fuzz scripts (sourced, not run). A bad value ends the script with exit 2
# and a message that names the variable or argument and the expected and found values.

# fuzz_usage_error <script> <message...>: prints "<script>: <message...>" and exits 2.
fuzz_usage_error() {
  echo "$1: ${*:2}" >&2
  exit 2
}

# fuzz_require_count <script> <name> <value> <lo> <hi>: <value> is a decimal whole number in
# [lo, hi] (digits only: no sign, no prefix, at most 15 digits).
fuzz_require_count() {
  local script=$1 name=$2 value=$3 lo=$4 hi=$5
  if ! [[ $value =~ ^[0-9]{1,15}$ ]] || ((10#$value < lo || 10#$value > hi)); then
    fuzz_usage_error "$script" "$name: expected a decimal number in $lo..$hi, found '$value'"
  fi
}

# fuzz_require_exe <script> <name> <path>: <path> is an executable file (not a folder). A bare
# file name means the one in the current folder, never one found on PATH: callers run
# "$(fuzz_exe_path <path>)".
fuzz_require_exe() {
  if [[ ! -f $3 || ! -x $3 ]]; then
    fuzz_usage_error "$1" "$2: expected an executable file, found '$3'"
  fi
}
fuzz_exe_path() {
  if [[ $1 == */* ]]; then echo "$1"; else echo "./$1"; fi
}

# fuzz_require_target <script> <name>: <name> is one of the fuzz targets.
fuzz_targets=(llama2c tokenizer gguf psm program)
fuzz_require_target() {
  local t
  for t in "${fuzz_targets[@]}"; do
    [[ $2 == "$t" ]] && return 0
  done
  fuzz_usage_error "$1" "expected a target (${fuzz_targets[*]}), found '$2'"
}
