"""hd.aot.compile_library: an ahead-of-time library written from Python, linked as a shared
library, loaded with ctypes and called; its results equal hd.compute's."""
import ctypes

import numpy as np
import pytest

import hedra as hd
from hedra import aot

C_TYPES = {hd.f32: ctypes.c_float, hd.f64: ctypes.c_double, hd.i32: ctypes.c_int32,
           hd.i64: ctypes.c_int64}
NUMPY = {hd.f32: np.float32, hd.f64: np.float64, hd.i32: np.int32, hd.i64: np.int64}


def program():
    x = hd.placeholder(hd.Shape([hd.dynamic("batch", 16), 5]), hd.f32, "x")
    w = hd.placeholder([3, 5], hd.f32, "layer.weight")
    y = hd.relu(hd.matmul(x, w.T) - 0.25)
    return [y, y.sum(axis=1), hd.sum(y * y)], [x, w]


def call(lib, args, sizes, workspace=None):
    """Calls <name>_c with `args` (one NumPy array per input) at the symbolic `sizes`, as the
    header documents its arguments (sizes, inputs, outputs, workspace, threads); returns the
    outputs."""
    so = ctypes.CDLL(lib.shared_library)
    function = getattr(so, lib.name + "_c")
    outputs = []
    for o in lib.outputs:
        shape = [sizes[d.split("<=")[0]] if "<=" in d else int(d)
                 for d in o.shape.strip("[]").split(", ") if d]
        outputs.append(np.zeros(shape, NUMPY[o.dtype]))
    pointer = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    argv = [ctypes.c_int64(sizes[n]) for n in lib.sizes]
    argv += [pointer(np.ascontiguousarray(a)) for a in args] + [pointer(o) for o in outputs]
    argv += [ctypes.c_void_p(workspace), ctypes.c_int(1)]
    function.restype = ctypes.c_int
    code = function(*argv)
    if code != 0:
        message = getattr(so, lib.name + "_error_message")
        message.restype = ctypes.c_char_p
        raise RuntimeError(message(code).decode())
    return outputs


def test_a_library_loaded_with_ctypes_computes_what_hedra_computes(tmp_path):
    outputs, inputs = program()
    lib = aot.compile_library("dense_relu", outputs, inputs, str(tmp_path),
                              output_names=["y", "row_sums", "energy"], shared=True)
    assert isinstance(lib, aot.Library) and all(isinstance(a, aot.Argument) for a in lib.inputs)
    assert lib.name == "dense_relu" and lib.target == "openmp" and lib.sizes == ["batch"]
    assert [a.name for a in lib.inputs] == ["x", "layer_weight"]  # made C identifiers
    assert [a.name for a in lib.outputs] == ["y", "row_sums", "energy"]
    assert lib.inputs[0].shape == "[batch<=16, 5]" and lib.inputs[0].dtype == hd.f32
    assert lib.outputs[2].sizes == [] and lib.outputs[2].dtype == hd.f32
    for f in [lib.header, lib.static_library, lib.shared_library]:
        assert f in lib.files and (tmp_path / f.split("/")[-1]).exists()
    assert "int dense_relu_c(" in (tmp_path / "dense_relu.h").read_text()

    rng = np.random.default_rng(3)
    w = rng.normal(size=(3, 5)).astype(np.float32)
    program_ = hd.compile(outputs, inputs)
    for batch in (16, 7, 1):  # the symbolic size at its maximum and below
        x = rng.normal(size=(batch, 5)).astype(np.float32)
        got = call(lib, [x, w], {"batch": batch})
        want = program_(x, w)
        for g, e in zip(got, want):
            assert g.shape == e.shape
            np.testing.assert_array_equal(g, e)  # the JIT's clang and flags: the same bits
        np.testing.assert_allclose(got[0], np.maximum(x @ w.T - 0.25, 0), rtol=1e-5, atol=1e-6)

    # The caller's workspace (64-byte aligned, workspace_bytes long), as the JIT's arena is.
    assert lib.workspace_bytes > 0
    memory = np.zeros(lib.workspace_bytes + 64, np.uint8)
    aligned = memory.ctypes.data + (-memory.ctypes.data % 64)
    x = rng.normal(size=(9, 5)).astype(np.float32)
    for g, e in zip(call(lib, [x, w], {"batch": 9}, workspace=aligned), program_(x, w)):
        np.testing.assert_array_equal(g, e)
    with pytest.raises(RuntimeError, match="align"):
        call(lib, [x, w], {"batch": 9}, workspace=aligned + 1)

    with pytest.raises(RuntimeError, match="batch"):
        call(lib, [np.zeros((17, 5), np.float32), w], {"batch": 17})  # above its maximum


def test_sources_only_and_bad_requests(tmp_path):
    outputs, inputs = program()
    lib = aot.compile_library("sources_only", outputs[0], inputs, str(tmp_path), build=False)
    assert lib.static_library == "" and lib.shared_library is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "sources_only.cpp", "sources_only.h", "sources_only.program.cpp"]
    with pytest.raises(hd.Error, match="identifier"):
        aot.compile_library("not a name", outputs, inputs, str(tmp_path), build=False)
    with pytest.raises(hd.Error, match="placeholder"):
        aot.compile_library("missing_input", outputs, inputs[:1], str(tmp_path), build=False)
    with pytest.raises(hd.Error, match="shared=True needs build=True"):
        aot.compile_library("both", outputs, inputs, str(tmp_path), build=False, shared=True)
