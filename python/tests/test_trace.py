"""hd.lazy traces Python functions once on symbolic scalars."""
import numpy as np
import pytest

import hedra as hd


def test_lazy_traces_once():
    calls = []

    def f(x, y):
        calls.append((type(x), type(y)))
        return hd.maximum(x * y, 0)

    a = np.array([[1, -2, 3]], dtype=np.float32)
    b = np.array([[2], [-1]], dtype=np.float32)
    r = hd.compute(hd.lazy(f, hd.array(a), hd.array(b)))
    np.testing.assert_array_equal(r, np.maximum(a * b, 0))
    assert calls == [(hd.Sym, hd.Sym)]


def test_lazy_operators_literals_and_math():
    x = np.linspace(-1, 1, 7)
    f = lambda v: hd.where(v > 0, hd.exp(v) - 1, hd.tanh(v) * 0.5) + v ** 2 / (1 + abs(v))
    np.testing.assert_allclose(hd.compute(hd.lazy(f, x)),
                               np.where(x > 0, np.exp(x) - 1, np.tanh(x) * 0.5) + x ** 2 / (1 + abs(x)),
                               rtol=1e-12)
    # Numbers and array-likes are operands too; the weak literal keeps f32.
    y = hd.lazy(lambda v, k: v * k, hd.array(np.ones(3, np.float32)), 2.0)
    assert y.dtype == hd.f32
    # Every math function takes Syms.
    for fn in [hd.exp, hd.log, hd.sqrt, hd.tanh, hd.sigmoid, hd.sin, hd.cos, hd.erf, hd.log1p,
               hd.expm1, hd.floor, hd.ceil, hd.round, hd.abs, hd.relu]:
        v = np.array([0.5, 1.5, 2.5])
        np.testing.assert_allclose(hd.compute(hd.lazy(fn, v)), hd.compute(fn(hd.array(v))))


def test_lazy_several_outputs_and_select():
    x = np.arange(5, dtype=np.int64)
    lo, hi = hd.lazy(lambda v: (hd.minimum(v, 2), hd.select(v % 2 == 0, v, -v)), x)
    np.testing.assert_array_equal(hd.compute(lo), np.minimum(x, 2))
    np.testing.assert_array_equal(hd.compute(hi), np.where(x % 2 == 0, x, -x))
    c = hd.lazy(lambda v: hd.cast(v, hd.f32) / 2, x)
    assert c.dtype == hd.f32


def test_bool_of_sym_points_to_where():
    with pytest.raises(TypeError, match=r"hd\.where"):
        hd.lazy(lambda v: v if v > 0 else -v, np.ones(3))
    with pytest.raises(TypeError, match=r"hd\.where"):
        hd.lazy(lambda v: max(v, 0), np.ones(3))


def test_reduce_by_name_and_by_function():
    x = np.arange(1, 7, dtype=np.float64).reshape(2, 3)
    np.testing.assert_allclose(hd.compute(hd.reduce("prod", x, axis=1)), x.prod(1))
    np.testing.assert_allclose(hd.compute(hd.reduce("max", x)), x.max())
    r = hd.reduce(lambda acc, v: acc + v * v, x, axis=0, identity=0.0)
    np.testing.assert_allclose(hd.compute(r), (x * x).sum(0))
    with pytest.raises(hd.Error, match="identity"):
        hd.reduce(lambda acc, v: acc + v, x)


def test_reduce_multiple_value_argmax():
    x = np.array([[3.0, 9.0, 1.0], [7.0, 2.0, 7.0]])
    index = hd.index_components(hd.Shape.of([2, 3]), 1)

    def argmax(acc, v):
        take = v[0] > acc[0]
        return hd.where(take, v[0], acc[0]), hd.where(take, v[1], acc[1])

    best, where = hd.reduce_multiple_value(argmax, [-np.inf, 0], [hd.array(x), index], axis=1)
    np.testing.assert_array_equal(hd.compute(best), x.max(1))
    np.testing.assert_array_equal(hd.compute(where), x.argmax(1))


def test_numpy_scalars_are_literals_in_traced_functions():
    x = np.ones(3, np.float32)
    for f in [lambda v: v * np.float32(2), lambda v: np.float32(2) * v, lambda v: v + np.int64(1)]:
        y = hd.lazy(f, x)
        assert y.dtype == hd.f32
        np.testing.assert_array_equal(hd.compute(y), f(x))
