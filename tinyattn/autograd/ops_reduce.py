"""Reductions: sum and mean over some axes (max, whose gradient goes to the maximum only, is ops_max.py).

Their backward spreads g back over the reduced axes: keep the reduced axes as size 1 (if
keepdims=False removed them) and let broadcasting copy g to the input's shape.
"""
import numpy as np

from ..ops import arrays
from .function import Function


def _kept_shape(shape, axes):
    """The input's shape with the reduced axes (None: all) as size 1: g in it broadcasts back."""
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if axis in axes else size for axis, size in enumerate(shape))


def _spread(g, shape, kept_shape):
    """g copied along the reduced axes to the input's shape (one allocation, no temporaries)."""
    out = np.empty(shape, g.dtype)
    out[...] = g.reshape(kept_shape)
    return out


class Sum(Function):
    """y = sum of x over axes;  dL/dx = g copied along the summed axes."""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        ctx.shapes = x.shape, _kept_shape(x.shape, axes)
        return arrays.sum_over(x, axes, keepdims)

    @staticmethod
    def backward(ctx, g):
        return _spread(g, *ctx.shapes), None, None


class Mean(Function):
    """y = mean of x over axes (n elements each);  dL/dx = g / n copied along those axes."""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        ctx.shapes = x.shape, _kept_shape(x.shape, axes)
        # numpy's rules (Tensor.mean has refused integers): float16 adds in float32 (float16 ends
        # at 65504), an empty mean is NaN
        if x.dtype == np.float16 or x.size == 0:
            y = np.mean(x, axis=axes, keepdims=keepdims)
            ctx.count = max(1, x.size // max(1, np.size(y)))
            return y
        total = arrays.sum_over(x, axes, keepdims)
        ctx.count = x.size // np.size(total)  # how many inputs each output averages
        return total / x.dtype.type(ctx.count)

    @staticmethod
    def backward(ctx, g):
        return _spread(g / g.dtype.type(ctx.count), *ctx.shapes), None, None

