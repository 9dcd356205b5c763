"""The classes' remaining members: DType, Range, Shape, Transform, Program, optimizers, models,
TrainStep and Trainer state, gradient-check results and the MNIST loader."""
import os

import numpy as np
import pytest

import hedra as hd
from hedra import nn


def test_dtype_range_shape_members():
    assert isinstance(hd.f32, hd.DType) and hd.DType.i64 == hd.i64
    r = hd.Range(2, 3, 4)  # start, step, size
    assert r == hd.range(2, 14, 3) and len(r) == 4 and hash(r) == hash(hd.range(2, 14, 3))
    assert isinstance(r, hd.Range) and str(r) == "[2,14):3"
    s = hd.Shape([2, 3])
    assert s.ranges == [hd.range(2), hd.range(3)] and list(s) == s.ranges
    assert [1, 2] in s and [2, 0] not in s


def test_transform_members():
    t = hd.Transform.scaling([1, -1])
    assert t.input_rank == 2 and t.output_rank == 2
    assert t.inverse().compose(t)([3, 4]) == [3, 4]
    assert hd.Transform.shift([1, 1]).compose(t)([1, 1]) == [2, 0]
    with pytest.raises(hd.Error, match="not integral"):
        hd.Transform.scaling([2, 1]).inverse()


def test_program_and_describe():
    x = hd.placeholder((2,), name="x")
    program = hd.compile([x + 1, x * 2], [x])
    assert isinstance(program, hd.Program) and program.num_outputs == 2
    assert "placeholder" in x.describe()


def test_gradient_check_result_fields():
    r = hd.check_gradient(lambda v: hd.sum(v * v), [hd.array(np.ones(2))])
    assert isinstance(r, hd.GradientCheckResult) and bool(r)
    assert abs(r.analytic - r.numeric) == pytest.approx(r.error) and "ok" in repr(r)


def test_optimizer_base_and_cnn_model():
    assert isinstance(nn.Adam(), nn.Optimizer) and nn.Adam(lr=0.5).lr == 0.5
    cnn = nn.mnist_cnn(seed=0, c0=2, c1=3)
    assert cnn.example_shape == [1, 28, 28] and cnn.names[0] == "conv0.weight"
    logits = hd.compute(cnn(np.zeros((2, 1, 28, 28), np.float32)))
    assert logits.shape == (2, 10)


def test_train_step_and_trainer_state():
    rng = np.random.default_rng(0)
    images, labels = rng.normal(size=(8, 4)).astype(np.float32), rng.integers(0, 2, 8).astype(np.int32)
    model = nn.mlp([4, 2], seed=0)
    step = nn.TrainStep(model, nn.SGD(lr=0.1, momentum=0.9))
    step.step(images, labels)
    assert len(step.optimizer_state) == 2 and step.example_shape == [4]
    assert step.compile_seconds > 0
    step.set_params(model.params)
    np.testing.assert_array_equal(step.model().params[0], model.params[0])
    trainer = step.trainer
    assert trainer.param_names == model.names and trainer.step_count == 0
    trainer.set_params(model.params)
    assert len(trainer.optimizer_state) == 2
    spec = nn.InputSpec([-1, 4], "f32", name="images")
    assert spec.sizes == [-1, 4] and spec.dtype == hd.f32 and spec.name == "images"


@pytest.mark.skipif(not os.path.isdir(nn.DEFAULT_MNIST_DIRECTORY), reason="no Fashion-MNIST")
def test_load_mnist():
    data = nn.load_mnist()
    assert isinstance(data, nn.MnistDataset)
    assert data.train.images.shape == (60000, 28, 28) and len(data.test) == 10000
    stats = nn.pixel_statistics(data.train)
    assert isinstance(stats, nn.PixelStatistics) and 0 < stats.mean < 1
