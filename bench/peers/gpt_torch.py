"""The GPT training step of examples/gpt_char in PyTorch 2 (eager or torch.compile), f32, CPU:
the peer bench/gpt_side_by_side.sh runs beside hedra.

The recipe is the one examples/gpt_char and nn::GptConfig follow (docs/nn.md): nanoGPT's
character model on the Shakespeare corpus of scripts/get_shakespeare.sh (vocabulary = the sorted
characters of the file, train = its first 90 %), pre-LayerNorm blocks with biases, fused q|k|v
attention with a causal mask, the tanh GELU, the lm_head tied to the token embedding, dropout 0;
nanoGPT's init (N(0, 0.02), the projections N(0, 0.02 / sqrt(2 layers)), drawn with numpy from
default_rng([seed, 2]) in parameter order); AdamW (betas 0.9, 0.99, eps 1e-8, weight decay 0.1 on
matrices), gradients clipped to norm 1, nanoGPT's warmup + cosine learning rate; update i reads
the batch at row i of default_rng(seed).integers(0, n_train - T, (steps, B)).
  --config w7: 4 layers, 4 heads, width 128, context 64, batch 12 (0.8M parameters)
  --config w8: 6 layers, 6 heads, width 384, context 256, batch 8 (10.7M parameters)
A timed step is: batch gather, set lr, forward, backward, clip, AdamW, zero_grad, loss.item().
The step time is the median over the steps after the first three (compile and warm-up).
Output (one line each): the model, the loss of the first updates, and
  GPT <config> <impl> threads=T step_ms median=.. min=.. max=.. n=..
Run with the peers' venv (scripts/install_bench_peers.sh):
  $PEERS_VENV/bin/python bench/peers/gpt_torch.py --impl eager --threads 1 --steps 30
"""
import argparse
import math
import os
import statistics
import sys
import tempfile
import time

CONFIGS = {  # layers, heads, width, context, batch, lr_decay_iters
    "w7": (4, 4, 128, 64, 12, 2000),
    "w8": (6, 6, 384, 256, 8, 5000),
}


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", choices=sorted(CONFIGS), default="w7")
    p.add_argument("--impl", choices=["eager", "compile"], default="eager")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", default=os.path.join(
        os.environ.get("HEDRA_DATA", "/var/cache/hedra-data"), "shakespeare.txt"))
    p.add_argument("--cache-dir", default="", help="torch.compile's cache (default: a fresh one)")
    # Accepted for the command line of bench/gpt_side_by_side.sh; this peer does not evaluate.
    p.add_argument("--eval-every", type=int, default=0)
    p.add_argument("--eval-iters", type=int, default=1)
    return p.parse_args()


def main():
    a = parse()
    # Thread counts are fixed before torch is imported (its pools read them once).
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(a.threads)
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = str(a.threads)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = a.cache_dir or tempfile.mkdtemp(prefix="inductor-")
    import numpy as np
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(a.threads)
    layers, heads, width, context, batch, decay_iters = CONFIGS[a.config]
    if not os.path.exists(a.data):
        sys.exit(f"gpt_torch: {a.data} is missing (scripts/get_shakespeare.sh)")
    text = open(a.data, "rb").read().decode("ascii")
    chars = sorted(set(text))
    ids = {c: i for i, c in enumerate(chars)}
    data = np.frombuffer(bytes(ids[c] for c in text), dtype=np.uint8).astype(np.int64)
    train = torch.from_numpy(data[: (9 * len(data)) // 10].copy())
    vocab = len(chars)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = torch.nn.LayerNorm(width)
            self.c_attn = torch.nn.Linear(width, 3 * width)
            self.attn_proj = torch.nn.Linear(width, width)
            self.ln_2 = torch.nn.LayerNorm(width)
            self.c_fc = torch.nn.Linear(width, 4 * width)
            self.mlp_proj = torch.nn.Linear(4 * width, width)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(width, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.attn_proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class Gpt(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = torch.nn.Embedding(vocab, width)
            self.wpe = torch.nn.Embedding(context, width)
            self.blocks = torch.nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = torch.nn.LayerNorm(width)

        def forward(self, idx, targets):
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
            for blk in self.blocks:
                x = blk(x)
            logits = self.ln_f(x) @ self.wte.weight.t()
            return F.cross_entropy(logits.view(-1, vocab), targets.reshape(-1))

    model = Gpt()
    rng = np.random.default_rng([a.seed, 2])
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() < 2:  # biases 0 (torch's Linear draws them), LayerNorm weights 1
                p.fill_(1.0 if name.endswith("weight") else 0.0)
                continue
            std = 0.02 / math.sqrt(2 * layers) if name.endswith("proj.weight") else 0.02
            p.copy_(torch.from_numpy((rng.standard_normal(p.shape) * std).astype(np.float32)))
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99), eps=1e-8)
    offsets = np.random.default_rng(a.seed).integers(0, len(train) - context, (a.steps, batch))

    def lr_at(i):  # nanoGPT's get_lr
        if i < 100:
            return 1e-3 * (i + 1) / 101
        if i > decay_iters:
            return 1e-4
        return 1e-4 + 0.5 * (1 + math.cos(math.pi * (i - 100) / (decay_iters - 100))) * 9e-4

    loss_fn = model
    update = None
    lr_tensor = torch.tensor(1e-3)
    if a.impl == "compile":
        loss_fn = torch.compile(model, dynamic=False)
        for g in opt.param_groups:
            g["lr"] = lr_tensor  # a 0-dim tensor: the schedule causes no recompiles

        @torch.compile(dynamic=False)
        def update():
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()

    n_params = sum(p.numel() for p in model.parameters())
    print(f"# GPT {a.config} model: {layers} layers, {heads} heads, width {width}, context "
          f"{context}, batch {batch}, vocabulary {vocab}, params={n_params} torch "
          f"{torch.__version__} impl={a.impl} threads={a.threads}")
    times = []
    for i in range(a.steps):
        start = time.perf_counter()
        rows = torch.from_numpy(offsets[i])
        pos = rows[:, None] + torch.arange(context + 1)[None, :]
        window = train[pos]
        x, y = window[:, :-1], window[:, 1:]
        if a.impl == "compile":
            lr_tensor.fill_(lr_at(i))
        else:
            for g in opt.param_groups:
                g["lr"] = lr_at(i)
        loss = loss_fn(x, y)
        loss.backward()
        if update:
            update()
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        opt.zero_grad(set_to_none=True)
        value = loss.item()
        times.append(time.perf_counter() - start)
        if i < 5:
            print(f"GPT {a.config} {a.impl} threads={a.threads} loss_step={i} value={value!r}")
    steady = [t * 1e3 for t in times[3:]] or [t * 1e3 for t in times]
    print(f"GPT {a.config} {a.impl} threads={a.threads} batch={batch} block={context} step_ms "
          f"median={statistics.median(steady):.3f} min={min(steady):.3f} "
          f"max={max(steady):.3f} n={len(steady)} first_s={times[0]:.3f}")


if __name__ == "__main__":
    main()
