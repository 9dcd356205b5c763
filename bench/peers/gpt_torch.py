"""The GPT training step of examples/gpt_char in PyTorch 2 (eager or torch.compile), f32, CPU:
the peer bench/gpt_side_by_side.sh runs beside hedra, and the run gpt_char --replay follows.

The recipe is the one examples/gpt_char and nn::GptConfig follow (docs/nn.md): nanoGPT's
character model on the Shakespeare corpus of scripts/get_shakespeare.sh (vocabulary = the sorted
characters of the file, train = its first 90 %, val = the rest), pre-LayerNorm blocks with
biases, fused q|k|v attention with a causal mask, the tanh GELU, the lm_head tied to the token
embedding, dropout 0; nanoGPT's init (N(0, 0.02), the projections N(0, 0.02 / sqrt(2 layers)),
drawn with numpy from default_rng([seed, 2]) in parameter order); AdamW (betas 0.9, 0.99,
eps 1e-8, weight decay 0.1 on matrices), gradients clipped to norm 1, nanoGPT's warmup + cosine
learning rate (bench/peers/gpt_model.py holds these pieces); update i reads the batch at row i
of default_rng(seed).integers(0, n_train - T, (steps, B)).
  --config w7: 4 layers, 4 heads, width 128, context 64, batch 12 (0.8M parameters)
  --config w8: 6 layers, 6 heads, width 384, context 256, batch 8 (10.7M parameters)
A timed step is: batch gather, set lr, forward, backward, clip, AdamW, zero_grad, loss.item().
The step time is the median over the steps after the first three (compile and warm-up).
Output (one line each): the model, the loss of the first updates, and
  GPT <config> <impl> threads=T step_ms median=.. min=.. max=.. n=..
--export DIR also writes what examples/gpt_char --replay DIR reads: before training the initial
weights (<parameter name>.npy, float32, torch's layouts and nanoGPT's names; the tied lm_head has
no file of its own), params.txt (name, shape, weight decay), offsets.npy (steps, B) int64, lr.npy
(steps,) float64, the evaluation offsets eval_val_offsets.npy and eval_train_offsets.npy
(--eval-iters, B) int64 (from default_rng([seed, 1]), val's drawn first), vocab.txt ("<id> <code
point> <JSON string>" a line; with --vocab N instead tokens.npy, the synthetic stream of ids
split as the text is) and config.json; after training losses.npy (steps,) float64 and
evals.json: the mean val and train loss of those batches (eager, no_grad) before the first
update, every --eval-every updates and after the last. Without --export nothing is evaluated.
--autocast bf16 runs every forward pass under torch.autocast("cpu", dtype=torch.bfloat16) (the
mixed precision gpt_char --precision bf16 follows; config.json records it).
Run with the peers' venv (scripts/install_bench_peers.sh):
  $PEERS_VENV/bin/python bench/peers/gpt_torch.py --impl eager --threads 1 --steps 30
  $PEERS_VENV/bin/python bench/peers/gpt_torch.py --steps 20 --eval-every 0 --export /tmp/w7
"""
import argparse
import contextlib
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time

SYNTHETIC_TOKENS = 200_000  # the stream of --vocab N (tokens.npy in an export)

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
    p.add_argument("--export", metavar="DIR", default="",
                   help="write the replay files of examples/gpt_char --replay to DIR")
    # Evaluation happens with --export only (as gpt_char's flags: 0 = before and after).
    p.add_argument("--eval-every", type=int, default=250,
                   help="with --export: evaluate every N updates (0: before the first and after "
                        "the last only)")
    p.add_argument("--eval-iters", type=int, default=20,
                   help="with --export: batches per split and evaluation")
    p.add_argument("--autocast", choices=["none", "bf16"], default="none",
                   help="bf16: forward passes under torch.autocast on the CPU")
    p.add_argument("--vocab", type=int, default=0,
                   help="> 0: a synthetic stream of token ids below VOCAB (50257: GPT-2's) in "
                        "place of the text's characters")
    a = p.parse_args()
    if a.vocab < 0 or a.vocab == 1:
        p.error("--vocab must be 0 (the text's characters) or at least 2")
    if a.steps < 1 or a.eval_every < 0 or a.eval_iters < 1:
        p.error("--steps and --eval-iters must be positive, --eval-every not negative")
    return a


