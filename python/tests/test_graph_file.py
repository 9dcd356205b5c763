"""Graph files: a graph built in Python saved, loaded back, compiled, and read by hedra-dump."""
import subprocess

import numpy as np
import pytest

import hedra as hd


def test_save_load_compile(tmp_path):
    x = hd.placeholder((4,), name="x")
    y = hd.exp(x) * hd.array(np.arange(4, dtype=np.float32))
    text = hd.save_graph([y], [x])
    assert '"inputs"' in text
    outputs, placeholders = hd.load_graph(text)
    program = hd.compile(outputs, placeholders)
    xv = np.linspace(0, 1, 4, dtype=np.float32)
    np.testing.assert_allclose(program(xv)[0], np.exp(xv) * np.arange(4), rtol=1e-6)
    path = tmp_path / "g.json"
    hd.save_graph_file(str(path), [y], [x], embed_data=False)  # the data becomes an input
    outputs, placeholders = hd.load_graph_file(str(path))
    assert len(placeholders) == 2
    with pytest.raises(hd.Error):
        hd.load_graph("{not json")


def test_value_is_the_memo():
    a = hd.array(np.ones(3, np.float32)) + 1
    assert a.value() is None
    r = hd.compute(a)
    assert np.shares_memory(a.value(), r)


def test_hedra_dump_reads_a_python_graph(build_dir, tmp_path):
    tool = build_dir / "tools" / "hedra-dump"
    if not tool.exists():
        pytest.skip(f"no {tool}")
    x = hd.placeholder((8, 8), name="x")
    path = tmp_path / "softmax.json"
    hd.save_graph_file(str(path), [hd.sum(hd.exp(x), axis=1)], [x])
    out = subprocess.run([str(tool), "--dump=partition", str(path)], check=True,
                         capture_output=True, text=True)
    assert "placeholder 'x'" in out.stdout and "reduce" in out.stdout
