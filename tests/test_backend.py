"""TINYATTN_BACKEND picks every kernel's implementation; a wrong value is a clear error."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tinyattn as ta
from tinyattn.ops import matmul as mm
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

    for module, names in ((mm, ["matmul_numba"]),
                          (sm, ["softmax_numba", "softmax_backward_numba", "log_softmax_numba", "log_softmax_backward_numba"])):
        for name in names:
            monkeypatch.setattr(module, name, forbidden)
    x = ta.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    loss = ((x @ x.T).softmax(-1).sum() + ta.cross_entropy(x, np.array([0, 1, 3])))
    loss.backward()
    assert np.isfinite(x.grad).all()