def write_export_inputs(directory, a, model, weights, offsets, schedule, lrs, eval_val,
                        eval_train, chars, corpus, np, torch):
    """Everything gpt_char --replay reads that exists before training."""
    os.makedirs(directory, exist_ok=True)
    path = lambda name: os.path.join(directory, name)  # noqa: E731
    with open(path("params.txt"), "w") as f:
        for name, p in model.named_parameters():
            np.save(path(name + ".npy"), weights[name])
            decay = 0.1 if p.dim() >= 2 else 0.0
            f.write(f"{name} {'x'.join(str(n) for n in p.shape)} {decay}\n")
    np.save(path("offsets.npy"), offsets)
    np.save(path("lr.npy"), lrs)
    np.save(path("eval_val_offsets.npy"), eval_val)
    np.save(path("eval_train_offsets.npy"), eval_train)
    if chars is None:  # a synthetic stream: gpt_char reads the ids themselves
        np.save(path("tokens.npy"), corpus.pop("tokens"))
    else:
        with open(path("vocab.txt"), "w") as f:
            f.writelines(f"{i} {ord(c)} {json.dumps(c)}\n" for i, c in enumerate(chars))
    s = model.shape
    recipe = dict(n_layer=s.layers, n_head=s.heads, n_embd=s.width, block_size=s.context,
                  batch_size=offsets.shape[1], dropout=0.0, bias=True, learning_rate=schedule.lr,
                  min_lr=schedule.min_lr, warmup_iters=schedule.warmup,
                  lr_decay_iters=schedule.decay_steps, beta1=0.9, beta2=0.99, weight_decay=0.1,
                  eps=1e-8, grad_clip=1.0, ln_eps=1e-5, gelu="tanh")  # nanoGPT's names
    with open(path("config.json"), "w") as f:
        json.dump({"workload": a.config.upper(), "model": recipe, "vocab_size": s.vocab,
                   "seed": a.seed, "steps": len(offsets), "eval_iters": a.eval_iters,
                   "eval_every": a.eval_every, "impl": a.impl, "threads": a.threads,
                   "autocast": a.autocast,
                   "torch": torch.__version__,
                   "corpus": os.path.basename(a.data) if chars is not None else "synthetic",
                   **corpus,
                   "split": "train = ids[:(9*n)//10], val = ids[(9*n)//10:]",
                   "lm_head": "tied to transformer.wte.weight",
                   "params": sum(p.numel() for p in model.parameters())}, f, indent=1)
        f.write("\n")


