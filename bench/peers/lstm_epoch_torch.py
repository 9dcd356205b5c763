"""One epoch of examples/mnist_rnn in PyTorch (eager, f32, CPU) on Fashion-MNIST, from weights and
in a batch order that examples/mnist_rnn can load, so both train the same epoch.

The model is nn::lstm_classifier's: torch.nn.LSTM(28, 128, batch_first=True) over images read as
28 steps of 28 pixels, then nn.Linear(128, 10) on the last hidden state; F.cross_entropy,
torch.optim.AdamW with mnist_rnn's defaults (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay
0.01 on every parameter: PyTorch's defaults too, spelled out so that they stay equal), batch 64,
the last partial batch included. Inputs as mnist_training.hpp prepares them: pixels / 255, then
standardized with the training set's mean and standard deviation (computed in double).
--export DIR writes, before training:
  <name>.npy   the initial state dict (torch.manual_seed(--seed), PyTorch's default init),
               float32, the names nn::lstm_classifier uses (lstm.weight_ih_l0, ..., fc.bias)
  order.npy    int64 (60000,): the training examples in the order the epoch takes them
               (numpy default_rng(--seed).permutation); batch s is order[64 s : 64 (s + 1)]
  losses.npy   float64: the loss of every step, written after the epoch
  config.json
and then trains. The last line is parseable:
  lstm_epoch_torch test_accuracy=<x> epoch_seconds=<y> mean_loss=<z> threads=<t>
Two f32 runs of the same epoch part ways after about 100 steps (rounding differences grow), so
their accuracies differ by what any change of rounding gives: --nudge N (scale the weights by a
few ulps after exporting them) shows that spread within PyTorch itself.
Run with the peers' venv (scripts/install_bench_peers.sh):
  $PEERS_VENV/bin/python bench/peers/lstm_epoch_torch.py --threads 1 --export /tmp/lstm-epoch
  build/examples/mnist_rnn --threads 1 --init /tmp/lstm-epoch --batch-order /tmp/lstm-epoch/order.npy
"""
import argparse
import gzip
import json
import os
import time

import numpy as np

from lstm_torch import classifier  # the same model (this script's directory is on sys.path)


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--export", metavar="DIR", required=True, help="write weights and order here")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist",
                   help="MNIST-format folder (idx files, optionally .gz)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=0, help="train on N examples of the order only")
    p.add_argument("--nudge", type=int, default=0,
                   help="train from the exported weights times (1 + N * 2^-23): N != 0 measures "
                        "how far f32 rounding alone moves the epoch's accuracy")
    return p.parse_args()


def read_idx(directory, stem):
    # The same lookup as nn::find_mnist_file: the plain file, else the .gz beside it.
    path = os.path.join(directory, stem)
    opener = open
    if not os.path.exists(path):
        path += ".gz"
        opener = gzip.open
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims))
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def load_split(directory, train):
    prefix = "train" if train else "t10k"
    images = read_idx(directory, f"{prefix}-images-idx3-ubyte")
    labels = read_idx(directory, f"{prefix}-labels-idx1-ubyte")
    # hedra's idx reader: static_cast<float>(pixel) / 255.0f
    return images.astype(np.float32) / np.float32(255.0), labels.astype(np.int64)


def standardize(images, mean, std):
    # nn::standardize: float((x - mean) * (1 / std)) in double
    return ((images.astype(np.float64) - mean) * (1.0 / std)).astype(np.float32)


def main():
    a = parse()
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    train_x, train_y = load_split(a.data, True)
    test_x, test_y = load_split(a.data, False)
    flat = train_x.astype(np.float64).ravel()
    mean = flat.mean()
    std = np.sqrt(((flat - mean) ** 2).mean())
    train_x, test_x = standardize(train_x, mean, std), standardize(test_x, mean, std)
    steps, features = train_x.shape[1], train_x.shape[2]

    model = classifier(torch, features, a.hidden)
    order = np.random.default_rng(a.seed).permutation(len(train_y)).astype(np.int64)
    if a.limit > 0:
        order = order[: a.limit]
    os.makedirs(a.export, exist_ok=True)
    for name, value in model.state_dict().items():
        np.save(os.path.join(a.export, name + ".npy"), value.numpy().astype(np.float32))
    np.save(os.path.join(a.export, "order.npy"), order)
    lr, betas, eps, weight_decay = 1e-3, (0.9, 0.999), 1e-8, 0.01
    with open(os.path.join(a.export, "config.json"), "w") as f:
        json.dump({"steps": steps, "features": features, "hidden": a.hidden, "batch": a.batch,
                   "classes": 10, "optimizer": "adamw", "lr": lr, "betas": betas, "eps": eps,
                   "weight_decay": weight_decay, "seed": a.seed, "examples": len(order),
                   "pixel_mean": mean, "pixel_std": std,
                   "parameters": list(model.state_dict().keys()),
                   "torch": torch.__version__}, f, indent=1)
    print(f"lstm_epoch_torch: wrote the initial weights and the order of {len(order)} examples "
          f"to {a.export}; inputs standardized with mean {mean:.4f} and std {std:.4f}", flush=True)

    if a.nudge:
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(1 + a.nudge * 2.0 ** -23)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=betas, eps=eps,
                            weight_decay=weight_decay)
    xs, ys = torch.from_numpy(train_x), torch.from_numpy(train_y)
    losses = []
    start = time.perf_counter()
    for s in range(0, len(order), a.batch):
        rows = torch.from_numpy(order[s: s + a.batch])
        loss = F.cross_entropy(model(xs[rows]), ys[rows])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    seconds = time.perf_counter() - start
    np.save(os.path.join(a.export, "losses.npy"), np.array(losses, np.float64))

    correct = 0
    with torch.no_grad():
        for s in range(0, len(test_y), 1000):
            logits = model(torch.from_numpy(test_x[s: s + 1000]))
            correct += int((logits.argmax(1) == torch.from_numpy(test_y[s: s + 1000])).sum())
    accuracy = correct / len(test_y)
    print(f"lstm_epoch_torch test_accuracy={accuracy:.4f} epoch_seconds={seconds:.3f} "
          f"mean_loss={np.mean(losses):.4f} threads={a.threads}", flush=True)


if __name__ == "__main__":
    main()
