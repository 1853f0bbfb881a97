"""The one door to the kernels: the table, the rule, lazy loading, and TINYATTN_BACKEND."""
import importlib
import os
import pathlib
import pkgutil
import subprocess
import sys

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.ops import arrays, fast_path, kernels, use_backend


def _backend_in_subprocess(value):
    env = dict(os.environ, TINYATTN_BACKEND=value)
    return subprocess.run([sys.executable, "-c", "import tinyattn.ops as o; print(o.get_backend())"],
                          env=env, capture_output=True, text=True)


def test_environment_variable_selects_the_numpy_references():
    assert _backend_in_subprocess("numpy").stdout.strip() == "numpy"
    result = _backend_in_subprocess("cuda")
    assert result.returncode != 0 and "TINYATTN_BACKEND='cuda' is not a backend" in result.stderr


def _compiled_kernels():
    """Every compiled kernel of the package, found by looking: each Numba function in each module
    of tinyattn/ops/kernels (module, name), and each module's entry points named in fast_path.TABLE."""
    import numba.core.registry

    found = []
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"{kernels.__name__}.{info.name}")
        found += [(module, name) for name, value in vars(module).items()
                  if isinstance(value, numba.core.registry.CPUDispatcher) and value.py_func.__module__ == module.__name__]
    return found


def test_every_table_entry_has_its_kernel_and_every_kernel_module_is_in_the_table():
    used = set()
    for name, (module_name, _, _) in fast_path.TABLE.items():
        reference_function = fast_path.reference(name)
        assert callable(fast_path.kernel(name)) and callable(reference_function)
        with use_backend("numba"):
            assert getattr(arrays, name).reference is reference_function
        with use_backend("numpy"):  # the reference itself, no door
            assert getattr(arrays, name) is reference_function
        used.add(module_name)
    helpers = {"fast_exp", "fast_activations"}  # functions the kernels inline, no entry of their own
    assert {info.name for info in pkgutil.iter_modules(kernels.__path__)} == used | helpers


def test_the_engine_loads_no_numba_until_a_kernel_runs():
    script = ("import sys, tinyattn, tinyattn.autograd; before = 'numba' in sys.modules; "
              "x = tinyattn.randn(3, 4, requires_grad=True); x.softmax(-1).sum().backward(); "
              "print(before, 'numba' in sys.modules)")
    env = dict(os.environ, TINYATTN_BACKEND="numba")  # a kernel must be allowed to run
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env=env).stdout.split()
    assert out == ["False", "True"]
    autograd = pathlib.Path(ta.__file__).parent / "autograd"
    assert not [p.name for p in autograd.glob("*.py") if "numba" in p.read_text().lower()]


@pytest.mark.numpy_backend
def test_numpy_backend_runs_no_compiled_kernel(monkeypatch, rng):
    def forbidden(*args, **kwargs):
        raise AssertionError("a Numba kernel ran under the numpy backend")

    found = _compiled_kernels()
    assert len(found) >= 10  # the scan sees them (softmax's two, the gates' four, adam's, ...)
    for module, name in found:
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


# --- float16 never reaches a compiled kernel ---
def test_float16_runs_on_the_references_everywhere():
    rng = np.random.default_rng(0)
    half = lambda *shape: ta.tensor(rng.standard_normal(shape).astype(np.float16), requires_grad=True)  # noqa: E731
    x = half(2, 5)
    for out in (x.softmax(-1), x.log_softmax(-1), ta.cross_entropy(x, np.array([1, 2])),
                F.scaled_dot_product_attention(half(2, 3, 4), half(2, 3, 4), half(2, 3, 4))[0],
                half(2, 3, 1) @ half(2, 1, 4), x.sigmoid(), x.sum(-1)):
        assert out.dtype == np.float16
        out.sum().backward()
    p = nn.Parameter(np.ones(3, np.float16))
    p.grad = np.ones(3, np.float16)
    ta.optim.Adam([p], lr=0.1).step()
    assert p.dtype == np.float16 and np.all(p.data < 1)


def test_kernel_takes_is_the_one_rule():
    from tinyattn.ops import arrays, reference, use_backend
    from tinyattn.ops.fast_path import kernel_takes
    f32, f64, f16 = np.zeros(3, np.float32), np.zeros(3), np.zeros(3, np.float16)
    assert kernel_takes(f32) and kernel_takes(f64, np.zeros(3, bool), np.zeros(3, np.int64))
    assert not kernel_takes(f16) and not kernel_takes(f32, f64) and not kernel_takes(np.zeros(3, np.int64))
    assert not kernel_takes(np.zeros((3, 4)).T, contiguous=True) and kernel_takes(np.zeros((3, 4)).T)
    with use_backend("numpy"):  # no door at all: the op rules call the references
        assert arrays.softmax is reference.softmax
