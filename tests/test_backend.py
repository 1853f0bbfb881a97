"""TINYATTN_BACKEND picks every kernel's implementation; a wrong value is a clear error."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.ops import additive_attention as aa
from tinyattn.ops import adam, recurrent_gates, scatter_rows, sigmoid
from tinyattn.ops import softmax as sm


def _backend_in_subprocess(value):
    env = dict(os.environ, TINYATTN_BACKEND=value)
    return subprocess.run([sys.executable, "-c", "import tinyattn.ops as o; print(o.get_backend())"],
                          env=env, capture_output=True, text=True)


def test_environment_variable_selects_the_numpy_references():
    assert _backend_in_subprocess("numpy").stdout.strip() == "numpy"
    result = _backend_in_subprocess("cuda")
    assert result.returncode != 0 and "TINYATTN_BACKEND='cuda' is not a backend" in result.stderr


@pytest.mark.numpy_backend
def test_numpy_backend_runs_no_numba_kernel(monkeypatch, rng):
    def forbidden(*args, **kwargs):
        raise AssertionError("a Numba kernel ran under the numpy backend")

    for module, names in ((sm, ["softmax_numba", "softmax_backward_numba", "log_softmax_numba", "log_softmax_backward_numba"]),
                          (aa, ["through_pair_tanh_numba"]),
                          (recurrent_gates, ["_gru_forward_kernel", "_gru_backward_kernel",
                                             "_lstm_forward_kernel", "_lstm_backward_kernel"]),
                          (adam, ["_adam_kernel"]), (scatter_rows, ["_scatter_kernel"]), (sigmoid, ["sigmoid_numba"])):
        for name in names:
            monkeypatch.setattr(module, name, forbidden)
    x = ta.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    loss = ((x @ x.T).softmax(-1).sum() + ta.cross_entropy(x, np.array([0, 1, 3])) + x.sigmoid().sum())
    attention, gru, lstm = nn.Attention(4, 4, score="additive"), nn.GRUCell(4, 4), nn.LSTMCell(4, 4)
    embedding = nn.Embedding(5, 4)
    for module in (attention, gru, lstm, embedding):
        module.double()
    keys = (x + embedding(np.array([1, 2, 1]))).reshape(1, 3, 4)
    context, _ = attention(x[:1].reshape(1, 1, 4), keys, keys)
    h, c = lstm(x, (gru(x, x), x))
    loss = loss + context.sum() + (h * c).sum()
    loss.backward()
    ta.optim.Adam(list(gru.parameters()), lr=0.1).step()
    assert np.isfinite(x.grad).all()
