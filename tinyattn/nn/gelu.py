"""GELU, the Gaussian Error Linear Unit (Hendrycks and Gimpel 2016, arXiv:1606.08415).

    GELU(x) = x * Phi(x),   Phi(x) = (1 + erf(x / sqrt 2)) / 2   the standard normal's CDF

Each input is kept in proportion to how likely a standard normal variable is to be below it:
like ReLU far from 0, smooth near 0. approximate="tanh" is the paper's faster form,
    GELU(x) ~ x/2 * (1 + tanh(u)),   u = sqrt(2/pi) * (x + 0.044715 x^3),
the one BERT and GPT-2 used; both as PyTorch's F.gelu(x, approximate=...).
"""
from ..autograd.dtypes import require_float
from ..autograd.function import Function
from ..ops import arrays

APPROXIMATIONS = ("none", "tanh")


class GELUFunction(Function):
    """y = x Phi(x);  dy/dx = Phi(x) + x phi(x),  phi(x) = exp(-x^2/2) / sqrt(2 pi) (product rule).

    tanh form, t = tanh(u):  dy/dx = (1 + t)/2 + x/2 * (1 - t^2) * sqrt(2/pi) * (1 + 3 * 0.044715 x^2).
    The forward keeps Phi(x) (or t) for the backward (ops/gelu.py holds the array arithmetic).
    """

    @staticmethod
    def forward(ctx, x, approximate):
        y, saved = arrays.gelu(x, approximate)
        ctx.save_for_backward(x, saved)
        ctx.approximate = approximate
        return y

    @staticmethod
    def backward(ctx, grad):
        x, saved = ctx.saved_arrays
        return arrays.gelu_backward(x, saved, grad, ctx.approximate), None


def gelu(x, approximate="none"):
    """x * Phi(x) element-wise (exact, with erf), or its tanh approximation; as PyTorch's F.gelu."""
    if approximate not in APPROXIMATIONS:
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    require_float("gelu", x=x.data)  # as PyTorch's gelu, which has no integer kernel
    return GELUFunction.apply(x, approximate)
