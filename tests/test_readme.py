"""The README's code runs as printed, and its two commands are the ones CI uses."""
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples write checkpoint.npz and weights.png here
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2
    namespace = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    assert (tmp_path / "checkpoint.npz").exists() and (tmp_path / "weights.png").exists()


def test_docs_python_snippets_run(capsys):
    docs = sorted(d for d in (README.parent / "docs").glob("*.md") if d.name != "API.md")  # API.md: a sketch
    ran = 0
    for doc in docs:
        for block in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S):
            exec(compile(block, str(doc), "exec"), {})
            ran += 1
    assert ran >= 4
    assert "True" in capsys.readouterr().out


def test_readme_opens_with_the_demo_and_test_commands():
    first_block = re.search(r"```bash\n(.*?)```", README.read_text(), flags=re.S).group(1).strip().splitlines()
    assert len(first_block) == 2
    assert first_block[0].endswith("demos/translate.py")
    assert first_block[1].endswith("-m pytest") and '".[test]"' in first_block[1]
    ci = (README.parent / ".ci" / "run").read_text()
    assert "pytest" in ci and "README.md" in ci
