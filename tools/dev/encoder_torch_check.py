#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the float reference of the random post-norm encoder against PyTorch.

The e2e test `EncoderFloat.DumpForTorch` writes the encoder built by `passim::random_encoder`
(runtime/include/passim/model/random_model.hpp): its config, every weight, a sequence of
seq_len tokens and the float backend's logits of the last position. This script rebuilds the
same encoder from torch.nn.TransformerEncoderLayer (post-norm: norm_first=False, exact erf
GELU, no mask, dropout 0), runs the sequence and compares the logits.

    encoder_torch_check.py <passim_e2e_tests binary>       # runs the dump test, then checks
    encoder_torch_check.py --dump <file.json>               # checks an existing dump

Needs PyTorch (Debian: python3-torch). Exit code 0 when the largest difference is below
--tol (1e-4 by default: float32 sums of at most 64 terms on logits of order 1), else 1.
A developer check, not part of CI.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run_dump(binary, path):
    env = dict(os.environ, PASSIM_ENCODER_DUMP=path)
    subprocess.run([binary, "--gtest_filter=EncoderFloat.DumpForTorch"], env=env, check=True,
                   stdout=subprocess.DEVNULL)


def torch_logits(d):
    import torch  # noqa: PLC0415 (only this function needs it)

    c = d["config"]
    dim, hidden, layers, vocab = c["dim"], c["hidden"], c["layers"], c["vocab"]

    def t(name, *shape):
        return torch.tensor(d[name], dtype=torch.float32).reshape(*shape)

    x = t("token_embedding", vocab, dim)[torch.tensor([int(v) for v in d["tokens"]])]
    x = (x + t("pos_embedding", c["seq_len"], dim)[: x.shape[0]]).unsqueeze(0)  # (1, n, dim)
    for l in range(layers):
        layer = torch.nn.TransformerEncoderLayer(
            dim, c["heads"], hidden, dropout=0.0, activation="gelu",
            layer_norm_eps=c["norm_eps"], batch_first=True, norm_first=False)
        with torch.no_grad():
            w = {k: t(k, layers, -1)[l] for k in
                 ("wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo", "w1", "b1", "w2", "b2",
                  "att_norm_gain", "att_norm_bias", "ffn_norm_gain", "ffn_norm_bias")}
            a = layer.self_attn
            a.in_proj_weight.copy_(torch.cat([w["wq"], w["wk"], w["wv"]]).reshape(3 * dim, dim))
            a.in_proj_bias.copy_(torch.cat([w["bq"], w["bk"], w["bv"]]))
            a.out_proj.weight.copy_(w["wo"].reshape(dim, dim))
            a.out_proj.bias.copy_(w["bo"])
            layer.linear1.weight.copy_(w["w1"].reshape(hidden, dim))
            layer.linear1.bias.copy_(w["b1"])
            layer.linear2.weight.copy_(w["w2"].reshape(dim, hidden))
            layer.linear2.bias.copy_(w["b2"])
            layer.norm1.weight.copy_(w["att_norm_gain"])
            layer.norm1.bias.copy_(w["att_norm_bias"])
            layer.norm2.weight.copy_(w["ffn_norm_gain"])
            layer.norm2.bias.copy_(w["ffn_norm_bias"])
        layer.eval()
        with torch.no_grad():
            x = layer(x)  # (1, n, dim): no mask, every row sees every position
    with torch.no_grad():
        return (x[0, -1] @ t("wcls", vocab, dim).T).tolist()  # (vocab) of the last position


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary", nargs="?", help="the passim_e2e_tests binary")
    ap.add_argument("--dump", help="an existing dump instead of running the binary")
    ap.add_argument("--tol", type=float, default=1e-4)
    args = ap.parse_args()
    try:
        import torch  # noqa: F401,PLC0415
    except ImportError:
        sys.exit("encoder_torch_check: PyTorch is missing (Debian: apt install python3-torch)")
    path = args.dump
    if path is None:
        if args.binary is None:
            sys.exit("encoder_torch_check: expected the passim_e2e_tests binary or --dump")
        path = os.path.join(tempfile.mkdtemp(), "encoder.json")
        run_dump(args.binary, path)
    with open(path) as f:
        d = json.load(f)
    ref = torch_logits(d)
    diff = max(abs(a - b) for a, b in zip(ref, d["logits"]))
    print(f"seed {d['config']['seed']}: {len(ref)} logits, largest difference {diff:.3g} "
          f"(tolerance {args.tol:g})")
    return 0 if diff < args.tol else 1


if __name__ == "__main__":
    sys.exit(main())
