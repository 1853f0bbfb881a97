"""Every Function of tests/registry.py against its PyTorch counterpart (tests/torch_counterparts.py):
hypothesis draws shapes (0-d, zero-size, broadcast), layouts (transposed, strided) and values
(NaN, +-inf, 0 and large ones among ordinary values) in float64 and float32; the outputs and the
gradients of a random upstream gradient must equal torch's: NaN where torch has NaN, the same
infinities, the same dtype and shape, values to a tolerance. Where torch refuses the inputs,
tinyattn must refuse them too. Runs where torch is installed; skips with the reason where not."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import tinyattn as ta
from tinyattn.autograd.tensor import wrap

from .registry import CASES
from .torch_counterparts import NO_COUNTERPART, ROWS, torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed: the differential test against "
                                                       "PyTorch runs where it is (pip install torch)")
TOLERANCE = {np.dtype(np.float64): dict(rtol=1e-7, atol=1e-9), np.dtype(np.float32): dict(rtol=2e-4, atol=2e-4)}
SETTINGS = settings(max_examples=8, derandomize=True, database=None, deadline=None, print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])


def test_every_registry_function_has_a_counterpart_or_a_reason():
    compared = {param.values[0] for param in ROWS}
    missing = sorted(f.__name__ for f in {f for f, *_ in CASES} - compared - set(NO_COUNTERPART))
    assert not missing, f"registry Functions neither compared with torch nor given a reason in tests/torch_counterparts.py: {missing}"
    assert all(isinstance(why, str) and why for why in NO_COUNTERPART.values())
    assert not compared & set(NO_COUNTERPART), "a Function both compared and excused"


def _is_float_array(a):
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _torch_arg(a):
    if _is_float_array(a):
        return torch.from_numpy(a).requires_grad_()  # the same strides: torch sees the layout too
    return torch.from_numpy(a) if isinstance(a, np.ndarray) else a


def _compare(ours, theirs, args):
    """Run both on `args`; assert equal outputs and gradients; return the names of our outputs' Functions."""
    mine = [wrap(a).requires_grad_() if _is_float_array(a) else a for a in args]
    yours = [_torch_arg(a) for a in args]
    try:
        expected = _as_tuple(theirs(*yours))
    except (RuntimeError, IndexError, ValueError) as refusal:
        with pytest.raises(Exception):  # torch refuses these inputs: so must tinyattn (any clear error)
            ours(*mine)
            pytest.fail(f"torch refuses ({refusal}), tinyattn answers")
        return set()
    out = _as_tuple(ours(*mine))
    assert len(out) == len(expected), f"{len(out)} outputs, torch gives {len(expected)}"
    rng = np.random.default_rng(0)
    roots, ups, torch_roots = [], [], []
    for i, (o, e) in enumerate(zip(out, expected)):
        want = e.detach().numpy()
        assert o.data.shape == want.shape and o.data.dtype == want.dtype, \
            f"output {i}: {o.data.dtype}{o.data.shape}, torch {want.dtype}{want.shape}"
        if want.dtype.kind != "f":
            np.testing.assert_array_equal(o.data, want, err_msg=f"output {i}")
            continue
        np.testing.assert_allclose(o.data, want, equal_nan=True, err_msg=f"output {i}", **TOLERANCE[want.dtype])
        assert o.requires_grad == e.requires_grad, f"output {i}: requires_grad {o.requires_grad}, torch {e.requires_grad}"
        if e.requires_grad:
            up = rng.standard_normal(want.shape).astype(want.dtype)
            roots.append(o), ups.append(up), torch_roots.append(e)
    if roots:
        ta.backward(roots, ups)
        torch.autograd.backward(torch_roots, [torch.from_numpy(u) for u in ups])
    for i, (m, y) in enumerate(zip(mine, yours)):
        if not _is_float_array(args[i]):
            continue
        want = np.zeros(y.shape, args[i].dtype) if y.grad is None else y.grad.numpy()
        got = np.zeros(m.shape, args[i].dtype) if m.grad is None else m.grad
        assert got.dtype == want.dtype and got.shape == want.shape, f"d/d input {i}: {got.dtype}{got.shape}"
        np.testing.assert_allclose(got, want, equal_nan=True, err_msg=f"gradient of input {i}", **TOLERANCE[want.dtype])
    return {o.grad_fn for o in out}


@needs_torch
@pytest.mark.parametrize("function, name, ours, theirs, inputs, dtype", ROWS)
def test_forward_and_gradients_equal_torchs(function, name, ours, theirs, inputs, dtype):
    made_by = set()

    @SETTINGS
    @given(args=inputs(dtype))
    def check(args):
        made_by.update(_compare(ours, theirs, args))

    check()
    assert function.__name__ in made_by, f"{name}: no drawn example went through {function.__name__}"


# --- disagreements the comparison found, fixed here (each checked without torch) -------------------
@pytest.mark.parametrize("n_in, n_out", [(0, 3), (2, 0), (0, 0)])
def test_linear_with_no_features_in_or_out_gives_zeros_as_torch(n_in, n_out):
    x = ta.tensor(np.ones((4, n_in)), requires_grad=True)
    w = ta.tensor(np.ones((n_out, n_in)), requires_grad=True)
    b = ta.tensor(np.full(n_out, 0.5), requires_grad=True)
    y = ta.nn.LinearFunction.apply(x, w, b)
    assert y.shape == (4, n_out) and np.all(y.data == 0.5)
    y.backward(np.ones(y.shape))
    assert x.grad.shape == (4, n_in) and not x.grad.any() and w.grad.shape == (n_out, n_in)
    assert np.all(b.grad == 4.0)
