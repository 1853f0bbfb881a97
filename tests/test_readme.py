"""The README's code runs as printed, and its two commands are the ones CI uses."""
import re
from pathlib import Path

import numpy as np

import tinyattn as ta

README = Path(__file__).resolve().parents[1] / "README.md"


def _numeric_grad(f, x, eps=1e-6):
    """Central differences of the scalar f at x, element by element (independent of tinyattn)."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def test_readme_python_examples_run_and_print_what_they_say(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the examples write checkpoint.npz and weights.png here
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 2
    namespace = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)
    q, k = namespace["q"], namespace["k"]

    def loss(qd, kd):  # the README's loss, in plain numpy
        s = qd @ kd.T / 2.0
        w = np.exp(s - s.max(-1, keepdims=True))
        return float(((w / w.sum(-1, keepdims=True)) * np.arange(3.0)).sum())

    np.testing.assert_allclose(q.grad, _numeric_grad(lambda x: loss(x, k.data), q.data), atol=1e-8)
    np.testing.assert_allclose(k.grad, _numeric_grad(lambda x: loss(q.data, x), k.data), atol=1e-8)
    assert capsys.readouterr().out.strip().splitlines()[-1] == "True"  # the gradcheck line

    exec(compile(blocks[1], str(README), "exec"), namespace)
    weights, lengths = namespace["weights"].data, [7, 5, 3, 6]
    assert weights.shape == (4, 1, 7)
    for b, n in enumerate(lengths):  # padding gets no attention; the real words share all of it
        assert not weights[b, 0, n:].any() and abs(weights[b, 0, :n].sum() - 1) < 1e-6
    saved = ta.load(tmp_path / "checkpoint.npz")
    for name, value in namespace["encoder"].state_dict().items():
        np.testing.assert_array_equal(saved["encoder"][name], value)
    assert saved["opt"]["param_groups"][0]["lr"] == 1e-3
    assert (tmp_path / "weights.png").stat().st_size > 5000


def test_docs_python_snippets_run(capsys):
    docs = sorted(d for d in (README.parent / "docs").glob("*.md") if d.name != "API.md")  # API.md: a sketch
    ran = 0
    for doc in docs:
        for block in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S):
            with ta.fused(True):  # the docs describe the default, whatever TINYATTN_FUSED says
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
