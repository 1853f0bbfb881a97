"""Reductions: sum, mean and max over some axes.

Their backward spreads g back over the reduced axes: keep the reduced axes as size 1 (if
keepdims=False removed them) and let broadcasting copy g to the input's shape.
"""
import numpy as np

from .function import Function


def _expand(g, input_shape, axes, keepdims):
    """g reshaped so that it broadcasts against the input: reduced axes back as size 1."""
    if not keepdims:
        g = np.expand_dims(g, axes)
    return g


class Sum(Function):
    """y = sum of x over axes;  dL/dx = g copied along the summed axes."""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        ctx.meta = x.shape, axes, keepdims
        return np.sum(x, axis=axes, keepdims=keepdims)

    @staticmethod
    def backward(ctx, g):
        shape, axes, keepdims = ctx.meta
        return np.broadcast_to(_expand(g, shape, axes, keepdims), shape), None, None


class Mean(Function):
    """y = mean of x over axes (n elements each);  dL/dx = g / n copied along those axes."""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        ctx.meta = x.shape, axes, keepdims
        count = 1
        for axis in axes:
            count *= x.shape[axis]
        ctx.count = count
        return np.mean(x, axis=axes, keepdims=keepdims)

    @staticmethod
    def backward(ctx, g):
        shape, axes, keepdims = ctx.meta
        g = _expand(g, shape, axes, keepdims) / g.dtype.type(ctx.count)
        return np.broadcast_to(g, shape), None, None


class Max(Function):
    """y = max of x over axes;  dL/dx = g at the maximum (shared equally among ties), else 0."""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        if x.size == 0:
            raise ValueError(f"max: tensor of shape {x.shape} is empty, it has no maximum")
        y = np.max(x, axis=axes, keepdims=True)
        is_max = x == y
        ctx.save_for_backward(is_max)
        ctx.meta = x.shape, axes, keepdims
        return y if keepdims else np.squeeze(y, axis=axes)

    @staticmethod
    def backward(ctx, g):
        (is_max,) = ctx.saved_tensors
        shape, axes, keepdims = ctx.meta
        ties = np.sum(is_max, axis=axes, keepdims=True)
        g = _expand(g, shape, axes, keepdims)
        return np.where(is_max, g / ties.astype(g.dtype), 0).astype(g.dtype, copy=False), None, None
