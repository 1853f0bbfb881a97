"""The layers: Linear, LayerNorm and Embedding, each one graph node with its forward and backward
written by hand followed by its Module, then the small modules without weights (Dropout and the
activations, wrappers of nn.functional).

    Linear     y = x W^T + b
    LayerNorm  each position normalised over its last axes (ops/reference.py: its array math)
    Embedding  a lookup table of word vectors
"""
import math

import numpy as np

from ..autograd.creation import generator
from ..autograd.dtypes import ShapeError, require_float
from ..autograd.function import Function
from ..ops import arrays
from . import functional as F
from .gelu import APPROXIMATIONS
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
        rows = x.reshape(math.prod(x.shape[:-1]), weight.shape[1])  # not -1: no inferring beside a 0
        ctx.save_for_backward(rows, weight)
        ctx.x_shape = x.shape
        y = arrays.matmul(rows, weight.T)
        if bias is not None:
            y += bias
        return y.reshape(x.shape[:-1] + (weight.shape[0],))

    @staticmethod
    def backward(ctx, g):
        rows, weight = ctx.saved_arrays
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


class LayerNormFunction(Function):
    """y = x_hat * w + b, x_hat = (x - mean) / sqrt(var + eps) over the last axes (biased var); w, b optional.

    With h = g * w and means over the normalised axes:
    dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) / sqrt(var + eps),
    dL/dw = sum over the other axes of g * x_hat,  dL/db = sum of g.   (ops/reference.py: x_hat, y, dL/dx)
    """

    @staticmethod
    def forward(ctx, x, weight, bias, axes, eps):
        y, x_hat, inv_std = arrays.layer_norm(x, axes, weight, bias, eps)
        ctx.save_for_backward(x_hat, inv_std, weight)
        ctx.axes = axes
        return y

    @staticmethod
    def backward(ctx, g):
        x_hat, inv_std, weight = ctx.saved_arrays
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


class EmbeddingFunction(Function):
    """y = W[indices];  dL/dW = zeros with each g row added at its index (a repeated word adds up).

    The padding row gets no gradient, so it stays as it was (zeros from init) while training.
    """

    @staticmethod
    def forward(ctx, weight, indices, padding_idx):
        ctx.save_for_backward(indices)
        ctx.meta = weight.shape, padding_idx
        return weight[indices]

    @staticmethod
    def backward(ctx, g):
        (indices,) = ctx.saved_arrays
        shape, padding_idx = ctx.meta
        grad = arrays.scatter_rows(indices.reshape(-1), g.reshape(-1, shape[1]), shape[0])
        if padding_idx is not None:
            grad[padding_idx] = 0
        return grad, None, None


class Embedding(Module):
    """A table of num_embeddings vectors, looked up by integer index; PyTorch's init N(0, 1)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        check_sizes("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise ValueError(f"Embedding: padding_idx {padding_idx} is not a row of the table; it must lie in "
                             f"[{-num_embeddings}, {num_embeddings - 1}] (num_embeddings = {num_embeddings})")
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        self.padding_idx = padding_idx
        table = generator().standard_normal((num_embeddings, embedding_dim)).astype(np.float32)
        if padding_idx is not None:
            table[padding_idx] = 0
        self.weight = Parameter(table)

    def forward(self, indices):
        indices = np.asarray(getattr(indices, "data", indices))
        if indices.dtype.kind not in "iu":
            raise TypeError(f"Embedding: indices must be integers, got {indices.dtype}")
        if indices.size and (indices.min() < 0 or indices.max() >= self.num_embeddings):
            bad = indices[(indices < 0) | (indices >= self.num_embeddings)].flat[0]
            raise IndexError(f"Embedding: index {bad} is out of range for {self.num_embeddings} embeddings")
        return EmbeddingFunction.apply(self.weight, indices, self.padding_idx)

    def extra_repr(self):
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"


class Dropout(Module):
    """Zeroes elements with probability p while training; the identity in eval()."""

    def __init__(self, p=0.5):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class ReLU(Module):
    """max(x, 0) element-wise, any shape (F.relu)."""
    def forward(self, x):
        return x.relu()


class GELU(Module):
    """x * Phi(x), Phi the standard normal CDF (F.gelu); approximate="tanh" for the tanh form."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in APPROXIMATIONS:
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    """tanh element-wise, any shape."""
    def forward(self, x):
        return x.tanh()


class Sigmoid(Module):
    """1 / (1 + e^-x) element-wise, any shape."""
    def forward(self, x):
        return x.sigmoid()
