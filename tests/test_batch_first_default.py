"""batch_first is False by default, as PyTorch's, and the project's own code never leans on the default.

A layer borrowed from PyTorch takes PyTorch's (time, batch, features) layout unless told
batch_first=True. With the wrong default, `nn.GRU(3, 4)(x)` on a (T, B, I) input returns the
right shape and wrong numbers, with no error: the parity tests below catch that. The guard
scans the package, demos, notebooks and benchmarks: each constructor call of a layer that has
a batch_first argument must pass it by name, so a change of default (or a merge that brings a
new call) cannot silently reorder the axes of a model. A call that cannot pass it (an old
package version without the argument) says why in a comment starting "# batch_first:".
"""
import ast
import inspect
import pathlib

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = [*sorted((ROOT / "tinyattn").rglob("*.py")), *sorted((ROOT / "demos").rglob("*.py")),
           *sorted((ROOT / "notebooks").glob("*.py")), *sorted((ROOT / "benchmarks").rglob("*.py"))]
EXEMPT = "# batch_first:"


def _layers_with_batch_first():
    """Every class tinyattn.nn exports whose constructor takes batch_first (PyTorch's have the same names)."""
    return {name for name, value in vars(nn).items()
            if inspect.isclass(value) and "batch_first" in inspect.signature(value.__init__).parameters}


def _trees(source):
    """The file's syntax tree, then one per string in it that parses as Python (build.py keeps the
    notebooks' code cells in strings; IPython's %magic lines are dropped first), each with the
    line number in the file of its first line."""
    tree = ast.parse(source)
    yield tree, source, 1
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "(" in node.value:
            cell = "\n".join(line for line in node.value.splitlines() if not line.lstrip().startswith("%"))
            try:
                yield ast.parse(cell), cell, node.lineno
            except SyntaxError:
                continue  # prose


def _calls_without_batch_first(source, names):
    for tree, text, first in _trees(source):
        lines = text.splitlines()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in names and not any(k.arg == "batch_first" for k in node.keywords):
                line = lines[node.lineno - 1]
                if EXEMPT not in line:
                    yield first + node.lineno - 1, line.strip()


def test_the_guard_knows_the_layers():
    assert _layers_with_batch_first() >= {"RNN", "GRU", "LSTM", "MultiheadAttention", "TransformerEncoderLayer",
                                          "TransformerDecoderLayer", "Transformer"}


def test_the_guard_finds_a_call_that_leans_on_the_default():
    names = _layers_with_batch_first()
    source = 'import tinyattn.nn as nn\ngru = nn.GRU(3, 4)\nok = nn.GRU(3, 4, batch_first=False)\n' \
             'old = nn.GRU(3, 4)  # batch_first: an old version without the argument\n' \
             'CELLS = [("code", """mha = MultiheadAttention(8, 2)\n%matplotlib inline""")]\n'
    assert [line for line, _ in _calls_without_batch_first(source, names)] == [2, 5]


def test_project_code_passes_batch_first_explicitly():
    names = _layers_with_batch_first()
    found = [f"{path.relative_to(ROOT)}:{line}: {text}" for path in SOURCES
             for line, text in _calls_without_batch_first(path.read_text(), names)]
    assert not found, ("these calls rely on batch_first's default (False, time first, as PyTorch); pass "
                       "batch_first= explicitly:\n" + "\n".join(found))


def _same_weights(ours, theirs, torch):
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})


def test_gru_default_is_time_first_as_pytorch():
    torch = pytest.importorskip("torch")
    ta.manual_seed(0)
    ours, theirs = nn.GRU(3, 4).double(), torch.nn.GRU(3, 4).double()
    _same_weights(ours, theirs, torch)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))  # (T, B, I), PyTorch's default layout
    out, h_n = ours(ta.tensor(x))
    expected, expected_h = theirs(torch.tensor(x))
    np.testing.assert_allclose(out.data, expected.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(h_n.data, expected_h.detach().numpy(), atol=1e-10)


def test_multihead_attention_default_is_time_first_as_pytorch():
    torch = pytest.importorskip("torch")
    ta.manual_seed(0)
    ours, theirs = nn.MultiheadAttention(8, 2).double(), torch.nn.MultiheadAttention(8, 2).double()
    _same_weights(ours, theirs, torch)
    rng = np.random.default_rng(1)
    q, kv = rng.standard_normal((4, 3, 8)), rng.standard_normal((6, 3, 8))  # (Tq, B, E), (Tk, B, E)
    out, weights = ours(ta.tensor(q), ta.tensor(kv), ta.tensor(kv))
    expected, expected_weights = theirs(*(torch.tensor(a) for a in (q, kv, kv)))
    np.testing.assert_allclose(out.data, expected.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(weights.data, expected_weights.detach().numpy(), atol=1e-10)  # (B, Tq, Tk) both


def test_encoder_layer_default_is_time_first_as_pytorch():
    torch = pytest.importorskip("torch")
    ta.manual_seed(0)
    ours = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0).double()
    theirs = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0).double().eval()
    _same_weights(ours, theirs, torch)
    x = np.random.default_rng(2).standard_normal((5, 3, 8))  # (T, B, d_model)
    padding = np.zeros((3, 5), bool)
    padding[1, 3:] = True  # the mask stays (B, T) in either layout, as PyTorch's
    out = ours(ta.tensor(x), src_key_padding_mask=padding)
    expected = theirs(torch.tensor(x), src_key_padding_mask=torch.tensor(padding))
    np.testing.assert_allclose(out.data, expected.detach().numpy(), atol=1e-10)
