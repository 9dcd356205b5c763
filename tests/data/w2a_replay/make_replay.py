"""make_replay.py: PyTorch's training of the 784-300-100-10 MLP on Fashion-MNIST, written so that
tests/nn/test_replay.cpp can replay it step by step (the W2a recipe of the shared benchmarks).

The model is nn.Sequential(Linear, ReLU, Linear, ReLU, Linear) with PyTorch's default init after
torch.manual_seed(0); inputs are pixels / 255 flattened to 784; softmax cross-entropy (mean over
the batch); plain SGD, lr 0.1; batch 64; the epoch's order is torch.randperm(60000) from a
torch.Generator seeded 0. One thread, so the sums are in one order.

Writes, next to this script (or into --out):
  w2a_replay_seed0.npz  init_0/2/4.weight and .bias (PyTorch's layouts, f32), perm_epoch1 (i64),
                        first50_step_losses (f64): the loss of each of the epoch's first 50 steps
  w2a_replay.txt        the test accuracy and loss before and after the epoch

The committed files were written with Debian's PyTorch 1.13 on an AMD Zen core. Written again on
an AVX-512 Xeon, the weights and the order are the same bit for bit, the 50 losses differ by at
most 1.7e-7 relative (other kernels sum in another order) and the epoch's test accuracy is 0.8222
instead of 0.8202: the C++ replay allows 1e-4 and 0.005.

Run with a Python that has PyTorch and NumPy (Debian's python3-torch, or the peers' venv of
scripts/install_bench_peers.sh):
  python3 tests/data/w2a_replay/make_replay.py [--data /usr/share/datasets/fashion-mnist]
"""
import argparse
import gzip
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = (784, 300, 100, 10)
BATCH = 64
LR = 0.1
LOGGED_STEPS = 50


def read_idx(path):
    """An IDX file (gzip), as the MNIST format defines it: magic, dimensions, then bytes."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(directory):
    def images(name):
        return torch.from_numpy(read_idx(os.path.join(directory, name)).astype(np.float32)
                                .reshape(-1, 784) / np.float32(255.0))

    def labels(name):
        return torch.from_numpy(read_idx(os.path.join(directory, name)).astype(np.int64))

    return (images("train-images-idx3-ubyte.gz"), labels("train-labels-idx1-ubyte.gz"),
            images("t10k-images-idx3-ubyte.gz"), labels("t10k-labels-idx1-ubyte.gz"))


def make_mlp():
    layers = []
    for i in range(len(SIZES) - 1):
        layers.append(nn.Linear(SIZES[i], SIZES[i + 1]))
        if i < len(SIZES) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def evaluate(model, x, y):
    with torch.no_grad():
        logits = model(x)
        return (logits.argmax(1) == y).float().mean().item(), F.cross_entropy(logits, y).item()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--out", default=HERE)
    a = p.parse_args()
    torch.set_num_threads(1)
    xtr, ytr, xte, yte = load(a.data)

    torch.manual_seed(0)
    model = make_mlp()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    archive = {f"init_{k}": v.detach().numpy().copy() for k, v in model.state_dict().items()}

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    acc0, loss0 = evaluate(model, xte, yte)
    perm = torch.randperm(xtr.shape[0], generator=torch.Generator().manual_seed(0))
    archive["perm_epoch1"] = perm.numpy().copy()
    losses = []
    for i in range(0, xtr.shape[0], BATCH):
        idx = perm[i : i + BATCH]
        loss = step(xtr[idx], ytr[idx])
        if len(losses) < LOGGED_STEPS:
            losses.append(loss)
    archive["first50_step_losses"] = np.array(losses)
    acc1, loss1 = evaluate(model, xte, yte)

    np.savez(os.path.join(a.out, "w2a_replay_seed0.npz"), **archive)
    with open(os.path.join(a.out, "w2a_replay.txt"), "w") as f:
        f.write(f"# make_replay.py: torch={torch.__version__} numpy={np.__version__} threads=1\n")
        f.write(f"epoch=0 test_acc={acc0:.4f} test_loss={loss0:.4f}\n")
        f.write(f"epoch=1 test_acc={acc1:.4f} test_loss={loss1:.4f}\n")
    print(f"wrote {a.out}/w2a_replay_seed0.npz and w2a_replay.txt: epoch=1 test_acc={acc1:.4f}")


if __name__ == "__main__":
    main()
