"""Shared pieces of the Passim character-level GPT scripts.

This module holds the model definition, the fixed data split and vocabulary, and the
checkpoint loader used by ``train_gpt.py``, ``export_gguf.py``, ``gguf_check.py`` and
``sample_gpt.py``.

The model is a small pre-norm GPT-2 style decoder:

* token embedding (vocab, d) and learned position embedding (context, d);
* ``n_layer`` blocks, each ``x = x + out_proj(attn(norm1(x)))`` then
  ``x = x + down(gelu(up(norm2(x))))``;
* separate q, k, v linears with bias, causal multi-head attention with scale
  1/sqrt(head_size), exact (erf) GELU, no dropout;
* a final norm, then a classifier without bias whose weight is the token embedding.

The norm is either ``nn.LayerNorm(d, eps=1e-5)`` or ``nn.BatchNorm1d(d, eps=1e-5)``
with statistics over (batch, time); in eval mode BatchNorm uses its running statistics.
"""

import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def data_dir():
    """The shared data folder: $PASSIM_DATA (relative to the repository if not absolute),
    else ../shared/data next to the repository, as in the top-level CMakeLists.txt."""
    return os.path.normpath(os.path.join(REPO_ROOT,
                                         os.environ.get("PASSIM_DATA", "../shared/data")))


DEFAULT_DATA = os.path.join(data_dir(), "text", "tinyshakespeare.txt")
DEFAULT_OUT_DIR = "/tmp/passim-models"

# Shape shared by both models.
N_EMBD = 64
N_LAYER = 4
N_HEAD = 4
CONTEXT = 128
FFN_HIDDEN = 4 * N_EMBD
NORM_EPS = 1e-5
TRAIN_FRACTION = 0.9
BOS_CHAR = "\n"


