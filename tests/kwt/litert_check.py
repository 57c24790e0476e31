#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Passim's float KWT against Google's LiteRT on every test clip.

    litert_check.py PASSIM MODEL CLIPDIR

Runs `passim classify --backend float --logits` and tools/litert/kwt_logits.mjs on every
clip in CLIPDIR, and fails unless both give the same label on every clip and every logit
agrees to within BOUND (absolute). Prints the agreement, the largest difference and both
models' keyword accuracy (a clip's keyword is its file name's first word). Exit 77 (skipped)
when the model file is missing.
"""
import pathlib
import subprocess
import sys

BOUND = 1e-4  # |passim float logit - LiteRT logit|, both float32 (docs/kwt.md)


def logits(lines):
    """{clip: [logits]} from lines 'path [label score] l0 l1 ...' (last `n` fields)."""
    out = {}
    for line in lines.splitlines():
        fields = line.split()
        out[pathlib.Path(fields[0]).name] = fields
    return out


def main():
    passim, model, clipdir = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    if not model.exists():
        print(f"litert_check: {model} not found (set PASSIM_DATA): skipped")
        return 77
    repo = pathlib.Path(__file__).resolve().parents[2]
    peer = repo / "tools" / "litert" / "kwt_logits.mjs"
    clips = sorted(str(p) for p in clipdir.glob("*.wav"))
    if len(clips) < 10:
        print(f"litert_check: expected the test clips in {clipdir}, found {len(clips)}")
        return 1
    ours = logits(subprocess.run([passim, "classify", "--model", str(model), "--backend",
                                  "float", "--logits", "--audio", *clips], check=True,
                                 capture_output=True, text=True).stdout)
    peer_run = subprocess.run(["node", str(peer), str(model), *clips], capture_output=True,
                              text=True)
    if peer_run.returncode != 0:  # e.g. LiteRT not installed: the peer names its directory
        print(f"litert_check: {peer} failed:\n{peer_run.stderr}")
        return 1
    theirs = logits(peer_run.stdout)
    labels = (model.parent / "labels.txt").read_text().split()
    worst, differ, right_ours, right_theirs = 0.0, [], 0, 0
    for clip in sorted(ours):
        label, ol = ours[clip][1], [float(v) for v in ours[clip][3:]]
        tl = [float(v) for v in theirs[clip][1:]]
        their_label = labels[tl.index(max(tl))]
        worst = max(worst, max(abs(a - b) for a, b in zip(ol, tl)))
        if label != their_label:
            differ.append(f"{clip}: passim {label}, LiteRT {their_label}")
        word = clip.split("_")[0]
        right_ours += label == word
        right_theirs += their_label == word
    n = len(ours)
    print(f"litert_check: {n} clips, labels equal on {n - len(differ)}, largest logit "
          f"difference {worst:.3g} (bound {BOUND:g}); keyword accuracy passim float "
          f"{right_ours}/{n}, LiteRT {right_theirs}/{n}")
    for d in differ:
        print("  " + d)
    return 0 if not differ and worst <= BOUND and n == len(clips) else 1


if __name__ == "__main__":
    sys.exit(main())
