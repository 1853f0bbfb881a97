"""The squashing functions: tanh, sigmoid and relu, then hardtanh (relu6), hardswish and mish;
each backward under its forward.

Notation as in ops_arithmetic.py: y is the output, g = dL/dy, each return is dL/dx. tanh's and
sigmoid's rules are written with y, the output they kept, so backward computes no exp again.
"""
import numpy as np

from ..ops import arrays
from .function import Function
from .ops_where import grad_where


class Tanh(Function):
    """y = tanh(x);  dL/dx = g * (1 - y^2)."""

    @staticmethod
    def forward(ctx, x):
        y = np.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1 - y * y)


class Sigmoid(Function):
    """y = 1 / (1 + exp(-x)) (stable for x = +-1000, see ops/reference.py's sigmoid);  dL/dx = g * y * (1 - y)."""

    @staticmethod
    def forward(ctx, x):
        y = arrays.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * (1 - y)


class Relu(Function):
    """y = max(x, 0);  dL/dx = g where x > 0, else 0 (the kink at 0 takes 0, as PyTorch).

    A NaN stays NaN (np.maximum passes NaNs through) and passes g on, as PyTorch's relu does."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(~(x <= 0))  # NaN passes its gradient on, as PyTorch's relu does
        return np.maximum(x, x.dtype.type(0))

    @staticmethod
    def backward(ctx, g):
        (positive,) = ctx.saved_tensors
        return grad_where(positive, g)


class Hardtanh(Function):
    """y = x clipped to [lo, hi] (F.hardtanh; F.relu6 is lo = 0, hi = 6);  dL/dx = g where lo < x < hi,
    else 0 (0 at lo and hi too, and g at NaN, as PyTorch)."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(~((x <= lo) | (x >= hi)))
        return np.clip(x, x.dtype.type(lo), x.dtype.type(hi))

    @staticmethod
    def backward(ctx, g):
        (inside,) = ctx.saved_tensors
        return g * inside, None, None


class Hardswish(Function):
    """y = x * relu6(x + 3) / 6: 0 below -3, x above 3, x (x + 3) / 6 between;
    dL/dx = 0 for x <= -3, g (2x + 3) / 6 for -3 < x < 3, g for x >= 3 (PyTorch's choice at -3 and 3)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * np.clip(x + 3, 0, 6) / 6

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * np.where(x <= -3, 0, np.where(x < 3, (2 * x + 3) / 6, 1))


class Mish(Function):
    """y = x tanh(softplus(x)), softplus(x) = log(1 + e^x);  with t = tanh(softplus(x)) and
    softplus' = sigmoid:  dL/dx = g * (t + x * sigmoid(x) * (1 - t^2))."""

    @staticmethod
    def forward(ctx, x):
        t = np.tanh(np.logaddexp(x.dtype.type(0), x))  # logaddexp(0, x) = log(1 + e^x) without overflow
        ctx.save_for_backward(x, t)
        return x * t

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        return g * (t + x * arrays.sigmoid(x) * (1 - t * t))
