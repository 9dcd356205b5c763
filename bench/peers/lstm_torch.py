"""The LSTM training step of examples/mnist_rnn in PyTorch (eager and torch.compile), f32, CPU:
the peer bench/lstm_step runs beside hedra, and the batches and weights its --replay follows.

The model is nn::lstm_classifier's: torch.nn.LSTM(I, 128, batch_first=True) over a batch of 64
images read as 28 steps of 28 pixels (--pixels: 784 steps of 1 pixel), then nn.Linear(128, 10)
on the last hidden state; F.cross_entropy, torch.optim.AdamW(lr 1e-3, weight decay 0.01 on every
parameter). The batches are synthetic (standard normal pixels, uniform labels, from
numpy's default_rng(seed)): the step time does not depend on the data.
A timed step is: forward, loss, backward, AdamW step, zero_grad, loss.item(). The step time is
the median of --steps steps after --warmup untimed ones (the first compiles under
torch.compile). Output, one line per implementation:
  lstm_step <rows|pixels> <impl> threads=T step_ms median=.. min=.. max=.. n=..
--export DIR writes, before training, the initial weights (<name>.npy, float32, the state
dict's names and layouts: lstm.weight_ih_l0 (4H, I), lstm.weight_hh_l0 (4H, H),
lstm.bias_ih_l0, lstm.bias_hh_l0, fc.weight, fc.bias), images.npy (N, B, T, I) float32 and
labels.npy (N, B) int64 of the first N = --export-steps batches, and config.json; then the
losses of N eager steps from those weights on those batches (losses.npy, float64).
Run with the peers' venv (scripts/install_bench_peers.sh):
  $PEERS_VENV/bin/python bench/peers/lstm_torch.py --threads 1 --steps 20
  $PEERS_VENV/bin/python bench/peers/lstm_torch.py --pixels --impls eager --export /tmp/lstm
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time


def classifier(torch, features, hidden, classes=10):
    """examples/mnist_rnn's model (nn::lstm_classifier): an LSTM over (steps, features), then a
    linear layer on the last layer's final h; parameters lstm.* and fc.*."""

    class Classifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(features, hidden, batch_first=True)
            self.fc = torch.nn.Linear(hidden, classes)

        def forward(self, x):
            _, (h, _) = self.lstm(x)
            return self.fc(h[-1])

    return Classifier()


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pixels", action="store_true", help="784 steps of 1 pixel")
    p.add_argument("--impls", default="eager,compile", help="eager, compile or both")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=20, help="timed steps per implementation")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--export", metavar="DIR", help="write weights, batches and losses here")
    p.add_argument("--export-steps", type=int, default=5)
    p.add_argument("--cache-dir", help="TorchInductor's cache folder (default: a fresh one)")
    return p.parse_args()


def main():
    a = parse()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = a.cache_dir or tempfile.mkdtemp(prefix="inductor-")
    import numpy as np
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    steps, features = (784, 1) if a.pixels else (28, 28)
    mode = "pixels" if a.pixels else "rows"

    Classifier = lambda: classifier(torch, features, a.hidden)

    def loss_of(model, x, y):
        return F.cross_entropy(model(x), y)

    rng = np.random.default_rng(a.seed)
    n_batches = max(a.export_steps if a.export else 0, 4)
    images = rng.standard_normal((n_batches, a.batch, steps, features)).astype(np.float32)
    labels = rng.integers(0, 10, (n_batches, a.batch)).astype(np.int64)
    xs = [torch.from_numpy(images[i]) for i in range(n_batches)]
    ys = [torch.from_numpy(labels[i]) for i in range(n_batches)]
    initial = Classifier().state_dict()

    if a.export:
        os.makedirs(a.export, exist_ok=True)
        for name, value in initial.items():
            np.save(os.path.join(a.export, name + ".npy"), value.numpy().astype(np.float32))
        np.save(os.path.join(a.export, "images.npy"), images[: a.export_steps])
        np.save(os.path.join(a.export, "labels.npy"), labels[: a.export_steps])
        model = Classifier()
        model.load_state_dict(initial)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        losses = []
        for i in range(a.export_steps):
            loss = loss_of(model, xs[i], ys[i])
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            losses.append(loss.item())
        np.save(os.path.join(a.export, "losses.npy"), np.array(losses, np.float64))
        with open(os.path.join(a.export, "config.json"), "w") as f:
            json.dump({"mode": mode, "steps": steps, "features": features, "hidden": a.hidden,
                       "batch": a.batch, "classes": 10, "optimizer": "adamw", "lr": 1e-3,
                       "weight_decay": 0.01, "parameters": list(initial.keys()),
                       "torch": torch.__version__}, f, indent=1)
        print(f"lstm_torch: wrote {a.export_steps} batches, the weights and the losses "
              f"{[round(v, 5) for v in losses]} to {a.export}", flush=True)

    for impl in [i for i in a.impls.split(",") if i]:
        if impl not in ("eager", "compile"):
            sys.exit(f"lstm_torch: --impls takes eager and compile, not {impl}")
        model = Classifier()
        model.load_state_dict(initial)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        fn = torch.compile(loss_of, dynamic=False) if impl == "compile" else loss_of
        times = []
        for i in range(a.warmup + a.steps):
            start = time.perf_counter()
            loss = fn(model, xs[i % n_batches], ys[i % n_batches])
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            loss.item()
            if i >= a.warmup:
                times.append((time.perf_counter() - start) * 1e3)
        print(f"lstm_step {mode} {impl} threads={a.threads} step_ms "
              f"median={statistics.median(times):.3f} min={min(times):.3f} "
              f"max={max(times):.3f} n={len(times)}", flush=True)


if __name__ == "__main__":
    main()
