#!/usr/bin/env python3
"""Export a ``train_gpt.py`` checkpoint as a float32 GGUF v3 file (architecture "passim-gpt").

Metadata written:
  general.architecture = "passim-gpt", general.name = "passim-ln-gpt" | "passim-bn-gpt",
  passim-gpt.context_length, .embedding_length, .feed_forward_length, .block_count,
  .attention.head_count (uint32), passim-gpt.norm ("layernorm" | "batchnorm"),
  passim-gpt.norm_epsilon (float32 1e-5), passim-gpt.activation ("gelu"),
  tokenizer.ggml.model = "passim-char", tokenizer.ggml.tokens (token i = i-th character of
  the sorted vocabulary), tokenizer.ggml.bos_token_id (uint32, the id of "\\n"). No EOS.

Tensors (F32; GGUF dims are the PyTorch shape reversed):
  token_embd.weight (vocab, d), position_embd.weight (context, d), and per block i
  blk.i.attn_norm.{weight,bias[,running_mean,running_var]}, blk.i.attn_{q,k,v,output}.{weight,bias},
  blk.i.ffn_norm.*, blk.i.ffn_up.{weight,bias} (hidden, d), blk.i.ffn_down.{weight,bias} (d, hidden),
  then output_norm.*. The classifier is tied to token_embd.weight, so there is no output.weight.

Example:
  /usr/bin/python3 models/export_gguf.py /tmp/passim-models/ln-gpt.pt models/ln-gpt/ln-gpt.gguf
"""

import argparse
import os

import numpy as np
import torch

import gguf_io as g
import passim_gpt as pg

ARCH = "passim-gpt"

# PyTorch sub-module name -> GGUF name, inside a block.
_BLOCK_LINEARS = [("attn.q", "attn_q"), ("attn.k", "attn_k"), ("attn.v", "attn_v"),
                  ("attn.out_proj", "attn_output"), ("up", "ffn_up"), ("down", "ffn_down")]


def _norm_fields(norm):
    if norm == "batchnorm":
        return ["weight", "bias", "running_mean", "running_var"]
    return ["weight", "bias"]


def tensor_map(config):
    """Ordered list of (GGUF name, state-dict key) for a model ``config``."""
    fields = _norm_fields(config["norm"])
    out = [("token_embd.weight", "tok_emb.weight"), ("position_embd.weight", "pos_emb.weight")]
    for i in range(config["n_layer"]):
        p = f"blocks.{i}."
        q = f"blk.{i}."
        out += [(f"{q}attn_norm.{f}", f"{p}norm1.norm.{f}") for f in fields]
        for src, dst in _BLOCK_LINEARS[:4]:
            out += [(f"{q}{dst}.weight", f"{p}{src}.weight"), (f"{q}{dst}.bias", f"{p}{src}.bias")]
        out += [(f"{q}ffn_norm.{f}", f"{p}norm2.norm.{f}") for f in fields]
        for src, dst in _BLOCK_LINEARS[4:]:
            out += [(f"{q}{dst}.weight", f"{p}{src}.weight"), (f"{q}{dst}.bias", f"{p}{src}.bias")]
    out += [(f"output_norm.{f}", f"norm_f.norm.{f}") for f in fields]
    return out


def gguf_tensors(state_dict, config):
    """(GGUF name, float32 numpy array) pairs for every exported tensor, in file order."""
    tied = state_dict["lm_head.weight"]
    if not torch.equal(tied, state_dict["tok_emb.weight"]):
        pg.fail("the classifier is not tied to the token embedding")
    return [(name, state_dict[key].detach().cpu().numpy().astype(np.float32))
            for name, key in tensor_map(config)]


def gguf_metadata(config, chars, name):
    """Ordered (key, Value) metadata pairs."""
    if "\n" not in chars:
        pg.fail("the vocabulary has no newline, which is the BOS token")
    return [
        ("general.architecture", g.Value(g.STRING, ARCH)),
        ("general.name", g.Value(g.STRING, name)),
        (f"{ARCH}.context_length", g.Value(g.UINT32, config["context"])),
        (f"{ARCH}.embedding_length", g.Value(g.UINT32, config["d"])),
        (f"{ARCH}.feed_forward_length", g.Value(g.UINT32, config["hidden"])),
        (f"{ARCH}.block_count", g.Value(g.UINT32, config["n_layer"])),
        (f"{ARCH}.attention.head_count", g.Value(g.UINT32, config["n_head"])),
        (f"{ARCH}.norm", g.Value(g.STRING, config["norm"])),
        (f"{ARCH}.norm_epsilon", g.Value(g.FLOAT32, pg.NORM_EPS)),
        (f"{ARCH}.activation", g.Value(g.STRING, "gelu")),
        ("tokenizer.ggml.model", g.Value(g.STRING, "passim-char")),
        ("tokenizer.ggml.tokens", g.Value(g.ARRAY, list(chars), elem=g.STRING)),
        ("tokenizer.ggml.bos_token_id", g.Value(g.UINT32, chars.index(pg.BOS_CHAR))),
    ]


def default_name(config):
    return "passim-ln-gpt" if config["norm"] == "layernorm" else "passim-bn-gpt"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", help="checkpoint written by train_gpt.py (.pt)")
    p.add_argument("output", help="GGUF file to write")
    p.add_argument("--name", default=None,
                   help="general.name (default: passim-ln-gpt or passim-bn-gpt)")
    args = p.parse_args()

    model, ckpt = pg.load_checkpoint(args.checkpoint)
    config = ckpt["config"]
    name = args.name or default_name(config)
    tensors = gguf_tensors(model.state_dict(), config)
    metadata = gguf_metadata(config, ckpt["chars"], name)
    out_dir = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(out_dir, exist_ok=True)
    g.write_gguf(args.output, metadata, tensors)
    n = sum(a.size for _, a in tensors)
    print(f"wrote {args.output}: {len(tensors)} tensors, {n} floats, "
          f"{os.path.getsize(args.output)} bytes")


if __name__ == "__main__":
    main()
