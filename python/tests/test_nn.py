"""hd.nn: layers, optimizers, TrainStep, Trainer and safetensors checkpoints."""
import numpy as np
import pytest

import hedra as hd
from hedra import nn


def test_layers_match_numpy():
    rng = np.random.default_rng(1)
    x, w, b = rng.normal(size=(4, 3)), rng.normal(size=(2, 3)), rng.normal(size=2)
    np.testing.assert_allclose(hd.compute(nn.linear(x, w, b)), x @ w.T + b)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(hd.compute(nn.softmax(x)), e / e.sum(1, keepdims=True))
    np.testing.assert_allclose(hd.compute(nn.log_softmax(x, axis=1)), np.log(e / e.sum(1, keepdims=True)))
    labels = np.array([0, 2, 1, 1], dtype=np.int64)
    ce = -np.mean(np.log(e / e.sum(1, keepdims=True))[np.arange(4), labels])
    np.testing.assert_allclose(hd.compute(nn.softmax_cross_entropy(x, labels)), ce)
    np.testing.assert_allclose(hd.compute(nn.cross_entropy(x, labels)), ce)
    assert hd.compute(nn.count_correct(x, labels)) == np.sum(x.argmax(1) == labels)
    img = rng.normal(size=(1, 2, 4, 4))
    k = rng.normal(size=(3, 2, 3, 3))
    conv = hd.compute(nn.conv2d(img, k, padding=1))
    assert conv.shape == (1, 3, 4, 4)
    ref = sum(np.pad(img, [(0, 0), (0, 0), (1, 1), (1, 1)])[0, :, i:i + 4, j:j + 4][None, :] *
              k[:, :, i, j][:, :, None, None] for i in range(3) for j in range(3)).sum(1)
    np.testing.assert_allclose(conv[0], ref, rtol=1e-10)
    np.testing.assert_array_equal(hd.compute(nn.maxpool2d(img, 2)),
                                  img.reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5)))
    ln = hd.compute(nn.layer_norm(x))
    np.testing.assert_allclose(ln, (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5))
    assert hd.compute(nn.gelu(x)).shape == x.shape
    np.testing.assert_array_equal(hd.compute(nn.embedding(np.array([2, 0]), w.T)), w.T[[2, 0]])
    kept = hd.compute(nn.dropout(hd.array(np.ones(1000)), 0.5, hd.constant(7, hd.i64)))
    assert 300 < np.count_nonzero(kept) < 700 and set(np.unique(kept)) <= {0.0, 2.0}


def test_optimizers():
    assert nn.SGD(lr=0.5).lr == 0.5 and nn.SGD().name == "sgd"
    assert nn.Adam(lr=1e-2).name == "adam" and nn.AdamW().name == "adamw"


def small_data():
    rng = np.random.default_rng(2)
    return rng.normal(size=(32, 8)).astype(np.float32), rng.integers(0, 3, 32).astype(np.int32)


def test_train_step_lowers_the_loss():
    images, labels = small_data()
    model = nn.mlp([8, 16, 3], seed=0)
    assert model.names == ["fc0.weight", "fc0.bias", "fc1.weight", "fc1.bias"]
    step = nn.TrainStep(model, nn.SGD(lr=0.2))
    losses = [step.step(images, labels) for _ in range(30)]
    assert losses[-1] < losses[0]
    assert step.count_correct(images, labels) > 10
    assert step.programs_compiled >= 1 and len(step.params) == 4
    assert hd.compute(model(images)).shape == (32, 3)


def test_python_model_in_train_step_equals_the_cpp_one():
    images, labels = small_data()
    cpp = nn.mlp([8, 16, 3], seed=3)

    def forward(params, x):
        return nn.linear(hd.relu(nn.linear(x, params[0], params[1])), params[2], params[3])

    py = nn.Model(cpp.names, cpp.params, forward, [8])
    a, b = nn.TrainStep(cpp, nn.SGD(lr=0.1)), nn.TrainStep(py, nn.SGD(lr=0.1))
    for _ in range(5):
        assert a.step(images, labels) == b.step(images, labels)


