"""erf against math.erf, and GELU against its definition x * Phi(x) and its tanh form."""
import math

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.ops import gelu as reference_gelu
from tinyattn.ops.erf import erf
from tinyattn.ops.kernels import gelu as kernel


def test_erf_matches_math_erf_to_1e_15_relative_everywhere():
    rng = np.random.default_rng(0)
    points = np.concatenate([
        rng.uniform(-6, 6, 20000),
        rng.standard_normal(2000) * 1e-3,               # near 0, where erf(x) ~ 2x/sqrt(pi)
        np.linspace(-30, 30, 6001),                     # the far tails, erf = +-1
        [0.0, -0.0, 0.46875, -0.46875, 4.0, -4.0, 1e-300, 5e-324, 26.5, -27.0],  # range edges
        np.nextafter(0.46875, [0, 1]), np.nextafter(4.0, [0, 8]),
    ])
    expected = np.array([math.erf(x) for x in points])
    got = erf(points)
    relative = np.abs(got - expected) / np.maximum(np.abs(expected), np.finfo(float).tiny)
    worst = relative.argmax()
    assert relative.max() < 1e-15, f"erf({points[worst]!r}) = {got[worst]!r}, math.erf gives {expected[worst]!r}"


def test_erf_keeps_dtype_sign_and_special_values():
    assert erf(np.array([0.5, -2.0], np.float32)).dtype == np.float32
    np.testing.assert_array_equal(erf(np.array([np.inf, -np.inf, 0.0])), [1.0, -1.0, 0.0])
    assert np.isnan(erf(np.array([np.nan]))[0])
    x = np.linspace(-5, 5, 101)
    np.testing.assert_array_equal(erf(-x), -erf(x))


def test_gelu_is_x_times_the_normal_cdf_and_the_tanh_form_is_close():
    x = np.linspace(-6, 6, 241)
    exact = F.gelu(ta.tensor(x)).data
    np.testing.assert_allclose(exact, [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x], rtol=1e-14, atol=1e-16)
    tanh_form = F.gelu(ta.tensor(x), approximate="tanh").data
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    np.testing.assert_allclose(tanh_form, 0.5 * x * (1 + np.tanh(u)), rtol=1e-14, atol=1e-16)
    assert np.abs(tanh_form - exact).max() < 1e-3  # the paper's approximation is close, not equal
    assert nn.GELU()(ta.tensor(x.astype(np.float32))).dtype == np.float32


def test_gelu_module_and_function_check_approximate():
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        nn.GELU(approximate="erf")
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        F.gelu(ta.tensor([1.0]), approximate=True)


def test_gelu_matches_pytorch_when_installed():
    torch = pytest.importorskip("torch")
    x = np.linspace(-8, 8, 161)
    for approximate in ("none", "tanh"):
        t = torch.tensor(x, requires_grad=True)
        theirs = torch.nn.functional.gelu(t, approximate=approximate)
        theirs.sum().backward()
        ours = ta.tensor(x, requires_grad=True)
        out = F.gelu(ours, approximate=approximate)
        out.sum().backward()
        # both compute 1 + erf(x / sqrt 2), which loses digits to cancellation far left: compare absolutely there
        np.testing.assert_allclose(out.data, theirs.detach().numpy(), rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(ours.grad, t.grad.numpy(), rtol=1e-13, atol=1e-14)


def test_gelu_backward_reuses_the_forwards_normal_cdf(monkeypatch):
    """erf runs once per forward and backward pair (it was the GPT step's largest cost, twice)."""
    import tinyattn.ops.gelu as array_gelu

    calls = []
    monkeypatch.setattr(array_gelu, "erf", lambda x: calls.append(1) or erf(x))
    x = ta.tensor(np.linspace(-3, 3, 12), requires_grad=True)
    with ta.ops.use_backend("numpy"):
        F.gelu(x).sum().backward()
    assert len(calls) == 1
    np.testing.assert_allclose(x.grad, [0.5 * (1 + math.erf(v / math.sqrt(2))) + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi)
                                        for v in np.linspace(-3, 3, 12)], rtol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_kernel_agrees_with_its_reference_at_infinities_and_nan(dtype, approximate):
    """The float32 kernel clamped |x| and gave gelu(-inf) = -inf where the reference (and PyTorch)
    give NaN (-inf * Phi(-inf) = -inf * 0)."""
    x = np.array([-np.inf, np.inf, np.nan, -3.0, 0.0, 2.0], dtype)
    want, _ = reference_gelu.gelu(x, approximate)
    got, _ = kernel.gelu(x, approximate)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-5 if dtype == np.float32 else 1e-12)
