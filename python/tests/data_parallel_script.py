"""A data-parallel training script, run by test_distributed.py as `mpirun -np 2 python
data_parallel_script.py OUT [key=value ...]`: every rank passes the same global batch, takes its rows, and the
gradients are summed across ranks. Each rank writes its losses, parameters and a few
collectives' results to OUT/rank<r>.npz; rank 0 a checkpoint.
The test imports make_batch and make_trainer to train one process on the whole batch."""
import sys

import numpy as np

import hedra as hd
from hedra import distributed, nn

STEPS = 8


def make_batch():
    rng = np.random.default_rng(5)
    images = rng.normal(size=(24, 8)).astype(np.float32)
    labels = (images[:, :3].argmax(axis=1)).astype(np.int32)
    return [images, labels]


def make_trainer(momentum=0.0):
    init = nn.mlp([8, 16, 3], seed=2)

    def loss(params, inputs):
        hidden = hd.relu(nn.linear(inputs[0], params[0], params[1]))
        return nn.softmax_cross_entropy(nn.linear(hidden, params[2], params[3]), inputs[1])

    specs = [nn.InputSpec([-1, 8]), nn.InputSpec([-1], hd.i32, any_integer=True)]
    return nn.Trainer(loss, specs, init.params, nn.SGD(lr=0.5, momentum=momentum), param_names=init.names,
                      num_threads=1)


def main(out, options):
    """options: DataParallelTrainer's keywords as key=0|1 (shard_optimizer_state, overlap), and
    momentum=<m> for the optimizer (sharding needs optimizer state to shard)."""
    options = dict(o.split("=") for o in options)
    momentum = float(options.pop("momentum", 0))
    comm = distributed.init()
    trainer = distributed.DataParallelTrainer(comm, make_trainer(momentum),
                                              **{k: v == "1" for k, v in options.items()})
    batch = make_batch()
    losses = [trainer.step(batch) for _ in range(STEPS)]
    first, last = trainer.shard(len(batch[0]))
    mine = np.array([comm.rank + 1.0])
    collectives = dict(sum=comm.all_reduce(mine), mean=comm.all_reduce(mine, op="mean"),
                       broadcast=comm.broadcast(mine * 10, root=1),
                       gathered=comm.all_gather(np.array([comm.rank], np.int64)))
    evaluated, _ = trainer.evaluate(batch)
    trainer.save_checkpoint(f"{out}/checkpoint.safetensors")
    np.savez(f"{out}/rank{comm.rank}.npz", losses=np.array(losses), size=comm.size,
             shard=np.array([first, last]), evaluated=evaluated,
             state_bytes=trainer.optimizer_state_bytes, **collectives,
             **{f"param{i}": p for i, p in enumerate(trainer.params)})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
