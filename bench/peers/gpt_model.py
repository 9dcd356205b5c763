"""The GPT recipe of bench/peers/gpt_torch.py as importable pieces: the model, its initial weights,
the AdamW it trains with and the learning-rate schedule (tests/data/w7_tiny/make_export.py builds
its tiny replay from them).

The model is nanoGPT's, with nanoGPT's parameter names (the names examples/gpt_char reads with
--replay and nn::gpt_parameters lists): pre-LayerNorm blocks with biases, fused q|k|v attention
with a causal mask, the tanh GELU, the lm_head tied to the token embedding, dropout 0. Linear
weights are (out, in) as torch stores them: y = x W^T + b.

Importing this module imports torch: a script that fixes thread counts sets them first.
"""
import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class GptShape:
    layers: int
    heads: int
    width: int
    context: int
    vocab: int


@dataclass(frozen=True)
class WarmupCosine:
    """nanoGPT's get_lr: a linear warm-up over `warmup` updates, a cosine down to min_lr at
    update decay_steps, min_lr after (the same arithmetic as nn::WarmupCosine)."""

    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup: int = 100
    decay_steps: int = 2000

    def at(self, i):
        if i < self.warmup:
            return self.lr * (i + 1) / (self.warmup + 1)
        if i > self.decay_steps:
            return self.min_lr
        ratio = (i - self.warmup) / (self.decay_steps - self.warmup)
        coeff = 0.5 * (1.0 + math.cos(math.pi * ratio))
        return self.min_lr + coeff * (self.lr - self.min_lr)


class CausalSelfAttention(torch.nn.Module):
    def __init__(self, s):
        super().__init__()
        self.c_attn = torch.nn.Linear(s.width, 3 * s.width)  # [q | k | v]
        self.c_proj = torch.nn.Linear(s.width, s.width)
        self.heads = s.heads

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class Mlp(torch.nn.Module):
    def __init__(self, s):
        super().__init__()
        self.c_fc = torch.nn.Linear(s.width, 4 * s.width)
        self.c_proj = torch.nn.Linear(4 * s.width, s.width)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(torch.nn.Module):
    def __init__(self, s):
        super().__init__()
        self.ln_1 = torch.nn.LayerNorm(s.width)
        self.attn = CausalSelfAttention(s)
        self.ln_2 = torch.nn.LayerNorm(s.width)
        self.mlp = Mlp(s)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt(torch.nn.Module):
    def __init__(self, s):
        super().__init__()
        self.shape = s
        self.transformer = torch.nn.ModuleDict(dict(
            wte=torch.nn.Embedding(s.vocab, s.width),
            wpe=torch.nn.Embedding(s.context, s.width),
            h=torch.nn.ModuleList(Block(s) for _ in range(s.layers)),
            ln_f=torch.nn.LayerNorm(s.width)))

    def logits(self, idx):
        tr = self.transformer
        x = tr.wte(idx) + tr.wpe(torch.arange(idx.shape[1]))
        for block in tr.h:
            x = block(x)
        return tr.ln_f(x) @ tr.wte.weight.t()  # the lm_head is the token embedding

    def forward(self, idx, targets):
        """The mean cross-entropy over every position of the batch."""
        logits = self.logits(idx)
        return F.cross_entropy(logits.view(-1, self.shape.vocab), targets.reshape(-1))


def init_weights(model, seed):
    """nanoGPT's init drawn with numpy: {name: float32 array} in named_parameters() order.

    Matrices and embeddings N(0, 0.02), each block's c_proj weights N(0, 0.02 / sqrt(2 layers)),
    drawn one after the other from default_rng([seed, 2]); biases 0, LayerNorm weights 1.
    """
    rng = np.random.default_rng([seed, 2])
    std_proj = 0.02 / math.sqrt(2 * model.shape.layers)
    out = {}
    for name, p in model.named_parameters():
        shape = tuple(p.shape)
        if p.dim() >= 2:
            std = std_proj if name.endswith("c_proj.weight") else 0.02
            out[name] = (rng.standard_normal(shape) * std).astype(np.float32)
        elif ".ln_" in name and name.endswith(".weight"):
            out[name] = np.ones(shape, np.float32)
        else:
            out[name] = np.zeros(shape, np.float32)
    return out


def load_weights(model, weights):
    with torch.no_grad():
        for name, p in model.named_parameters():
            w = weights[name]
            if w.shape != tuple(p.shape) or w.dtype != np.float32:
                raise ValueError(f"{name}: got {w.dtype} {w.shape}, the model has float32 "
                                 f"{tuple(p.shape)}")
            p.copy_(torch.from_numpy(np.ascontiguousarray(w)))


def decays(p):
    """Weight decay applies to the matrices and embeddings, not to biases and LayerNorms."""
    return p.dim() >= 2


def make_optimizer(model, lr, weight_decay=0.1):
    """torch's AdamW (betas 0.9, 0.99, eps 1e-8; its default for-loop implementation on CPU)."""
    params = list(model.parameters())
    groups = [{"params": [p for p in params if decays(p)], "weight_decay": weight_decay},
              {"params": [p for p in params if not decays(p)], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.99), eps=1e-8)
