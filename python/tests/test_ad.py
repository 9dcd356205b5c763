"""grad and vjp of a small model against central finite differences."""
import numpy as np
import pytest

import hedra as hd
from hedra import nn


def small_model_loss(w1, b1, w2, x, labels):
    h = hd.tanh(nn.linear(x, w1, b1))
    return nn.softmax_cross_entropy(nn.linear(h, w2), labels)


def test_grad_of_small_model_matches_finite_differences():
    rng = np.random.default_rng(0)
    values = [rng.normal(size=(5, 4)), rng.normal(size=5), rng.normal(size=(3, 5))]
    x = hd.array(rng.normal(size=(6, 4)))
    labels = hd.array(np.array([0, 1, 2, 0, 1, 2], dtype=np.int64))
    ps = [hd.placeholder(v.shape, hd.f64, name=f"p{i}") for i, v in enumerate(values)]
    loss = small_model_loss(*ps, x, labels)
    program = hd.compile([loss] + hd.grad(loss, ps), ps)
    analytic = program(*values)[1:]
    loss_only = hd.compile(loss, ps)
    h = 1e-6
    for k, v in enumerate(values):
        numeric = np.zeros_like(v)
        for i in np.ndindex(v.shape):
            plus = [p.copy() for p in values]
            minus = [p.copy() for p in values]
            plus[k][i] += h
            minus[k][i] -= h
            numeric[i] = (loss_only(*plus) - loss_only(*minus)) / (2 * h)
        np.testing.assert_allclose(analytic[k], numeric, rtol=1e-6, atol=1e-8)


def test_grad_single_and_vjp_and_stop_gradient():
    x = hd.array(np.array([1.0, 2.0, 3.0]))
    g = hd.grad(hd.sum(x * x), x)
    np.testing.assert_allclose(hd.compute(g), [2, 4, 6])
    (gs,) = hd.vjp([x * 3], [np.ones(3)], [x])
    np.testing.assert_allclose(hd.compute(gs), [3, 3, 3])
    g2 = hd.grad(hd.sum(x * hd.stop_gradient(x)), [x])
    np.testing.assert_allclose(hd.compute(g2[0]), [1, 2, 3])
    with pytest.raises(hd.Error):
        hd.grad(x, x)  # not rank 0


def test_check_gradient_of_a_python_function():
    x = hd.array(np.linspace(0.1, 1, 5))
    result = hd.check_gradient(lambda v: hd.sum(hd.exp(v) * hd.sin(v)), [x])
    assert result.ok, repr(result)
