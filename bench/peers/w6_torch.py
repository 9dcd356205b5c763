"""W6 in PyTorch 2 eager: the per-call cost of a chain of 10 elementwise ops on 1000-element f32
tensors (x + y, * x, - y, * 0.5, + 1, relu, tanh, * y, + x, neg; each op allocates its result, the
usual eager style), on one thread: the peer python/bench/w6_overhead.py runs beside hedra.

The recipe is the shared benchmarks' W6: x, y = torch.rand(1000) after torch.manual_seed(0);
a warm-up of at least 0.3 s, then 15 samples, each the mean of enough calls to last about 30 ms;
the figure is the median sample, in microseconds per chain. Output:
  W6 torch2 threads=1 op=chain10 us median=.. min=.. max=.. n=15
Run with the peers' venv (scripts/install_bench_peers.sh):
  $PEERS_VENV/bin/python bench/peers/w6_torch.py
"""
import argparse
import statistics
import time

import torch


def chain(x, y):
    t = x + y
    t = t * x
    t = t - y
    t = t * 0.5
    t = t + 1.0
    t = torch.relu(t)
    t = torch.tanh(t)
    t = t * y
    t = t + x
    return torch.neg(t)


def samples_us(fn, samples=15, warmup_s=0.3, target_s=0.03):
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < warmup_s:
        fn()
        calls += 1
    per_sample = max(1, int(target_s / ((time.perf_counter() - start) / calls)))
    out = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(per_sample):
            fn()
        out.append((time.perf_counter() - t0) / per_sample * 1e6)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    x, y = torch.rand(1000), torch.rand(1000)
    us = samples_us(lambda: chain(x, y))
    print(f"W6 torch2 threads={a.threads} op=chain10 us median={statistics.median(us):.2f} "
          f"min={min(us):.2f} max={max(us):.2f} n={len(us)}")


if __name__ == "__main__":
    main()
