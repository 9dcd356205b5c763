"""Every ```python block of docs/python.md runs, in order, in one namespace."""
import re


def test_docs_python_md_snippets_run(repo, tmp_path, monkeypatch):
    text = (repo / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 8
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for i, code in enumerate(blocks):
        try:
            exec(compile(code, f"docs/python.md block {i + 1}", "exec"), namespace)
        except Exception as e:
            raise AssertionError(f"docs/python.md block {i + 1} failed: {e!r}\n{code}") from e
