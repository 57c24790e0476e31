#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `passim run --report /dev/stdout` with standard output redirected to a file: the report is
# appended after the generated text instead of truncating the file the text went to.
#   cli_report_stdout_check.sh <passim> <work-dir>
set -euo pipefail
passim=$1 work=$2
mkdir -p "$work"
"$passim" run --prompt "ROMEO:" --steps 12 --report /dev/stdout > "$work/out.txt" 2> "$work/err.txt"
python3 - "$work/out.txt" <<'PY'
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
assert text.startswith("ROMEO:"), repr(text[:40])
report = json.loads(text[text.index("\n{") + 1:])
assert report["text"].startswith("ROMEO:"), report["text"][:40]
assert text.startswith(report["text"]), "the text before the report is the generated text"
PY
echo "cli_report_stdout: ok"
