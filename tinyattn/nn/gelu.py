"""GELU, the Gaussian Error Linear Unit (Hendrycks and Gimpel 2016, arXiv:1606.08415).

    GELU(x) = x * Phi(x),   Phi(x) = (1 + erf(x / sqrt 2)) / 2   the standard normal's CDF

Each input is kept in proportion to how likely a standard normal variable is to be below it:
like ReLU far from 0, smooth near 0. approximate="tanh" is the paper's faster form,
    GELU(x) ~ x/2 * (1 + tanh(u)),   u = sqrt(2/pi) * (x + 0.044715 x^3),
the one BERT and GPT-2 used; both as PyTorch's F.gelu(x, approximate=...).
"""
import math

import numpy as np

from ..autograd.errors import require_float
from ..autograd.function import Function
from ..ops.erf import erf

APPROXIMATIONS = ("none", "tanh")
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_CUBIC = 0.044715


class GELUFunction(Function):
    """y = x Phi(x);  dy/dx = Phi(x) + x phi(x),  phi(x) = exp(-x^2/2) / sqrt(2 pi) (product rule).

    tanh form, t = tanh(u):  dy/dx = (1 + t)/2 + x/2 * (1 - t^2) * sqrt(2/pi) * (1 + 3 * 0.044715 x^2).
    """

    @staticmethod
    def forward(ctx, x, approximate):
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        if approximate == "tanh":
            return 0.5 * x * (1 + np.tanh(x.dtype.type(_SQRT_2_OVER_PI) * (x + x.dtype.type(_CUBIC) * x ** 3)))
        return x * _normal_cdf(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        dtype = x.dtype.type
        if ctx.approximate == "tanh":
            t = np.tanh(dtype(_SQRT_2_OVER_PI) * (x + dtype(_CUBIC) * x ** 3))
            du_dx = dtype(_SQRT_2_OVER_PI) * (1 + dtype(3 * _CUBIC) * x * x)
            return grad * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du_dx), None
        normal_pdf = np.exp(-0.5 * x * x) * dtype(1 / math.sqrt(2 * math.pi))
        return grad * (_normal_cdf(x) + x * normal_pdf), None


def _normal_cdf(x):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2, in x's dtype."""
    return (0.5 * (1 + erf(x * x.dtype.type(1 / math.sqrt(2))))).astype(x.dtype)


def gelu(x, approximate="none"):
    """x * Phi(x) element-wise (exact, with erf), or its tanh approximation; as PyTorch's F.gelu."""
    if approximate not in APPROXIMATIONS:
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    require_float("gelu", x=x.data)  # as PyTorch's gelu, which has no integer kernel
    return GELUFunction.apply(x, approximate)