def main():
    a = parse()
    # Thread counts are fixed before torch is imported (its pools read them once).
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(a.threads)
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = str(a.threads)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = a.cache_dir or tempfile.mkdtemp(prefix="inductor-")
    import numpy as np
    import torch

    import gpt_model

    torch.set_num_threads(a.threads)
    layers, heads, width, context, batch, decay_iters = CONFIGS[a.config]
    if a.vocab > 0:
        # Token ids drawn uniformly from a fixed seed: the model's sizes and a step's work are a
        # large vocabulary's (the embedding's gather, the tied head's logits), without a corpus.
        raw, chars, vocab = None, None, a.vocab
        data = np.random.default_rng([a.seed, 3]).integers(0, vocab, SYNTHETIC_TOKENS)
    else:
        if not os.path.exists(a.data):
            sys.exit(f"gpt_torch: {a.data} is missing (scripts/get_shakespeare.sh)")
        raw = open(a.data, "rb").read()
        text = raw.decode("ascii")
        chars = sorted(set(text))
        ids = {c: i for i, c in enumerate(chars)}
        data = np.frombuffer(bytes(ids[c] for c in text), dtype=np.uint8).astype(np.int64)
        vocab = len(chars)
    n_train = (9 * len(data)) // 10
    train = torch.from_numpy(data[:n_train].copy())
    val = torch.from_numpy(data[n_train:].copy())

    model = gpt_model.Gpt(gpt_model.GptShape(layers, heads, width, context, vocab))
    weights = gpt_model.init_weights(model, a.seed)
    gpt_model.load_weights(model, weights)
    opt = gpt_model.make_optimizer(model, 1e-3)
    offsets = np.random.default_rng(a.seed).integers(0, len(train) - context, (a.steps, batch))
    schedule = gpt_model.WarmupCosine(1e-3, 1e-4, 100, decay_iters)
    lrs = np.array([schedule.at(i) for i in range(a.steps)], np.float64)

    if a.export:
        eval_rng = np.random.default_rng([a.seed, 1])
        eval_val = eval_rng.integers(0, len(val) - context, (a.eval_iters, batch))
        eval_train = eval_rng.integers(0, len(train) - context, (a.eval_iters, batch))
        if raw is None:
            corpus = {"tokens": data, "n_train": n_train, "n_val": len(data) - n_train,
                      "tokens_drawn": f"default_rng([seed, 3]).integers(0, {vocab}, "
                                      f"{SYNTHETIC_TOKENS})"}
        else:
            corpus = {"corpus_sha256": hashlib.sha256(raw).hexdigest(),
                      "corpus_bytes": len(raw), "n_train": n_train,
                      "n_val": len(data) - n_train}
        write_export_inputs(a.export, a, model, weights, offsets, schedule, lrs, eval_val,
                            eval_train, chars, corpus, np, torch)

    def windows(split, rows):
        pos = torch.from_numpy(rows)[:, None] + torch.arange(context + 1)[None, :]
        window = split[pos]
        return window[:, :-1], window[:, 1:]

    def autocast():
        if a.autocast == "bf16":
            return torch.autocast("cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    @torch.no_grad()
    def evaluate():  # the eager model in both impls
        model.eval()
        with autocast():
            means = {name: float(np.mean([model(*windows(split, rows)).item() for rows in offs]))
                     for name, split, offs in (("val", val, eval_val),
                                               ("train", train, eval_train))}
        model.train()
        return means

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
    tag = f"GPT {a.config} {a.impl} threads={a.threads}"
    evals = []

    def record_evaluation(step):
        e = evaluate()
        evals.append({"step": step, **e})
        print(f"{tag} step={step} train_loss={e['train']:.6f} val_loss={e['val']:.6f}")

    if a.export:
        record_evaluation(0)
    times, losses = [], []
    for i in range(a.steps):
        start = time.perf_counter()
        x, y = windows(train, offsets[i])
        if a.impl == "compile":
            lr_tensor.fill_(float(lrs[i]))
        else:
            for g in opt.param_groups:
                g["lr"] = float(lrs[i])
        with autocast():
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
        losses.append(value)
        if i < 5:
            print(f"{tag} loss_step={i} value={value!r}")
        done = i + 1
        if a.export and (done == a.steps or (a.eval_every > 0 and done % a.eval_every == 0)):
            record_evaluation(done)
    steady = [t * 1e3 for t in times[3:]] or [t * 1e3 for t in times]
    print(f"{tag} batch={batch} block={context} step_ms "
          f"median={statistics.median(steady):.3f} min={min(steady):.3f} "
          f"max={max(steady):.3f} n={len(steady)} first_s={times[0]:.3f}")
    if a.export:
        np.save(os.path.join(a.export, "losses.npy"), np.array(losses, np.float64))
        with open(os.path.join(a.export, "evals.json"), "w") as f:
            json.dump(evals, f)
        print(f"# GPT {a.config} export: {a.export} holds the initial weights, {a.steps} steps' "
              f"offsets, learning rates and losses, {a.eval_iters} evaluation batches per split "
              f"and {len(evals)} evaluations")


if __name__ == "__main__":
    main()