def test_trainer_with_python_loss_and_checkpoints(tmp_path):
    images, labels = small_data()
    init = nn.mlp([8, 3], seed=1)

    def loss(params, inputs):
        logits = nn.linear(inputs[0], params[0], params[1])
        return nn.softmax_cross_entropy(logits, inputs[1]), [nn.count_correct(logits, inputs[1])]

    def trainer():
        return nn.Trainer(loss, [nn.InputSpec([-1, 8]), nn.InputSpec([-1], hd.i32, any_integer=True)],
                          init.params, nn.Adam(lr=0.01), param_names=init.names)

    t = trainer()
    for _ in range(3):
        t.step([images, labels])
    assert t.step_count == 3
    path = str(tmp_path / "ckpt.safetensors")
    t.save_checkpoint(path)
    arrays, metadata = nn.load_safetensors(path)
    assert metadata["step"] == "3" and "fc0.weight" in arrays
    resumed = trainer()
    resumed.load_checkpoint(path)
    assert resumed.step([images, labels]) == t.step([images, labels])
    loss_value, (correct,) = t.evaluate([images, labels])
    assert loss_value > 0 and 0 <= correct <= 32
    arrays2, meta2 = t.checkpoint()
    other = trainer()
    other.restore(arrays2, meta2)
    np.testing.assert_array_equal(other.params[0], t.params[0])


def test_trainer_mixed_precision():
    images, labels = small_data()
    init = nn.mlp([8, 16, 3], seed=1)

    def loss(params, inputs):
        hidden = nn.gelu(nn.linear(inputs[0], params[0], params[1]))
        return nn.softmax_cross_entropy(nn.linear(hidden, params[2], params[3]), inputs[1])

    def trainer(precision=None):
        return nn.Trainer(loss, [nn.InputSpec([-1, 8]), nn.InputSpec([-1], hd.i32, any_integer=True)],
                          init.params, nn.Adam(lr=0.01), backend="openmp", precision=precision)

    f32, bf16 = trainer(), trainer("bf16")
    assert f32.precision == hd.f32 and bf16.precision == hd.bf16 and not bf16.loss_scaling
    for _ in range(5):
        want, got = f32.step([images, labels]), bf16.step([images, labels])
        assert got == pytest.approx(want, rel=1e-2) and got != want
    assert all(p.dtype == np.float32 for p in bf16.params + bf16.optimizer_state)
    f16 = trainer(hd.f16)
    assert f16.loss_scaling and f16.loss_scale == 65536.0 and bf16.loss_scale == 1.0
    assert f16.step([images, labels]) == pytest.approx(trainer().step([images, labels]), rel=1e-2)
    with pytest.raises(hd.Error, match="use DType::F32, DType::BF16 or DType::F16"):
        trainer(hd.i32)


def test_safetensors_round_trip(tmp_path):
    path = str(tmp_path / "w.safetensors")
    w = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, 2], dtype=np.int64)}
    nn.save_safetensors(path, w, {"note": "hi"})
    back, meta = nn.load_safetensors(path)
    assert meta == {"note": "hi"}
    for k in w:
        np.testing.assert_array_equal(back[k], w[k])
    with pytest.raises(hd.Error):
        nn.load_safetensors(str(tmp_path / "missing.safetensors"))


def test_mnist_helpers(tmp_path):
    order = nn.shuffled_indices(10, seed=0)
    assert sorted(order.tolist()) == list(range(10)) and order.dtype == np.int64
    assert nn.batch_count(10, 4) == 3 and nn.batch_count(10, 4, drop_last=True) == 2
    split = nn.MnistSplit(np.full((2, 2, 2), 0.5, np.float32) + np.arange(2, dtype=np.float32)[:, None, None],
                          np.array([1, 2], np.int32))
    stats = nn.pixel_statistics(split)
    assert stats.mean == pytest.approx(1.0) and stats.stddev == pytest.approx(0.5)
    nn.standardize(split, stats)
    np.testing.assert_allclose(split.images.mean(), 0, atol=1e-7)
    with pytest.raises(hd.Error, match="missing"):
        nn.load_mnist(str(tmp_path / "missing"))


def test_exceptions_from_python_functions_keep_their_type():
    images, labels = small_data()
    init = nn.mlp([8, 3], seed=1)

    def broken(params, x):
        raise ValueError("my model is broken")

    step = nn.TrainStep(nn.Model(init.names, init.params, broken, [8]), nn.SGD())
    with pytest.raises(ValueError, match="my model is broken"):
        step.step(images, labels)

    def bad_shapes(params, x):
        return nn.linear(x, hd.transpose(params[0]), params[1])  # an (8, 3) weight for 8 features

    step = nn.TrainStep(nn.Model(init.names, init.params, bad_shapes, [8]), nn.SGD())
    with pytest.raises(hd.Error, match="linear"):
        step.step(images, labels)
