"""hd.distributed: a script trained data-parallel under mpirun equals one process on the whole
batch, and its ranks end with the same parameters bit for bit."""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import hedra as hd
from hedra import distributed

SCRIPT = pathlib.Path(__file__).with_name("data_parallel_script.py")
MPIRUN = shutil.which("mpirun")
needs_mpi = pytest.mark.skipif(not distributed.mpi_available(),
                               reason="the C++ library was built without MPI")


def load_script():
    spec = importlib.util.spec_from_file_location("data_parallel_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_mpi_the_names_say_how_to_get_it():
    if distributed.mpi_available():
        assert distributed.init().size == 1  # alone: a group of one
        return
    with pytest.raises(hd.Error, match="built without MPI.*libopenmpi-dev"):
        distributed.init()


@needs_mpi
def test_alone_a_group_of_one_trains_as_one_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = load_script()
    batch = script.make_batch()
    dp = distributed.DataParallelTrainer(distributed.init(), script.make_trainer())
    single = script.make_trainer()
    assert dp.shard(24) == (0, 24) and dp.communicator.size == 1
    assert isinstance(dp.communicator, distributed.Communicator)
    for _ in range(3):
        assert dp.step(batch) == pytest.approx(single.step(batch), rel=1e-6)
    for a, b in zip(dp.params, single.params):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    loss, outputs = dp.evaluate(batch)
    assert loss == pytest.approx(dp.evaluate_loss(batch)) and outputs == []
    assert not distributed.launched_by_mpi() and distributed.local_rank() == 0
    dp.communicator.barrier()
    for mine, given in zip(dp.local_inputs(batch), batch):
        np.testing.assert_array_equal(mine, given)  # a group of one takes every row
    assert dp.local.step_count == 3 and dp.communication_seconds >= 0
    assert dp.optimizer_state_bytes == sum(a.nbytes for a in dp.local.optimizer_state)
    arrays, metadata = dp.checkpoint()
    assert metadata["step"] == "3" and set(dp.local.param_names) <= set(arrays)
    resumed = distributed.DataParallelTrainer(distributed.init(), script.make_trainer())
    resumed.restore(arrays, metadata)
    assert resumed.local.step_count == 3 and resumed.step(batch) == dp.step(batch)
    dp.save_checkpoint("dp.safetensors")
    resumed.load_checkpoint("dp.safetensors")
    assert resumed.local.step_count == 4 and resumed.step(batch) == dp.step(batch)


@needs_mpi
@pytest.mark.skipif(MPIRUN is None, reason="mpirun is not installed")
@pytest.mark.parametrize("options", [[], ["overlap=0"], ["shard_optimizer_state=1", "momentum=0.9"]],
                         ids=["overlap", "after-backward", "sharded-optimizer"])
def test_two_ranks_under_mpirun_equal_one_process_on_the_whole_batch(tmp_path, options):
    # As the C++ mpirun tests run: no shared-memory single copy in containers, one thread a rank.
    env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none", HEDRA_NUM_THREADS="1")
    command = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", "2", sys.executable,
               str(SCRIPT), str(tmp_path), *options]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(2)]
    assert [int(r["size"]) for r in ranks] == [2, 2]
    assert [list(r["shard"]) for r in ranks] == [[0, 12], [12, 24]]  # each its half of the rows
    for r in ranks:
        assert r["sum"].tolist() == [3.0] and r["mean"].tolist() == [1.5]
        assert r["broadcast"].tolist() == [20.0] and r["gathered"].tolist() == [[0], [1]]
    params = [[r[f"param{i}"] for i in range(4)] for r in ranks]
    for a, b in zip(*params):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()  # equal bit for bit
    if "shard_optimizer_state=1" in options:  # each rank holds its parameters' momentum only
        state = [int(r["state_bytes"]) for r in ranks]
        assert sum(state) == sum(p.nbytes for p in params[0]) and 0 < min(state)
    losses = ranks[0]["losses"]
    np.testing.assert_array_equal(losses, ranks[1]["losses"])
    assert losses[-1] < 0.8 * losses[0] and np.all(np.diff(losses) < 0)

    script = load_script()
    single = script.make_trainer(momentum=0.9 if "momentum=0.9" in options else 0.0)
    batch = script.make_batch()
    single_losses = [single.step(batch) for _ in range(script.STEPS)]
    np.testing.assert_allclose(losses, single_losses, rtol=0, atol=1e-5)
    for a, b in zip(params[0], single.params):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
    assert float(ranks[0]["evaluated"]) == pytest.approx(single.evaluate(batch)[0], abs=1e-5)
    assert float(ranks[1]["evaluated"]) == float(ranks[0]["evaluated"])
    arrays, metadata = hd.nn.load_safetensors(str(tmp_path / "checkpoint.safetensors"))
    assert metadata["step"] == str(script.STEPS)
    np.testing.assert_array_equal(arrays["fc0.weight"], params[0][0])
