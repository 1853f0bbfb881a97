"""The max over some axes (ta.max, x.max(), and min through -max(-x)).

Unlike sum and mean (ops_reduce.py), whose backward spreads g over every input, max sends g
only to the maxima: the other inputs did not change the result.
"""
import numpy as np

from .function import Function


class Max(Function):
    """y = max of x over axes;  dL/dx = g at the maximum (shared equally among ties), else 0."""

    @staticmethod
    def forward(ctx, x, axes, keepdims):
        if x.size == 0:
            raise ValueError(f"max: tensor of shape {x.shape} is empty, it has no maximum")
        y = np.max(x, axis=axes, keepdims=True)
        is_max = (x == y) | (np.isnan(x) & np.isnan(y))  # a NaN is the maximum of its row, as in PyTorch
        ctx.save_for_backward(is_max)
        ctx.meta = axes, y.shape
        return y if keepdims else np.squeeze(y, axis=axes)

    @staticmethod
    def backward(ctx, g):
        (is_max,) = ctx.saved_tensors
        axes, kept_shape = ctx.meta
        ties = np.sum(is_max, axis=axes, keepdims=True)
        share = g.reshape(kept_shape) / ties.astype(g.dtype)
        return np.where(is_max, share, g.dtype.type(0)), None, None
