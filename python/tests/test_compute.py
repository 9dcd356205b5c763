"""compute, compile, backends, HEDRA_DUMP, and errors as hd.Error."""
import os

import numpy as np
import pytest

import hedra as hd


def test_compute_several_and_lists():
    a = hd.array(np.arange(4, dtype=np.float32))
    r = hd.compute(a + 1, a * 2)
    assert isinstance(r, tuple) and len(r) == 2
    np.testing.assert_array_equal(r[1], [0, 2, 4, 6])
    (only,) = hd.compute([a - 1])
    np.testing.assert_array_equal(only, [-1, 0, 1, 2])


def test_compile_and_call_zero_copy_inputs():
    x = hd.placeholder((1000,), name="x")
    y = hd.placeholder((1000,), name="y")
    prog = hd.compile(-(hd.tanh(hd.relu(((x + y) * x - y) * 0.5 + 1.0)) * y + x), [x, y])
    assert prog.num_inputs == 2 and prog.num_outputs == 1
    xv, yv = np.random.rand(1000).astype(np.float32), np.random.rand(1000).astype(np.float32)
    want = -(np.tanh(np.maximum(((xv + yv) * xv - yv) * 0.5 + 1.0, 0)) * yv + xv)
    out = prog(xv, yv)
    np.testing.assert_allclose(out, want, rtol=1e-5)
    assert not np.shares_memory(out, prog(xv, yv))  # the earlier result is still held
    both = hd.compile([x + y, x * y], [x, y])(xv, yv)
    assert isinstance(both, tuple) and len(both) == 2


def test_compiled_program_checks_inputs():
    x = hd.placeholder((3,), name="x")
    prog = hd.compile(x * 2, [x])
    with pytest.raises(hd.Error, match="x"):
        prog(np.ones(4, np.float32))
    with pytest.raises(hd.Error, match="inputs given"):
        prog()


def test_symbolic_batch():
    x = hd.placeholder([hd.dynamic("rows", 8), 3])
    prog = hd.compile(hd.sum(x, axis=1), x)
    np.testing.assert_array_equal(prog(np.ones((5, 3), np.float32)), [3] * 5)
    np.testing.assert_array_equal(prog(np.ones((2, 3), np.float32)), [3] * 2)


def test_backends_agree():
    assert "reference" in hd.backend_names() and "openmp" in hd.backend_names()
    x = np.linspace(0, 1, 64, dtype=np.float32).reshape(8, 8)
    y = hd.tanh(hd.matmul(hd.array(x), x)) + 1
    ref = hd.compute(hd.tanh(hd.matmul(hd.array(x), x)) + 1, backend="reference")
    np.testing.assert_allclose(hd.compute(y, backend="openmp"), ref, rtol=1e-5)
    before = hd.default_backend()
    hd.set_default_backend("reference")
    try:
        assert hd.default_backend() == "reference"
    finally:
        hd.set_default_backend(before)
    with pytest.raises(hd.Error, match="nosuch"):
        hd.compute(y + 1, backend="nosuch")


def test_hedra_dump_from_python(tmp_path):
    os.environ["HEDRA_DUMP"] = str(tmp_path)
    try:
        assert hd.dump_enabled()
        x = hd.placeholder((16, 16), name="x")
        hd.compile(hd.sum(hd.exp(x), axis=1), [x], backend="openmp")
    finally:
        del os.environ["HEDRA_DUMP"]
    names = [p.name for p in tmp_path.iterdir()]
    assert any("graph" in n for n in names) and any("schedule" in n for n in names)


def test_error_is_a_hedra_error_with_its_message():
    assert issubclass(hd.Error, Exception)
    with pytest.raises(hd.Error, match="step"):
        hd.range(0, 10, 0)
    with pytest.raises(hd.Error):
        hd.reduce("median", np.ones(3))


def test_tile_sizes_give_the_same_result():
    a = np.random.default_rng(0).random((64, 64), dtype=np.float32)
    x = hd.placeholder((64, 64), name="x")
    y = hd.matmul(x, x)
    np.testing.assert_allclose(hd.compile(y, x, tile_sizes=[8])(a), hd.compile(y, x)(a), rtol=1e-5)
    np.testing.assert_allclose(hd.compute(hd.matmul(a, a), tile_sizes=[16, 8]), a @ a, rtol=1e-4)
