"""Every ```python block of docs/python.md (in order, in one namespace) and of README.md runs."""
import re

import pytest


def blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


@pytest.mark.parametrize("doc, least", [("docs/python.md", 8), ("README.md", 1)])
def test_python_snippets_run(repo, tmp_path, monkeypatch, doc, least):
    code_blocks = blocks(repo / doc)
    assert len(code_blocks) >= least
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for i, code in enumerate(code_blocks):
        try:
            exec(compile(code, f"{doc} block {i + 1}", "exec"), namespace)
        except Exception as e:
            raise AssertionError(f"{doc} block {i + 1} failed: {e!r}\n{code}") from e
