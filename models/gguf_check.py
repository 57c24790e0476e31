#!/usr/bin/env python3
"""Check a passim-gpt GGUF file against its PyTorch checkpoint.

1. Reads the GGUF with the reader of ``gguf_io.py`` and checks the metadata (shape keys,
   norm, epsilon, activation, tokenizer tokens and BOS id) against the checkpoint.
2. Checks that the file holds exactly the expected tensors, each F32 with the expected
   dims, and bit-identical to the checkpoint tensor.
3. Runs a pure-numpy float forward pass from the GGUF tensors alone (float32 by default,
   ``--float64`` for double) and compares its logits with the PyTorch model (eval mode) on
   the reference sequence (BOS "\\n" then the first 31 validation characters) and on
   ``--windows`` full 128-character validation windows. Prints the max abs difference and
   fails if it exceeds ``--tol``.

With ``--logits-json PATH`` it also writes the PyTorch float logits of the reference
sequence: {"tokens": [32 ids], "text": ..., "logits": [[vocab floats] x 32]}. Position p holds
the logits after the tokens 0..p (a causal model, so this equals feeding them one by one).

Example:
  /usr/bin/python3 models/gguf_check.py /tmp/passim-models/ln-gpt.pt models/ln-gpt/ln-gpt.gguf \\
      --logits-json /tmp/passim-models/ln-gpt-logits.json
"""

import argparse
import json
import math
import sys

import numpy as np
import torch

import export_gguf as ex
import gguf_io as g
import passim_gpt as pg

_erf = np.frompyfunc(math.erf, 1, 1)


def gelu(x):
    """Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2)))."""
    return (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(x.dtype))).astype(x.dtype)


def norm(x, t, prefix, kind, eps):
    """LayerNorm over the channels, or BatchNorm with running statistics (eval mode)."""
    w, b = t[prefix + ".weight"], t[prefix + ".bias"]
    if kind == "layernorm":
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * w + b
    mean, var = t[prefix + ".running_mean"], t[prefix + ".running_var"]
    return (x - mean) / np.sqrt(var + eps) * w + b


def numpy_forward(gf, ids, dtype=np.float32):
    """Logits (len(ids), vocab) computed from the GGUF tensors and metadata only."""
    arch = gf.get("general.architecture")
    d = gf.get(f"{arch}.embedding_length")
    n_layer = gf.get(f"{arch}.block_count")
    n_head = gf.get(f"{arch}.attention.head_count")
    kind = gf.get(f"{arch}.norm")
    eps = dtype(gf.get(f"{arch}.norm_epsilon"))
    hs = d // n_head
    t = {k: v.astype(dtype) for k, v in gf.tensors.items()}
    n = len(ids)

    x = t["token_embd.weight"][ids] + t["position_embd.weight"][:n]
    causal = np.triu(np.ones((n, n), dtype=bool), k=1)
    scale = dtype(1.0 / math.sqrt(hs))
    for i in range(n_layer):
        p = f"blk.{i}."
        h = norm(x, t, p + "attn_norm", kind, eps)
        q = h @ t[p + "attn_q.weight"].T + t[p + "attn_q.bias"]
        k = h @ t[p + "attn_k.weight"].T + t[p + "attn_k.bias"]
        v = h @ t[p + "attn_v.weight"].T + t[p + "attn_v.bias"]
        heads = []
        for hd in range(n_head):
            sl = slice(hd * hs, (hd + 1) * hs)
            s = (q[:, sl] @ k[:, sl].T) * scale
            s = np.where(causal, -np.inf, s)
            s = np.exp(s - s.max(axis=-1, keepdims=True))
            s = s / s.sum(axis=-1, keepdims=True)
            heads.append(s @ v[:, sl])
        att = np.concatenate(heads, axis=-1)
        x = x + att @ t[p + "attn_output.weight"].T + t[p + "attn_output.bias"]
        h = norm(x, t, p + "ffn_norm", kind, eps)
        u = gelu(h @ t[p + "ffn_up.weight"].T + t[p + "ffn_up.bias"])
        x = x + u @ t[p + "ffn_down.weight"].T + t[p + "ffn_down.bias"]
    h = norm(x, t, "output_norm", kind, eps)
    return h @ t["token_embd.weight"].T


def check_metadata(gf, ckpt):
    """List of problems found in the metadata (empty if all is as expected)."""
    cfg, chars = ckpt["config"], ckpt["chars"]
    want = dict(ex.gguf_metadata(cfg, chars, ex.default_name(cfg)))
    problems = []
    for key, v in want.items():
        if key == "general.name":
            continue  # may be overridden with --name at export
        if key not in gf.metadata:
            problems.append(f"missing metadata {key!r}")
            continue
        got = gf.metadata[key]
        if got.vtype != v.vtype or got.elem != v.elem:
            problems.append(f"metadata {key!r} has type {got.vtype}/{got.elem}, "
                            f"expected {v.vtype}/{v.elem}")
        elif v.vtype == g.FLOAT32:
            if np.float32(got.value) != np.float32(v.value):
                problems.append(f"metadata {key!r} = {got.value}, expected {v.value}")
        elif got.value != v.value:
            problems.append(f"metadata {key!r} = {got.value!r}, expected {v.value!r}")
    extra = sorted(set(gf.metadata) - set(want))
    if extra:
        problems.append(f"unexpected metadata keys {extra}")
    return problems


