#!/usr/bin/env python3
"""Train one of Passim's character-level GPTs (LayerNorm or BatchNorm) on tinyshakespeare.

Both models have the same shape: d_model 64, 4 layers, 4 heads, context 128, FFN 256,
tied classifier; see ``passim_gpt.py``. Training is deterministic for a given seed and
thread count: the batches come from a seeded ``torch.Generator``.

Data: the vocabulary is the sorted set of characters of the whole file; the first 90 % of
the characters are the training split, the last 10 % the validation split.

Validation: at the end the model is evaluated in eval mode (BatchNorm uses its running
statistics) on the whole validation split cut into non-overlapping 128-character windows
(871 windows, 111,488 predicted characters). The final train loss is measured the same way
on 871 fixed random training windows (generator seed 1). The periodic log uses smaller
fixed subsets (32 windows each) to stay cheap.

Outputs (outside the repository by default):
  <out-dir>/<name>.pt    checkpoint: config, state_dict, vocabulary, recipe
  <out-dir>/<name>.json  recipe, seed, steps, wall time, losses, log

Example:
  /usr/bin/python3 models/train_gpt.py --norm layernorm --steps 3000
"""

import argparse
import json
import math
import os
import platform
import random
import time

import numpy as np
import torch

import passim_gpt as pg


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--norm", required=True, choices=["layernorm", "batchnorm"],
                   help="normalisation layer of every block and of the final norm")
    p.add_argument("--data", default=pg.DEFAULT_DATA, help="training text (UTF-8)")
    p.add_argument("--out-dir", default=pg.DEFAULT_OUT_DIR,
                   help="directory for the checkpoint and the JSON summary")
    p.add_argument("--name", default=None,
                   help="output base name (default: ln-gpt or bn-gpt)")
    p.add_argument("--steps", type=int, default=3000, help="optimizer steps")
    p.add_argument("--batch", type=int, default=32, help="windows per batch")
    p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    p.add_argument("--min-lr", type=float, default=3e-4,
                   help="learning rate at the end of the cosine decay")
    p.add_argument("--warmup", type=int, default=100, help="linear warmup steps")
    p.add_argument("--weight-decay", type=float, default=0.1,
                   help="AdamW weight decay (matrices and embeddings only)")
    p.add_argument("--clip", type=float, default=1.0, help="gradient norm clip")
    p.add_argument("--seed", type=int, default=1337, help="random seed")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    p.add_argument("--log-every", type=int, default=250, help="log interval in steps")
    p.add_argument("--time-steps", type=int, default=0,
                   help="only time this many steps, print steps/s and exit (no outputs)")
    return p.parse_args()


