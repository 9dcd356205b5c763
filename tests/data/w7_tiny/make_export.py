"""make_export.py: a tiny replay of bench/peers/gpt_torch.py for tests/nn/test_gpt_replay.cpp.

The peer's model, init, optimizer and schedule (bench/peers/gpt_model.py) at a tiny size: 1 layer,
2 heads, width 16, context 16, batch 2, the vocabulary of a short built-in text. It trains 10
steps as the peer's eager step does (set lr; loss = model(x, y); loss.backward();
clip_grad_norm_; AdamW step; zero_grad) on 1 thread and writes, beside this script:
  <parameter name>.npy   float32 initial weights, torch (out, in) layouts, named_parameters() order
  tokens.npy, targets.npy  int64 (steps, batch, block): the batch of every step
  lr.npy                 float64 (steps,): the learning rate of every step (this file's schedule)
  losses.npy             float64 (steps,): the loss of every step (before its update)
  grad_norms.npy         float64 (steps,): clip_grad_norm_'s total norm of every step
  config.json            the configuration and the vocabulary
With --autocast bf16 it trains the same 10 steps with every forward pass under
torch.autocast("cpu", dtype=torch.bfloat16) and writes only losses_bf16.npy and
grad_norms_bf16.npy (the weights and batches are the f32 run's).
Run: /opt/hedra-peers/bin/python tests/data/w7_tiny/make_export.py [--out DIR] [--autocast bf16]
"""
import argparse
import contextlib
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.normpath(os.path.join(HERE, "../../../bench/peers")))
import gpt_model  # noqa: E402

STEPS = 10
SEED = 0
# The peer's recipe; the schedule and the clip are shrunk so that 10 steps cover the warm-up, the
# cosine and min_lr, and clipping acts on some steps and not on others.
CFG = dict(n_layer=1, n_head=2, n_embd=16, block_size=16, batch_size=2, dropout=0.0, bias=True,
           learning_rate=1e-2, min_lr=1e-3, warmup_iters=3, lr_decay_iters=8, beta1=0.9, beta2=0.99,
           weight_decay=0.1, eps=1e-8, grad_clip=1.0, ln_eps=1e-5, gelu="tanh")
TEXT = ("Shall I compare thee to a summer's day?\n"
        "Thou art more lovely and more temperate:\n"
        "Rough winds do shake the darling buds of May,\n"
        "And summer's lease hath all too short a date;\n"
        "Sometime too hot the eye of heaven shines,\n"
        "And often is his gold complexion dimm'd;\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=HERE)
    p.add_argument("--autocast", choices=["none", "bf16"], default="none")
    a = p.parse_args()
    torch.set_num_threads(1)

    chars = sorted(set(TEXT.encode("ascii")))
    ids = np.array([chars.index(b) for b in TEXT.encode("ascii")], np.int64)
    B, T = CFG["batch_size"], CFG["block_size"]
    offsets = np.random.default_rng(SEED).integers(0, len(ids) - T, size=(STEPS, B), dtype=np.int64)
    idx = offsets[:, :, None] + np.arange(T)
    tokens, targets = ids[idx], ids[idx + 1]

    model = gpt_model.Gpt(gpt_model.GptShape(layers=CFG["n_layer"], heads=CFG["n_head"],
                                             width=CFG["n_embd"], context=T, vocab=len(chars)))
    w0 = gpt_model.init_weights(model, SEED)
    gpt_model.load_weights(model, w0)
    opt = gpt_model.make_optimizer(model, CFG["learning_rate"], CFG["weight_decay"])
    schedule = gpt_model.WarmupCosine(CFG["learning_rate"], CFG["min_lr"], CFG["warmup_iters"],
                                      CFG["lr_decay_iters"])
    params = list(model.parameters())
    lrs = np.array([schedule.at(i) for i in range(STEPS)], np.float64)
    losses, norms = [], []
    for i in range(STEPS):
        for g in opt.param_groups:
            g["lr"] = float(lrs[i])
        autocast = (torch.autocast("cpu", dtype=torch.bfloat16) if a.autocast == "bf16"
                    else contextlib.nullcontext())
        with autocast:
            loss = model(torch.from_numpy(tokens[i]), torch.from_numpy(targets[i]))
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(params, CFG["grad_clip"])))
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
        print(f"step {i}: lr {lrs[i]:.6g} loss {losses[-1]!r} grad_norm {norms[-1]:.6g}")

    os.makedirs(a.out, exist_ok=True)
    if a.autocast == "bf16":
        for name, values in (("losses_bf16", losses), ("grad_norms_bf16", norms)):
            np.save(os.path.join(a.out, name + ".npy"), np.array(values, np.float64))
        print(f"wrote losses_bf16.npy and grad_norms_bf16.npy to {a.out}")
        return
    for name, _ in model.named_parameters():
        np.save(os.path.join(a.out, name + ".npy"), w0[name])
    for name, arr in (("tokens", tokens), ("targets", targets), ("lr", lrs),
                      ("losses", np.array(losses, np.float64)), ("grad_norms", np.array(norms, np.float64))):
        np.save(os.path.join(a.out, name + ".npy"), arr)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump({"model": CFG, "vocab_size": len(chars), "vocab": bytes(chars).decode("ascii"),
                   "steps": STEPS, "seed": SEED, "torch": torch.__version__,
                   "source": "bench/peers/gpt_model.py's Gpt, init_weights, WarmupCosine, "
                             "make_optimizer"}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(w0)} weight files and the replay arrays to {a.out}")


if __name__ == "__main__":
    main()