def check_tensors(gf, model, cfg):
    """List of problems in the tensors: names, order-free set, dims, type and exact values."""
    problems = []
    want = ex.gguf_tensors(model.state_dict(), cfg)
    want_names = [n for n, _ in want]
    if sorted(gf.tensors) != sorted(want_names):
        missing = sorted(set(want_names) - set(gf.tensors))
        extra = sorted(set(gf.tensors) - set(want_names))
        problems.append(f"tensor set differs: missing {missing}, unexpected {extra}")
    infos = {name: (ne, ttype, off) for name, ne, ttype, off in gf.tensor_infos}
    for name, arr in want:
        if name not in gf.tensors:
            continue
        ne, ttype, off = infos[name]
        if ne != list(reversed(arr.shape)):
            problems.append(f"tensor {name!r} dims {ne}, expected {list(reversed(arr.shape))}")
        elif not np.array_equal(gf.tensors[name].view(np.uint32), arr.view(np.uint32)):
            problems.append(f"tensor {name!r} differs from the checkpoint")
        if ttype != g.GGML_TYPE_F32 or off % 32:
            problems.append(f"tensor {name!r} type {ttype} offset {off}")
    return problems


def reference_sequence(data):
    """BOS ("\\n") followed by the first 31 validation characters (32 token ids)."""
    bos = data.stoi[pg.BOS_CHAR]
    return [bos] + data.val[:31].tolist()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", help="checkpoint written by train_gpt.py (.pt)")
    p.add_argument("gguf", help="GGUF file written by export_gguf.py")
    p.add_argument("--data", default=pg.DEFAULT_DATA, help="training text (for the validation split)")
    p.add_argument("--windows", type=int, default=4,
                   help="number of 128-character validation windows to compare (default 4)")
    p.add_argument("--float64", action="store_true", help="numpy forward in float64")
    p.add_argument("--tol", type=float, default=1e-3, help="max allowed abs logit difference")
    p.add_argument("--logits-json", default=None,
                   help="write the PyTorch logits of the 32-token reference sequence here")
    args = p.parse_args()

    torch.set_num_threads(1)
    pg.require_file(args.gguf, "GGUF file")
    model, ckpt = pg.load_checkpoint(args.checkpoint)
    cfg = ckpt["config"]
    data = pg.CharData(args.data)
    if data.chars != ckpt["chars"]:
        pg.fail(f"the vocabulary of {args.data} differs from the checkpoint's")
    try:
        gf = g.GGUFFile(args.gguf)
    except g.GGUFError as e:
        pg.fail(str(e))

    problems = check_metadata(gf, ckpt) + check_tensors(gf, model, cfg)
    for msg in problems:
        print(f"FAIL: {msg}")
    print(f"{args.gguf}: GGUF v{gf.version}, {len(gf.metadata)} metadata keys, "
          f"{len(gf.tensors)} tensors, {gf.file_size} bytes, data at {gf.data_start}; "
          f"metadata and tensors {'OK (bit-identical)' if not problems else 'FAILED'}")

    dtype = np.float64 if args.float64 else np.float32
    seqs = [reference_sequence(data)]
    vx, _ = pg.val_windows(data.val)
    step = max(1, len(vx) // max(1, args.windows))
    seqs += [vx[i].tolist() for i in range(0, step * args.windows, step)][: args.windows]
    worst = 0.0
    ref_logits = None
    with torch.no_grad():
        for j, ids in enumerate(seqs):
            torch_logits = model(torch.tensor([ids]))[0][0].numpy()
            np_logits = numpy_forward(gf, ids, dtype)
            diff = float(np.max(np.abs(torch_logits.astype(np.float64) - np_logits)))
            worst = max(worst, diff)
            label = "reference sequence (32 tokens)" if j == 0 else f"validation window {j}"
            print(f"  {label}: max abs logit diff {diff:.3e}")
            if j == 0:
                ref_logits = torch_logits
    print(f"max abs logit difference (numpy {np.dtype(dtype).name} from GGUF vs PyTorch): "
          f"{worst:.3e}")

    if args.logits_json:
        ids = seqs[0]
        out = {
            "model": ex.default_name(cfg),
            "gguf": args.gguf,
            "description": "PyTorch float32 logits, eval mode; position p is the output after "
                           "tokens 0..p; token 0 is BOS (newline), then the first 31 "
                           "characters of the validation split",
            "tokens": ids,
            "text": data.decode(ids),
            "logits": [[float(v) for v in row] for row in ref_logits],
        }
        with open(args.logits_json, "w", encoding="utf-8") as f:
            json.dump(out, f)
            f.write("\n")
        print(f"wrote {args.logits_json}")

    if problems or worst > args.tol:
        print("CHECK FAILED")
        sys.exit(1)
    print("CHECK OK")


if __name__ == "__main__":
    main()
