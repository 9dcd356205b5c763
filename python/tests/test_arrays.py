"""Leaves, shapes, dtypes, operators, and zero-copy in both directions."""
import numpy as np
import pytest

import hedra as hd


def test_array_borrows_contiguous_numpy():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = hd.array(x)
    assert a.shape == hd.Shape.of([3, 4]) and a.dtype == hd.f32
    x[0, 0] = 100  # borrowed, not copied: the change is seen by the next computation
    assert hd.compute(a * 1)[0, 0] == 100


def test_array_copies_when_asked_or_needed():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    private = hd.array(x, copy=True)
    x[0, 0] = 100
    assert hd.compute(private * 1)[0, 0] == 0
    t = x.T  # not C-contiguous: converted
    np.testing.assert_array_equal(hd.compute(hd.array(t)), t)
    u8 = np.arange(4, dtype=np.uint8)  # no hedra dtype: converted to int32
    assert hd.array(u8).dtype == hd.i32
    assert hd.array([1.5, 2.5]).dtype == hd.f64
    assert hd.array(x, dtype=hd.f64).dtype == hd.f64


def test_results_are_read_only_and_shared():
    a = hd.array(np.ones(5, dtype=np.float32))
    y = a * 2
    r1, r2 = y.numpy(), hd.compute(y)
    assert np.shares_memory(r1, r2)  # the memoized result, not a copy
    assert not r1.flags.writeable
    with pytest.raises(ValueError):
        r1[0] = 3


def test_dlpack_both_ways():
    x = np.arange(6, dtype=np.float64)
    y = hd.array(x) + 1
    back = np.from_dlpack(y)
    np.testing.assert_array_equal(back, x + 1)
    # Any DLPack producer is borrowed (here NumPy's own capsule protocol).
    class Producer:
        def __init__(self, a): self.a = a
        def __dlpack__(self, **kw): return self.a.__dlpack__(**kw)
        def __dlpack_device__(self): return self.a.__dlpack_device__()
    z = np.arange(4, dtype=np.float32)
    borrowed = hd.array(Producer(z))
    z[1] = 7
    assert hd.compute(borrowed + 0)[1] == 7


def test_dtypes():
    for np_t, hd_t in [(np.bool_, hd.bool_), (np.int32, hd.i32), (np.int64, hd.i64),
                       (np.float32, hd.f32), (np.float64, hd.f64)]:
        a = hd.array(np.zeros(3, dtype=np_t))
        assert a.dtype == hd_t
        assert hd.compute(a).dtype == np.dtype(np_t)
    assert str(hd.f32) == "f32" and hd.f64.itemsize == 8
    assert hd.placeholder((2,), "i64").dtype == hd.i64
    assert hd.placeholder((2,), np.float64).dtype == hd.f64


def test_ranges_and_shapes():
    r = hd.range(1, 9, 2)
    assert (r.start, r.step, r.size, r.end) == (1, 2, 4, 9) and 3 in r and 4 not in r
    s = hd.Shape([hd.range(1, 4), 5])
    assert s.rank == 2 and s.sizes == [3, 5] and s.size == 15 and len(s) == 2
    assert s[0] == hd.range(1, 4) and s == [hd.range(1, 4), 5]
    assert hd.Shape.of([3, 4]) == hd.Shape([3, 4])
    assert str(hd.Shape.of([3, 4])) == "(3,4)"
    assert hd.dynamic("batch", 64).is_dynamic
    ramp = hd.index_components(hd.Shape([hd.range(1, 5)]), 0)
    np.testing.assert_array_equal(hd.compute(ramp), [1, 2, 3, 4])


def test_leaves():
    np.testing.assert_array_equal(hd.compute(hd.zeros((2, 2))), np.zeros((2, 2)))
    np.testing.assert_array_equal(hd.compute(hd.ones((3,), hd.i32)), [1, 1, 1])
    np.testing.assert_array_equal(hd.compute(hd.full((2,), 7.5)), [7.5, 7.5])
    assert hd.compute(hd.constant(3, hd.i64)) == 3


def test_operators_match_numpy():
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    y = np.linspace(1, 3, 4, dtype=np.float32)
    a, b = hd.array(x), hd.array(y)
    cases = [(a + b, x + y), (a - 1, x - 1), (2 * a, 2 * x), (a / b, x / y), (1 - a, 1 - x),
             (-a, -x), (abs(a), abs(x)), (a ** 2, x ** 2), (a % 1.5, np.fmod(x, 1.5)),
             (a < b, x < y), (a >= 0, x >= 0), (a == b, x == y), (a != 0, x != 0),
             (a @ hd.array(x.T), x @ x.T), (a.T, x.T), (a.sum(), x.sum()),
             (a.mean(axis=1), x.mean(axis=1)), (a.max(axis=0, keepdims=True), x.max(0, keepdims=True)),
             (a.astype(hd.i32), x.astype(np.int32)), (a + y, x + y), (y + a, y + x)]
    assert isinstance(y + a, hd.Array)  # NumPy defers to hd.Array's reflected operators
    for got, want in cases:
        np.testing.assert_allclose(hd.compute(got), want, rtol=1e-6, atol=1e-6)
    i = hd.array(np.array([5, 6, 7], dtype=np.int64))
    np.testing.assert_array_equal(hd.compute((i & 3) | 8), (np.array([5, 6, 7]) & 3) | 8)
    np.testing.assert_array_equal(hd.compute(i << 1), [10, 12, 14])


def test_array_protocols():
    a = hd.array(np.arange(3, dtype=np.float32))
    assert len(a) == 3 and a.rank == 1 and a.ndim == 1 and a.size == 3
    np.testing.assert_array_equal(np.asarray(a + 1), [1, 2, 3])
    assert "f32 (3)" in repr(a)
    with pytest.raises(TypeError, match="where"):
        bool(a > 1)
    with pytest.raises(TypeError):
        hash(a)
    with pytest.raises(TypeError):
        a + "text"


def test_empty_and_rank0():
    assert hd.compute(hd.zeros((0, 3))).shape == (0, 3)
    assert hd.compute(hd.array(np.zeros((0, 3), np.float32)) + 1).shape == (0, 3)
    r = hd.compute(hd.array(np.float32(3)) * 2)
    assert r.shape == () and r == 6


def test_half_formats():
    # float16 arrays are borrowed as f16; bf16 has no NumPy dtype: values travel as float32.
    x = np.array([[0.1, 1.0, 6000.0], [-2.5, 1e-7, 3.0]], dtype=np.float16)
    a = hd.array(x)
    assert a.dtype == hd.f16 and hd.float16 == hd.f16
    y = hd.compute(a * 2)
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, (x.astype(np.float32) * 2).astype(np.float16))
    b = hd.cast(hd.array(np.array([1 / 3, 256.5, -1e-3], dtype=np.float32)), hd.bf16)
    assert b.dtype == hd.bfloat16
    got = hd.compute(b)
    assert got.dtype == np.float32
    # bf16 keeps 8 significant bits (the values PyTorch's .bfloat16() gives): 256.5 ties to 256
    np.testing.assert_array_equal(got, np.array([0.333984375, 256.0, -0.00099945068359375], np.float32))
    assert hd.array(np.array([0.1], np.float32), dtype="bfloat16").dtype == hd.bf16
