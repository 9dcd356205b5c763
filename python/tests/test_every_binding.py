"""Every public name of hedra and its submodules (nn, distributed, aot), and every public method
and property of their classes, is used by some test (by name, in the test files' text, the
script the mpirun test runs included)."""
import inspect
import pathlib
import re

import hedra
from hedra import aot, distributed, nn

HERE = pathlib.Path(__file__).parent
# Names any Python object has, or that Python calls implicitly (covered through operators).
IMPLICIT = {"name", "value"}


def public_names():
    names = set()
    for module in (hedra._hedra, nn, distributed, aot):
        for name, obj in vars(module).items():
            if name.startswith("_") or inspect.ismodule(obj):
                continue
            names.add(name)
            if inspect.isclass(obj) and obj.__module__.startswith("hedra"):
                for member in vars(obj):
                    if not member.startswith("_"):
                        names.add(member)
    return names - IMPLICIT


def test_every_binding_is_used_by_a_test():
    text = "\n".join(p.read_text() for p in [*HERE.glob("test_*.py"), HERE / "data_parallel_script.py"]
                     if p.name != pathlib.Path(__file__).name)
    used = set(re.findall(r"\b\w+\b", text))
    missing = sorted(n for n in public_names() if n not in used)
    assert not missing, f"bindings no test uses: {missing}"