def fail(message):
    """Print an error message to stderr and exit with status 1."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def require_file(path, what):
    """Exit with a clear message if ``path`` is not a readable file."""
    if not os.path.isfile(path):
        fail(f"{what} not found: {path}")


def load_text(path):
    """Read the training text as UTF-8 and return it as a string."""
    require_file(path, "training text")
    with open(path, "r", encoding="utf-8") as f:
        return f.read()


class CharData:
    """Vocabulary and fixed 90/10 split of a text file.

    The vocabulary is the sorted set of characters of the whole file. The first
    ``int(0.9 * len(text))`` characters are the training split, the rest validation.
    """

    def __init__(self, path):
        self.path = path
        self.text = load_text(path)
        self.chars = sorted(set(self.text))
        self.stoi = {c: i for i, c in enumerate(self.chars)}
        ids = torch.tensor([self.stoi[c] for c in self.text], dtype=torch.long)
        self.split = int(TRAIN_FRACTION * len(ids))
        self.train = ids[: self.split]
        self.val = ids[self.split:]

    @property
    def vocab_size(self):
        return len(self.chars)

    def encode(self, s):
        """Map a string to a list of token ids (every character must be in the vocabulary)."""
        missing = sorted(set(c for c in s if c not in self.stoi))
        if missing:
            fail(f"characters not in the vocabulary: {missing!r}")
        return [self.stoi[c] for c in s]

    def decode(self, ids):
        """Map token ids back to a string."""
        return "".join(self.chars[i] for i in ids)


def val_windows(val, context=CONTEXT):
    """The whole validation split cut into non-overlapping windows.

    Window i has inputs ``val[i*context : (i+1)*context]`` and targets shifted by one
    character; the last partial window is dropped. Returns (x, y) of shape (n, context).
    """
    n = (len(val) - 1) // context
    x = torch.stack([val[i * context: (i + 1) * context] for i in range(n)])
    y = torch.stack([val[i * context + 1: (i + 1) * context + 1] for i in range(n)])
    return x, y


def random_windows(data, count, generator, context=CONTEXT):
    """``count`` random windows of ``context`` characters (with next-character targets)."""
    starts = torch.randint(len(data) - context - 1, (count,), generator=generator)
    x = torch.stack([data[s: s + context] for s in starts.tolist()])
    y = torch.stack([data[s + 1: s + context + 1] for s in starts.tolist()])
    return x, y


class ChannelNorm(nn.Module):
    """LayerNorm or BatchNorm1d over the channel dimension of a (B, T, C) tensor.

    The parameters are stored in ``self.norm`` so that both variants have the state-dict
    keys ``norm.weight`` and ``norm.bias`` (BatchNorm adds ``norm.running_mean``,
    ``norm.running_var`` and ``norm.num_batches_tracked``).
    """

    def __init__(self, kind, d, eps=NORM_EPS):
        super().__init__()
        self.kind = kind
        if kind == "layernorm":
            self.norm = nn.LayerNorm(d, eps=eps)
        elif kind == "batchnorm":
            self.norm = nn.BatchNorm1d(d, eps=eps)
        else:
            raise ValueError(f"unknown norm {kind!r}")

    def forward(self, x):
        if self.kind == "layernorm":
            return self.norm(x)
        # BatchNorm1d expects (B, C, T) and normalises each channel over (B, T).
        return self.norm(x.transpose(1, 2)).transpose(1, 2)


class CausalSelfAttention(nn.Module):
    """Causal multi-head attention with separate q, k, v and output linears (all biased)."""

    def __init__(self, d, n_head, context):
        super().__init__()
        self.n_head = n_head
        self.head_size = d // n_head
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)
        mask = torch.tril(torch.ones(context, context, dtype=torch.bool))
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        b, t, d = x.shape
        h, hs = self.n_head, self.head_size
        q = self.q(x).view(b, t, h, hs).transpose(1, 2)
        k = self.k(x).view(b, t, h, hs).transpose(1, 2)
        v = self.v(x).view(b, t, h, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        att = att.masked_fill(~self.mask[:t, :t], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        return self.out_proj(y)


class Block(nn.Module):
    """Pre-norm transformer block."""

    def __init__(self, norm, d, n_head, context, hidden):
        super().__init__()
        self.norm1 = ChannelNorm(norm, d)
        self.attn = CausalSelfAttention(d, n_head, context)
        self.norm2 = ChannelNorm(norm, d)
        self.up = nn.Linear(d, hidden)
        self.gelu = nn.GELU()  # exact erf GELU
        self.down = nn.Linear(hidden, d)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.down(self.gelu(self.up(self.norm2(x))))
        return x


class GPT(nn.Module):
    """Character-level GPT with a tied, bias-free classifier."""

    def __init__(self, vocab_size, norm, d=N_EMBD, n_layer=N_LAYER, n_head=N_HEAD,
                 context=CONTEXT, hidden=FFN_HIDDEN):
        super().__init__()
        self.config = dict(vocab_size=vocab_size, norm=norm, d=d, n_layer=n_layer,
                           n_head=n_head, context=context, hidden=hidden)
        self.context = context
        self.tok_emb = nn.Embedding(vocab_size, d)
        self.pos_emb = nn.Embedding(context, d)
        self.blocks = nn.ModuleList(
            [Block(norm, d, n_head, context, hidden) for _ in range(n_layer)])
        self.norm_f = ChannelNorm(norm, d)
        self.lm_head = nn.Linear(d, vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight  # tied classifier
        self._init_weights(n_layer)

    def _init_weights(self, n_layer):
        """GPT-2 style init: N(0, 0.02) weights, zero biases, scaled residual projections."""
        for name, p in self.named_parameters():
            if name.endswith(".bias"):
                nn.init.zeros_(p)
            elif "norm" in name:
                nn.init.ones_(p)
            elif name.endswith("out_proj.weight") or name.endswith("down.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))
            else:
                nn.init.normal_(p, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        """Return (logits, loss); ``loss`` is None when ``targets`` is None."""
        b, t = idx.shape
        if t > self.context:
            raise ValueError(f"sequence of {t} tokens is longer than the context {self.context}")
        pos = torch.arange(t, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)[None]
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.norm_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss

    def num_parameters(self):
        """Number of trainable parameters (the tied classifier counted once)."""
        return sum(p.numel() for p in self.parameters())

    @torch.no_grad()
    def generate(self, idx, n_new, temperature=1.0, greedy=False, generator=None):
        """Append ``n_new`` tokens to ``idx`` (shape (1, t)), cropping to the context."""
        for _ in range(n_new):
            logits, _ = self(idx[:, -self.context:])
            logits = logits[:, -1, :]
            if greedy:
                nxt = logits.argmax(dim=-1, keepdim=True)
            else:
                probs = F.softmax(logits / temperature, dim=-1)
                nxt = torch.multinomial(probs, 1, generator=generator)
            idx = torch.cat([idx, nxt], dim=1)
        return idx


@torch.no_grad()
def mean_loss(model, x, y, batch=64):
    """Mean next-character cross-entropy of ``model`` over windows (x, y), eval mode."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for i in range(0, len(x), batch):
        xb, yb = x[i: i + batch], y[i: i + batch]
        logits, _ = model(xb)
        total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), yb.reshape(-1),
                                 reduction="sum").item()
        count += yb.numel()
    model.train(was_training)
    return total / count


def load_checkpoint(path):
    """Load a checkpoint written by ``train_gpt.py``; return (model in eval mode, checkpoint dict)."""
    require_file(path, "checkpoint")
    ckpt = torch.load(path, map_location="cpu")
    for key in ("config", "state_dict", "chars"):
        if key not in ckpt:
            fail(f"{path} is not a train_gpt.py checkpoint (no '{key}')")
    model = GPT(**ckpt["config"])
    model.load_state_dict(ckpt["state_dict"])
    model.eval()
    return model, ckpt
