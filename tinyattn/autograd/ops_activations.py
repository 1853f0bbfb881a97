"""The squashing functions: tanh, sigmoid and relu, each backward under its forward.

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
