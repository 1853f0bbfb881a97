"""Linear: y = x W^T + b, one graph node with its forward and backward written by hand."""
import math

import numpy as np

from ..autograd.creation import generator
from ..autograd.dtypes import ShapeError
from ..autograd.function import Function
from ..ops import arrays
from .module import Module, Parameter
from .sizes import check_sizes


def _uniform(bound, *shape):
    return generator().uniform(-bound, bound, shape).astype(np.float32)


class LinearFunction(Function):
    """y = x W^T + b over the last axis of x;  dL/dx = g W,  dL/dW = g^T x,  dL/db = sum of g.

    (Leading axes are just more rows: x is flattened to (N, in) and g to (N, out).)
    """

    @staticmethod
    def forward(ctx, x, weight, bias):
        if x.dtype != weight.dtype:
            raise TypeError(f"linear: input is {x.dtype}, the weights {weight.dtype}; convert the input "
                            "(x.float() / x.double()) or the layer (.float() / .double())")
        if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
            raise ShapeError(
                f"linear: input {x.shape} has {x.shape[-1] if x.ndim else 0} features on its last axis, "
                f"the layer expects {weight.shape[1]} (weight {weight.shape})"
            )
        rows = x.reshape(int(np.prod(x.shape[:-1])), weight.shape[1])  # not -1: no inferring beside a 0
        ctx.save_for_backward(rows, weight)
        ctx.x_shape = x.shape
        y = arrays.matmul(rows, weight.T)
        if bias is not None:
            y += bias
        return y.reshape(x.shape[:-1] + (weight.shape[0],))

    @staticmethod
    def backward(ctx, g):
        rows, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        g_rows = np.ascontiguousarray(g).reshape(rows.shape[0], weight.shape[0])
        grad_x = arrays.matmul(g_rows, weight).reshape(ctx.x_shape) if need_x else None
        grad_w = arrays.matmul(g_rows.T, rows) if need_w else None
        grad_b = arrays.sum_over(g_rows, (0,)) if need_b else None
        return grad_x, grad_w, grad_b


class Linear(Module):
    """y = x W^T + b, W of shape (out, in); PyTorch's init: W and b ~ U(-1/sqrt(in), 1/sqrt(in))."""

    def __init__(self, in_features, out_features, bias=True):
        check_sizes("Linear", in_features=in_features, out_features=out_features)
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = Parameter(_uniform(bound, out_features, in_features))
        self.bias = Parameter(_uniform(bound, out_features)) if bias else None

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
