#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The keyword test clips: espeak-ng speaks the ten keywords in six voices at two speeds, and sox
# resamples each to 16 kHz mono 16-bit PCM (120 clips, <word>_<voice>_<wpm>.wav in OUTDIR).
# espeak-ng's output is deterministic for a given version, and sox seeds its dither (-R), so the
# clips are the same on every run. (The dither matters: without it the silence around a word is
# exact zeros, whose log-mel floor the model never saw in training, and it misses more words.)
# Clips already there are kept.
#   make_clips.sh OUTDIR
set -euo pipefail
out=${1:?usage: make_clips.sh OUTDIR}
mkdir -p "$out"
voices=(en-us en-gb en-gb-scotland en-us+f3 en-gb+m3 en-029)
words=(yes no up down left right on off stop go)
for voice in "${voices[@]}"; do
  for wpm in 120 170; do
    for word in "${words[@]}"; do
      clip="$out/${word}_${voice}_${wpm}.wav"
      [[ -s "$clip" ]] && continue
      raw="$out/.raw_${word}_${voice}_${wpm}.wav"
      espeak-ng -v "$voice" -s "$wpm" -w "$raw" "$word"
      sox -R "$raw" -r 16000 -c 1 -b 16 "$clip"  # -R: dither from a fixed seed
      rm -f "$raw"
    done
  done
done
echo "make_clips: $(ls "$out"/*.wav | wc -l) clips in $out"
