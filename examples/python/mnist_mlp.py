"""mnist_mlp.py: the MNIST MLP of examples/mnist_mlp.cpp in Python, step for step.

The same data (the Fashion-MNIST folder of Debian's dataset-fashion-mnist, standardized with the
training set's statistics), the same initial weights (hd.nn.mlp's PyTorch scheme from --seed),
the same shuffles (hd.nn.shuffled_indices) and the same compiled step (hd.nn.TrainStep), with the
forward pass written here in Python: the losses equal the C++ example's
(python/tests/test_mnist.py checks 100 steps to 1e-6).

    python examples/python/mnist_mlp.py --epochs 1 --limit 6400 --csv losses.csv
"""
import argparse
import time

import numpy as np

import hedra as hd
from hedra import nn


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hidden", default="300,100", help="hidden layer sizes")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--backend", default="")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", default=nn.DEFAULT_MNIST_DIRECTORY)
    p.add_argument("--limit", type=int, default=0, help="train on the first N examples (0: all)")
    p.add_argument("--inputs", choices=["standardized", "unit"], default="standardized")
    p.add_argument("--csv", default="", help="write the loss per step here")
    return p.parse_args()


def mlp_forward(params, x):
    """Dense layers with ReLU between them, as hedra::nn::mlp's forward."""
    layers = len(params) // 2
    for i in range(layers):
        x = nn.linear(x, params[2 * i], params[2 * i + 1])
        if i + 1 < layers:
            x = hd.relu(x)
    return x


def main():
    args = parse_args()
    data = nn.load_mnist(args.data)
    train, test = data.train, data.test
    if 0 < args.limit < len(train):
        train = nn.MnistSplit(train.images[: args.limit], train.labels[: args.limit])
    if args.inputs == "standardized":
        stats = nn.pixel_statistics(train)
        nn.standardize(train, stats)
        nn.standardize(test, stats)
        print(f"inputs: standardized with the training set's mean {stats.mean:.4f} "
              f"and std {stats.stddev:.4f}")
    n = len(train)
    features = train.images[0].size
    sizes = [features] + [int(h) for h in args.hidden.split(",")] + [10]
    initial = nn.mlp(sizes, args.seed)  # PyTorch's initialisation, the C++ example's weights
    model = nn.Model(initial.names, initial.params, mlp_forward, [features])
    optimizer = (nn.Adam(lr=args.lr) if args.optimizer == "adam"
                 else nn.SGD(lr=args.lr, momentum=args.momentum))
    step = nn.TrainStep(model, optimizer, backend=args.backend, num_threads=args.threads)

    images = train.images.reshape(n, features)
    labels = train.labels
    steps = nn.batch_count(n, args.batch)
    print(f"mnist_mlp.py: {n} training and {len(test)} test examples from {args.data}; "
          f"batch {args.batch}, {args.optimizer} lr {args.lr:g}, "
          f"backend {args.backend or hd.default_backend()}")
    losses = []
    for epoch in range(1, args.epochs + 1):
        order = nn.shuffled_indices(n, args.seed, epoch - 1)
        start, compiled = time.perf_counter(), step.compile_seconds
        for s in range(steps):
            rows = order[s * args.batch:(s + 1) * args.batch]
            losses.append(step.step(images[rows], labels[rows]))
        seconds = time.perf_counter() - start - (step.compile_seconds - compiled)
        test_images = test.images.reshape(len(test), features)
        correct = sum(step.count_correct(test_images[i:i + 1000], test.labels[i:i + 1000])
                      for i in range(0, len(test) - 999, 1000))
        accuracy = correct / len(test)
        print(f"epoch {epoch}/{args.epochs}: mean loss {np.mean(losses[-steps:]):.4f}, "
              f"test accuracy {accuracy:.4f}, training {seconds:.2f} s")
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("step,epoch,loss\n")
            for i, loss in enumerate(losses):
                f.write(f"{i + 1},{i // steps + 1},{loss:.9g}\n")
        print(f"wrote {args.csv}")
    print(f"test_accuracy={accuracy:.4f} epoch_seconds={seconds:.3f}")


if __name__ == "__main__":
    main()
