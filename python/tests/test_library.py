"""reshape/view/fuse/overwrite/stack and the library functions against NumPy."""
import numpy as np
import pytest

import hedra as hd

X = np.arange(24, dtype=np.float32).reshape(4, 6)


def c(a):
    return hd.compute(a)


def test_reshape_by_shape_and_transform():
    a = hd.array(X)
    np.testing.assert_array_equal(c(hd.reshape(a, hd.Shape([4, hd.range(0, 6, 2)]))), X[:, ::2])
    np.testing.assert_array_equal(c(hd.reshape(hd.array(X[:1]), (3, 4, 6))), np.broadcast_to(X[:1], (3, 4, 6)))
    t = hd.reshape(a, hd.Transform.permutation([1, 0]))
    np.testing.assert_array_equal(c(t), X.T)
    shifted = hd.reshape(a, hd.Transform.shift([1, 0]))
    assert shifted.shape[0] == hd.range(1, 5)
    assert "i0" in repr(hd.Transform.identity(2))
    ax = hd.TransformAxis(input_axis=0, scale=2, offset=1)
    assert hd.Transform(1, [ax])([3]) == [7]


def test_view_and_broadcast():
    # result[i] = X[i, i] (the diagonal) through an affine map.
    diag = hd.view(hd.array(X), (4,), hd.AffineMap(1, 2, [1, 1], [0, 0]))
    np.testing.assert_array_equal(c(diag), np.diag(X))
    np.testing.assert_array_equal(c(hd.broadcast_to(hd.array(X[0]), (2, 6))), np.broadcast_to(X[0], (2, 6)))
    assert hd.AffineMap.identity(2)([3, 4]) == [3, 4]
    assert hd.AffineMap.projection(3, [2, 0])([5, 6, 7]) == [7, 5]


def test_fuse_overwrite_stack():
    a = hd.array(np.zeros(3, np.float32))
    b = hd.reshape(hd.array(np.ones(2, np.float32)), hd.Transform.shift([3]))
    np.testing.assert_array_equal(c(hd.fuse([a, b])), [0, 0, 0, 1, 1])
    top = hd.reshape(hd.array(np.full(1, 5, np.float32)), hd.Transform.shift([1]))
    np.testing.assert_array_equal(c(hd.overwrite([a, top])), [0, 5, 0])
    np.testing.assert_array_equal(c(hd.stack([a, a + 1], axis=1)), np.stack([np.zeros(3), np.ones(3)], 1))


def test_functions():
    a = hd.array(X)
    np.testing.assert_allclose(c(hd.matmul(a, X.T)), X @ X.T)
    np.testing.assert_allclose(c(hd.sum(a, axis=1, keepdims=True)), X.sum(1, keepdims=True))
    np.testing.assert_allclose(c(hd.mean(a)), X.mean())
    np.testing.assert_array_equal(c(hd.max(a, 0)), X.max(0))
    np.testing.assert_array_equal(c(hd.min(a, [0, 1])), X.min())
    np.testing.assert_array_equal(c(hd.argmax(a, 1)), X.argmax(1))
    np.testing.assert_array_equal(c(hd.argmin(a, 0)), X.argmin(0))
    assert c(hd.element_count(a, 1)) == 6
    np.testing.assert_array_equal(c(hd.transpose(hd.array(X.reshape(2, 3, 4)), [2, 0, 1])),
                                  X.reshape(2, 3, 4).transpose(2, 0, 1))
    np.testing.assert_array_equal(c(hd.pad(a, [(1, 0), (0, 2)], 9.0)),
                                  np.pad(X, [(1, 0), (0, 2)], constant_values=9))
    np.testing.assert_array_equal(c(hd.flatten(a)), X.ravel())
    np.testing.assert_array_equal(c(hd.unflatten(a, 1, [2, 3])), X.reshape(4, 2, 3))
    shifted = hd.reshape(a, hd.Transform.shift([2, 0]))
    assert hd.rebase(shifted).shape == a.shape
    for fn, ref in [(hd.exp, np.exp), (hd.sqrt, np.sqrt), (hd.sin, np.sin), (hd.round, np.round)]:
        np.testing.assert_allclose(c(fn(a / 10)), ref(X / 10), rtol=1e-5)
    np.testing.assert_allclose(c(hd.sigmoid(a / 10)), 1 / (1 + np.exp(-X / 10)), rtol=1e-5)
    np.testing.assert_array_equal(c(hd.where(a > 10, a, 0)), np.where(X > 10, X, 0))
    np.testing.assert_array_equal(c(hd.maximum(a, 5)), np.maximum(X, 5))
    np.testing.assert_allclose(c(hd.pow(a, 0.5)), X ** 0.5, rtol=1e-6)
    np.testing.assert_array_equal(c(hd.cast(a, "i64")), X.astype(np.int64))


def test_shape_errors_name_the_operation_and_the_python_line():
    with pytest.raises(hd.Error) as e:
        hd.array(np.ones((2, 3))) + hd.array(np.ones((4,)))
    assert "(2,3)" in str(e.value) and "(4)" in str(e.value)
    assert "test_library.py" in str(e.value)  # the Python line that created the arrays
    with pytest.raises(hd.Error, match="matmul"):
        hd.matmul(hd.array(np.ones((2, 3))), np.ones((4, 2)))


def test_indexing_selects_by_hedra_index():
    a = hd.array(X)
    np.testing.assert_array_equal(c(a[1]), X[1])
    np.testing.assert_array_equal(c(a[:, 2]), X[:, 2])
    np.testing.assert_array_equal(c(a[..., 2]), X[..., 2])
    sub = a[1:3, ::2]
    assert sub.shape == hd.Shape([hd.range(1, 3), hd.range(0, 6, 2)])  # indices kept
    np.testing.assert_array_equal(c(sub), X[1:3, ::2])
    np.testing.assert_array_equal(c(hd.rebase(sub)), X[1:3, ::2])
    shifted = hd.reshape(a, hd.Transform.shift([10, 0]))  # rows 10..13
    np.testing.assert_array_equal(c(shifted[11, 0:2]), X[1, 0:2])
    assert [r.shape.sizes for r in a] == [[6]] * 4
    with pytest.raises(hd.Error, match="no index 4"):
        a[4]
    with pytest.raises(hd.Error, match="step"):
        a[::-1]
    with pytest.raises(hd.Error, match="rank"):
        a[0, 0, 0]


def test_take_and_scatter_add_against_numpy():
    table = np.random.default_rng(0).standard_normal((9, 5)).astype(np.float32)
    ids = np.array([[3, 0, 8], [3, 3, 1]], dtype=np.int32)
    np.testing.assert_array_equal(c(hd.take(hd.array(table), hd.array(ids))), np.take(table, ids, axis=0))
    np.testing.assert_array_equal(c(hd.take(hd.array(table), hd.array(ids[0]), axis=1 - 1)), table[ids[0]])
    values = np.ones((2, 3, 5), dtype=np.float32)
    want = np.zeros((9, 5), dtype=np.float32)
    np.add.at(want, ids, values)
    np.testing.assert_array_equal(c(hd.scatter_add(hd.array(values), hd.array(ids), 0, (9, 5))), want)
    # The gradient of a take is the scatter of the cotangent rows.
    t = hd.array(table)
    g = hd.grad(hd.sum(hd.take(t, hd.array(ids)) * 2.0), t)
    np.testing.assert_array_equal(c(g), 2.0 * want)
    with pytest.raises(hd.Error, match="take: index 9"):
        hd.take(hd.array(table), hd.array(np.array([9], dtype=np.int32)))
