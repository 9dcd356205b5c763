"""The installed package: submodule imports, version, and the type stubs for editors."""
import pathlib

import hedra


def test_submodule_imports():
    import hedra.nn
    from hedra.nn import linear
    assert hedra.nn is hedra.nn and linear is hedra.nn.linear
    assert hedra.__version__


def test_type_stubs_are_installed():
    stubs = pathlib.Path(hedra.__file__).parent / "_hedra"
    text = (stubs / "__init__.pyi").read_text()
    assert "def lazy(f: " in text and "-> Array" in text
    assert "class TrainStep" in (stubs / "nn.pyi").read_text()
    assert (pathlib.Path(hedra.__file__).parent / "py.typed").exists()


def test_star_import_keeps_python_builtins():
    namespace = {}
    exec("from hedra import *", namespace)
    assert "lazy" in namespace and "Array" in namespace and "nn" in namespace
    assert "range" not in namespace and "compile" not in namespace and "sum" not in namespace
