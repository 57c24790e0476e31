#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The keyword test clips: espeak-ng speaks the ten keywords in six voices at two speeds, and sox
# resamples each to 16 kHz mono 16-bit PCM (120 clips, <word>_<voice>_<wpm>.wav in OUTDIR).
# The calibration clips, for the int8 scales, are other words: the ten auxiliary words of
# Speech Commands (bed, bird, ...) in the same voices and speeds (120 clips in OUTDIR/calib).
# espeak-ng's output is deterministic for a given version, and sox seeds its dither (-R), so the
# clips are the same on every run. (The dither matters: without it the silence around a word is
# exact zeros, whose log-mel floor the model never saw in training, and it misses more words.)
# Clips already there are kept.
#   make_clips.sh OUTDIR
set -euo pipefail
out=${1:?usage: make_clips.sh OUTDIR}
mkdir -p "$out"
mkdir -p "$out/calib"
voices=(en-us en-gb en-gb-scotland en-us+f3 en-gb+m3 en-029)

# speak DIR WPM WORD...: one clip per voice and word
speak() {
  local dir=$1 wpm=$2
  shift 2
  for voice in "${voices[@]}"; do
    for word in "$@"; do
      local clip="$dir/${word}_${voice}_${wpm}.wav" raw="$dir/.raw_${word}_${voice}_${wpm}.wav"
      [[ -s "$clip" ]] && continue
      espeak-ng -v "$voice" -s "$wpm" -w "$raw" "$word"
      sox -R "$raw" -r 16000 -c 1 -b 16 "$clip"  # -R: dither from a fixed seed
      rm -f "$raw"
    done
  done
}

keywords=(yes no up down left right on off stop go)
speak "$out" 120 "${keywords[@]}"
speak "$out" 170 "${keywords[@]}"
calibration=(bed bird cat dog happy house marvin sheila tree wow)
speak "$out/calib" 120 "${calibration[@]}"
speak "$out/calib" 170 "${calibration[@]}"
echo "make_clips: $(ls "$out"/*.wav | wc -l) test clips in $out," \
     "$(ls "$out"/calib/*.wav | wc -l) calibration clips in $out/calib"
