"""Outputs and every gradient equal PyTorch's, from fixtures written by make_torch_fixtures.py.

The fixtures are committed, so this runs (and must pass) where PyTorch is not installed.
"""
import contextlib
from pathlib import Path

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn

FIXTURES = Path(__file__).parent / "fixtures"


def _load(name):
    with np.load(FIXTURES / f"torch_{name}.npz", allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _group(fixture, prefix):
    return {k[len(prefix):]: v for k, v in fixture.items() if k.startswith(prefix)}


def _check(name, module, run, fused=None):
    """fused: True or False runs `run` with the switch so; None leaves it as it is."""
    fixture = _load(name)
    if module is not None:
        module.double()
        module.load_state_dict(_group(fixture, "param."))
    inputs = {k: ta.tensor(v, requires_grad=v.dtype.kind == "f") for k, v in _group(fixture, "input.").items()}
    with ta.fused(fused) if fused is not None else contextlib.nullcontext():
        outputs = run(module, fixture, **inputs)
    count = len(_group(fixture, "output."))
    assert len(outputs) == count
    for i, out in enumerate(outputs):
        np.testing.assert_allclose(out.data, fixture[f"output.{i}"], rtol=1e-6, atol=1e-9, err_msg=f"{name} output {i}")
    ta.backward(list(outputs), [fixture[f"upstream.{i}"] for i in range(count)])
    for k, expected in _group(fixture, "grad.input.").items():
        np.testing.assert_allclose(inputs[k].grad, expected, rtol=1e-6, atol=1e-9, err_msg=f"{name} d/d{k}")
    if module is not None:
        params = dict(module.named_parameters())
        for k, expected in _group(fixture, "grad.param.").items():
            np.testing.assert_allclose(params[k].grad, expected, rtol=1e-6, atol=1e-9, err_msg=f"{name} d/d{k}")


def test_linear_matches_pytorch():
    _check("linear", nn.Linear(4, 3), lambda m, f, x: (m(x),))


def test_layernorm_matches_pytorch():
    _check("layernorm", nn.LayerNorm(5), lambda m, f, x: (m(x),))


def test_cross_entropy_matches_pytorch():
    _check("cross_entropy", None,
           lambda m, f, logits: (ta.cross_entropy(logits, f["meta.target"], ignore_index=int(f["meta.ignore_index"])),))


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "reference"])
@pytest.mark.parametrize("name, cls", [("rnn_cell", nn.RNNCell), ("gru_cell", nn.GRUCell)])
def test_cells_match_pytorch(name, cls, fused):
    _check(name, cls(4, 5), lambda m, f, x, h: (m(x, h),), fused)


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "reference"])
def test_lstm_cell_matches_pytorch(fused):
    _check("lstm_cell", nn.LSTMCell(4, 5), lambda m, f, x, h, c: m(x, (h, c)), fused)


def _run_layer(m, f, x, h0, c0=None):
    out, state = m(x, h0 if c0 is None else (h0, c0), lengths=f["meta.lengths"])
    return (out, *state) if isinstance(state, tuple) else (out, state)


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "reference"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("kind, cls", [("rnn", nn.RNN), ("gru", nn.GRU), ("lstm", nn.LSTM)])
def test_sequence_layers_with_lengths_match_pytorch(kind, cls, bidirectional, fused):
    name = f"{kind}_{'bi' if bidirectional else 'uni'}"
    _check(name, cls(4, 5, bidirectional=bidirectional, batch_first=True), _run_layer, fused)


def test_sdpa_matches_pytorch():
    import tinyattn.nn.functional as F

    _check("sdpa", None, lambda m, f, q, k, v: (F.scaled_dot_product_attention(q, k, v, mask=f["meta.mask"])[0],))


def test_multihead_attention_loads_pytorchs_state_dict_and_matches_it():
    """PyTorch's packed in_proj_weight (3E, E) loads as it is; meta.mask is True on the real keys."""
    _check("mha", nn.MultiheadAttention(6, num_heads=2, batch_first=True),
           lambda m, f, query, key, value: m(query, key, value, key_padding_mask=~f["meta.mask"],
                                             average_attn_weights=False))


@pytest.mark.parametrize("name, make", [
    ("sgd", lambda p: ta.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01)),
    ("adam", lambda p: ta.optim.Adam([p], lr=0.01, betas=(0.8, 0.99), eps=1e-8, weight_decay=0.01)),
])
def test_optimisers_follow_pytorch_step_by_step(name, make):
    fixture = _load(f"optim_{name}")
    param = nn.Parameter(fixture["start"].copy())
    opt = make(param)
    for g, expected in zip(fixture["grads"], fixture["iterates"]):
        param.grad = g.copy()
        opt.step()
        np.testing.assert_allclose(param.data, expected, rtol=1e-12, atol=1e-14)
