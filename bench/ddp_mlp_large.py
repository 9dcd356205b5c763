"""PyTorch DDP peer of bench/data_parallel: MLP 784-1024-1024-10, global batch 512 (each rank its
share), SGD lr 0.1, cross-entropy, one thread per rank, gloo. Run with torchrun from the peers
venv (scripts/install_bench_peers.sh):

    torchrun --nproc_per_node 2 bench/ddp_mlp_large.py [--steps 12]
    python bench/ddp_mlp_large.py            (one process, no DDP: the baseline)

Rank 0 prints one line in bench/data_parallel's form:
    ddp_mlp_large ranks=R threads=1 batch=512 step_ms=.. examples_per_s=..
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--batch", type=int, default=512)
    a = p.parse_args()
    torch.set_num_threads(1)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        dist.init_process_group("gloo")
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10))
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(7)
    x = torch.rand(a.batch, 784, generator=g)
    y = torch.randint(0, 10, (a.batch,), generator=g)
    lo, hi = a.batch * rank // world, a.batch * (rank + 1) // world
    xs, ys = x[lo:hi], y[lo:hi]

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
        return loss.item()

    step()
    step()
    if world > 1:
        dist.barrier()
    start = time.perf_counter()
    for _ in range(a.steps):
        step()
    if world > 1:
        dist.barrier()
    seconds = time.perf_counter() - start
    if rank == 0:
        print(f"ddp_mlp_large ranks={world} threads=1 batch={a.batch} "
              f"step_ms={seconds * 1e3 / a.steps:.3f} "
              f"examples_per_s={a.batch * a.steps / seconds:.0f}", flush=True)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
