#!/usr/bin/env python3
"""Measure how a checkpoint behaves with batch statistics (train mode) versus eval mode.

For a BatchNorm model in train mode every channel is normalised with the mean and variance
over all (batch, time) positions of the batch, so the output at position t depends a little
on the characters after t (and on the other windows of the batch). This script shows it:

1. Loss on the same fixed validation windows (batches of ``--batch``) in train mode (batch
   statistics) and in eval mode (running statistics). No weights are changed: the running
   statistics are saved and restored, and no gradient is taken.
2. Future leak: in train mode, the characters after position ``--position`` of the first
   window are replaced by random ones, and the largest change of the logits at positions
   0..position is printed. For LayerNorm it is exactly 0 (causal); for BatchNorm it is not.

Example:
  /usr/bin/python3 models/norm_gap.py /tmp/passim-models/bn-gpt.pt
"""

import argparse
import copy

import torch

import passim_gpt as pg


@torch.no_grad()
def train_mode_loss(model, x, y, batch):
    """Mean loss with batch statistics, on a copy so the running statistics stay untouched."""
    m = copy.deepcopy(model)
    m.train()
    total, count = 0.0, 0
    for i in range(0, len(x) - batch + 1, batch):
        _, loss = m(x[i: i + batch], y[i: i + batch])
        total += loss.item() * y[i: i + batch].numel()
        count += y[i: i + batch].numel()
    return total / count


@torch.no_grad()
def future_leak(model, x, position, generator):
    """Max |change| of train-mode logits at positions <= ``position`` of window 0 when the
    characters after ``position`` in that window are replaced."""
    m = copy.deepcopy(model)
    m.train()
    before, _ = m(x)
    x2 = x.clone()
    n_future = x.size(1) - position - 1
    x2[0, position + 1:] = torch.randint(model.config["vocab_size"], (n_future,),
                                         generator=generator)
    after, _ = m(x2)
    return (before[0, : position + 1] - after[0, : position + 1]).abs().max().item()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", help="checkpoint written by train_gpt.py (.pt)")
    p.add_argument("--data", default=pg.DEFAULT_DATA, help="training text")
    p.add_argument("--windows", type=int, default=256,
                   help="fixed random validation windows (generator seed 4; default 256)")
    p.add_argument("--batch", type=int, default=32, help="windows per train-mode batch")
    p.add_argument("--position", type=int, default=63,
                   help="position whose logits are checked for the future leak")
    args = p.parse_args()

    torch.set_num_threads(1)
    model, ckpt = pg.load_checkpoint(args.checkpoint)
    data = pg.CharData(args.data)
    x, y = pg.random_windows(data.val, args.windows, torch.Generator().manual_seed(4))
    eval_loss = pg.mean_loss(model, x, y)
    train_loss = train_mode_loss(model, x, y, args.batch)
    leak = future_leak(model, x[: args.batch], args.position, torch.Generator().manual_seed(5))
    print(f"{args.checkpoint} ({ckpt['config']['norm']}), {args.windows} validation windows "
          f"(seed 4):")
    print(f"  eval mode loss (running statistics): {eval_loss:.4f}")
    print(f"  train mode loss (batch statistics, batches of {args.batch}): {train_loss:.4f}")
    print(f"  future leak: max |logit change| at positions 0..{args.position} after replacing "
          f"the later characters of one window: {leak:.3e}")


if __name__ == "__main__":
    main()