def lr_at(step, args):
    """Linear warmup to ``lr`` over ``warmup`` steps, then cosine decay to ``min_lr``."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1.0 + math.cos(math.pi * progress))


def make_optimizer(model, args):
    """AdamW; weight decay on 2-D tensors (linear weights, embeddings), none on biases/norms."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": args.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.99), eps=1e-8)


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    np.random.seed(args.seed)

    name = args.name or ("ln-gpt" if args.norm == "layernorm" else "bn-gpt")
    data = pg.CharData(args.data)
    model = pg.GPT(data.vocab_size, args.norm)
    model.train()
    opt = make_optimizer(model, args)
    batch_gen = torch.Generator().manual_seed(args.seed)

    # Fixed evaluation sets.
    val_x, val_y = pg.val_windows(data.val)
    train_eval_x, train_eval_y = pg.random_windows(
        data.train, len(val_x), torch.Generator().manual_seed(1))
    log_val = pg.random_windows(data.val, 32, torch.Generator().manual_seed(2))
    log_train = pg.random_windows(data.train, 32, torch.Generator().manual_seed(3))

    print(f"{name}: norm={args.norm} params={model.num_parameters()} vocab={data.vocab_size} "
          f"train={len(data.train)} val={len(data.val)} chars, threads={torch.get_num_threads()}",
          flush=True)

    total_steps = args.time_steps or args.steps
    log = []
    recent = []
    t0 = time.time()
    for step in range(total_steps):
        lr = lr_at(step, args)
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = pg.random_windows(data.train, args.batch, batch_gen)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        recent.append(loss.item())

        if args.time_steps:
            continue
        last = step + 1 == args.steps
        if (step + 1) % args.log_every == 0 or step == 0 or last:
            entry = {
                "step": step + 1,
                "lr": lr,
                "train_loss_batches": sum(recent) / len(recent),
                "train_loss_eval": pg.mean_loss(model, *log_train),
                "val_loss_eval": pg.mean_loss(model, *log_val),
                "elapsed_s": round(time.time() - t0, 1),
            }
            recent = []
            log.append(entry)
            print(f"step {entry['step']:5d} lr {lr:.2e} train(batches) "
                  f"{entry['train_loss_batches']:.4f} train(eval,32w) {entry['train_loss_eval']:.4f} "
                  f"val(eval,32w) {entry['val_loss_eval']:.4f} t {entry['elapsed_s']:.0f}s",
                  flush=True)

    train_time = time.time() - t0
    if args.time_steps:
        print(f"{args.time_steps} steps in {train_time:.1f}s: "
              f"{args.time_steps / train_time:.2f} steps/s", flush=True)
        return

    t1 = time.time()
    model.eval()
    val_loss = pg.mean_loss(model, val_x, val_y)
    train_loss = pg.mean_loss(model, train_eval_x, train_eval_y)
    eval_time = time.time() - t1
    print(f"final: train {train_loss:.4f} val {val_loss:.4f} (ppl {math.exp(val_loss):.3f}) "
          f"train time {train_time:.0f}s eval time {eval_time:.0f}s", flush=True)

    recipe = {
        "norm": args.norm,
        "config": model.config,
        "parameters": model.num_parameters(),
        "optimizer": "AdamW betas (0.9, 0.99) eps 1e-8",
        "weight_decay": args.weight_decay,
        "weight_decay_on": "2-D tensors (linear weights, embeddings); not biases or norms",
        "lr": args.lr,
        "min_lr": args.min_lr,
        "schedule": f"linear warmup {args.warmup} steps, cosine decay to min_lr at step {args.steps}",
        "batch": args.batch,
        "context": pg.CONTEXT,
        "steps": args.steps,
        "grad_clip": args.clip,
        "seed": args.seed,
        "threads": torch.get_num_threads(),
        "init": "N(0, 0.02); out_proj and down N(0, 0.02/sqrt(2*n_layer)); biases 0; norms 1",
        "dropout": 0.0,
    }
    summary = {
        "name": name,
        "recipe": recipe,
        "data": {
            "path": os.path.abspath(args.data),
            "chars": len(data.text),
            "vocab_size": data.vocab_size,
            "split": "first int(0.9 * n) characters train, the rest validation",
            "train_chars": len(data.train),
            "val_chars": len(data.val),
        },
        "val_loss": val_loss,
        "val_perplexity": math.exp(val_loss),
        "val_measured_on": (f"whole validation split, {len(val_x)} non-overlapping windows of "
                            f"{pg.CONTEXT} characters ({val_y.numel()} predictions), eval mode"),
        "train_loss": train_loss,
        "train_measured_on": (f"{len(train_eval_x)} random training windows of {pg.CONTEXT} "
                              "characters (torch.Generator seed 1), eval mode"),
        "train_wall_s": round(train_time, 1),
        "eval_wall_s": round(eval_time, 1),
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "ld_library_path": os.environ.get("LD_LIBRARY_PATH", ""),
        "log": log,
    }

    os.makedirs(args.out_dir, exist_ok=True)
    ckpt_path = os.path.join(args.out_dir, f"{name}.pt")
    torch.save({"config": model.config, "state_dict": model.state_dict(),
                "chars": data.chars, "recipe": recipe, "name": name}, ckpt_path)
    json_path = os.path.join(args.out_dir, f"{name}.json")
    with open(json_path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    print(f"wrote {ckpt_path} and {json_path}", flush=True)


if __name__ == "__main__":
    main()
