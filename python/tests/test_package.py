"""The installed package: submodule imports, version, and the type stubs for editors."""
import ast
import pathlib

import hedra


def test_submodule_imports():
    import hedra.aot
    import hedra.distributed
    import hedra.nn
    from hedra.nn import linear
    assert hedra.nn is hedra.nn and linear is hedra.nn.linear
    assert hedra.distributed.DataParallelTrainer and hedra.aot.compile_library
    assert hedra.__version__


def test_type_stubs_are_installed():
    stubs = pathlib.Path(hedra.__file__).parent / "_hedra"
    text = (stubs / "__init__.pyi").read_text()
    assert "def lazy(f: " in text and "-> Array" in text
    assert "class TrainStep" in (stubs / "nn.pyi").read_text()
    assert (pathlib.Path(hedra.__file__).parent / "py.typed").exists()


STUBS = ["__init__.pyi", "nn.pyi", "distributed.pyi", "aot.pyi"]
# Signatures whose bare `object` is the truth, with why.
OBJECT_ALLOWED = {
    # a PyCapsule: types.CapsuleType exists from Python 3.13 only
    "Array.__dlpack__ -> return",
}


def stub_functions(text):
    """(qualified name, function node) for every def of a stub, methods included."""
    def walk(nodes, prefix):
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                yield from walk(node.body, prefix + node.name + ".")
            elif isinstance(node, ast.FunctionDef):
                yield prefix + node.name, node
    return list(walk(ast.parse(text).body, ""))


def bare_objects(text):
    """'name -> parameter' for every parameter or return the stub types as bare `object`."""
    found = []
    for name, f in stub_functions(text):
        a = f.args
        for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
            if arg is not None and arg.annotation is not None and \
                    ast.unparse(arg.annotation) == "object":
                found.append(f"{name} -> {arg.arg}")
        if f.returns is not None and ast.unparse(f.returns) == "object":
            found.append(f"{name} -> return")
    return found


def test_stubs_name_real_types():
    stubs = pathlib.Path(hedra.__file__).parent / "_hedra"
    texts = {s: (stubs / s).read_text() for s in STUBS}
    found = [f"{s}: {b}" for s, t in texts.items() for b in bare_objects(t)]
    allowed = {f"__init__.pyi: {a}" for a in OBJECT_ALLOWED}
    assert sorted(set(found) - allowed) == []
    assert allowed <= set(found), "an allowed exception is gone: drop it from OBJECT_ALLOWED"
    init = texts["__init__.pyi"]
    assert "def array(data: numpy.typing.ArrayLike" in init
    assert "def exp(x: Sym | Array | numpy.typing.ArrayLike) -> Sym | Array" in init
    assert "def zeros(shape: Shape | Sequence[int | Range], dtype: DType | str | type | " \
           "numpy.dtype | None = None) -> Array" in init
    assert "def linear(x: hedra._hedra.Array | numpy.typing.ArrayLike" in texts["nn.pyi"]
    assert "def step(self, inputs: Sequence[hedra._hedra.Array | numpy.typing.ArrayLike], " \
           "lr: float | None = None) -> float" in texts["distributed.pyi"]
    nn = texts["nn.pyi"]
    assert "loss: Callable[[list[hedra._hedra.Array], list[hedra._hedra.Array]], " in nn
    assert "forward: Callable[[list[hedra._hedra.Array], hedra._hedra.Array], " \
           "hedra._hedra.Array]" in nn
    assert "def evaluate(self, inputs: Sequence[hedra._hedra.Array | numpy.typing.ArrayLike]) " \
           "-> tuple[float, list[numpy.typing.NDArray[Any]]]" in nn
    assert "| None | None" not in "".join(texts.values())


def test_the_stub_check_finds_bare_objects():
    stub = "class A:\n    def f(self, x: object, y: int) -> object: ...\ndef g(*a: object) -> int: ...\n"
    assert bare_objects(stub) == ["A.f -> x", "A.f -> return", "g -> a"]


def test_star_import_keeps_python_builtins():
    namespace = {}
    exec("from hedra import *", namespace)
    assert "lazy" in namespace and "Array" in namespace and "nn" in namespace
    assert "range" not in namespace and "compile" not in namespace and "sum" not in namespace
