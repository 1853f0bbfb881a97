"""LayerNorm: each position normalised over its last axes, one graph node with its backward written by hand."""
import numpy as np

from ..autograd.dtypes import ShapeError, require_float
from ..autograd.function import Function
from ..ops import arrays
from .module import Module, Parameter
from .sizes import check_sizes


class LayerNormFunction(Function):
    """y = x_hat * w + b, x_hat = (x - mean) / sqrt(var + eps) over the last axes (biased var); w, b optional.

    With h = g * w and means over the normalised axes:
    dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) / sqrt(var + eps),
    dL/dw = sum over the other axes of g * x_hat,  dL/db = sum of g.   (ops/layer_norm.py: x_hat, y, dL/dx)
    """

    @staticmethod
    def forward(ctx, x, weight, bias, axes, eps):
        y, x_hat, inv_std = arrays.layer_norm(x, axes, weight, bias, eps)
        ctx.save_for_backward(x_hat, inv_std, weight)
        ctx.axes = axes
        return y

    @staticmethod
    def backward(ctx, g):
        x_hat, inv_std, weight = ctx.saved_tensors
        other_axes = tuple(range(g.ndim - len(ctx.axes)))
        _, need_w, need_b, _, _ = ctx.needs_input_grad
        grad_x = arrays.layer_norm_backward(g, ctx.axes, x_hat, inv_std, weight)
        grad_w = (g * x_hat).sum(axis=other_axes) if need_w else None
        grad_b = g.sum(axis=other_axes) if need_b else None
        return grad_x, grad_w, grad_b, None, None


class LayerNorm(Module):
    """Normalise each sample over its last axes, then scale and shift (PyTorch's LayerNorm).

    elementwise_affine=False keeps neither weight nor bias; bias=False keeps the weight only.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
        check_sizes("LayerNorm", **{f"normalized_shape[{i}]": n for i, n in enumerate(shape)})
        self.normalized_shape, self.eps = shape, eps
        self.weight = Parameter(np.ones(shape, np.float32)) if elementwise_affine else None
        self.bias = Parameter(np.zeros(shape, np.float32)) if elementwise_affine and bias else None

    def forward(self, x):
        n = len(self.normalized_shape)
        if tuple(x.shape[-n:]) != self.normalized_shape:
            raise ShapeError(f"LayerNorm: input {x.shape} does not end in normalized_shape {self.normalized_shape}")
        require_float("LayerNorm", input=x.data)
        axes = tuple(range(x.ndim - n, x.ndim))
        return LayerNormFunction.apply(x, self.weight, self.bias, axes, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}"
