"""Layers as plain functions (PyTorch's torch.nn.functional), for when no weights are kept."""

from ..autograd.errors import ShapeError, require_float
from ..autograd.ops_nn import cross_entropy
from ..autograd.tensor import wrap
from .gelu import gelu  # noqa: F401
from .masks import dropout_mask
from .sdpa import scaled_dot_product_attention, scaled_dot_product_attention_reference  # noqa: F401

__all__ = ["cross_entropy", "mse_loss", "softmax", "log_softmax", "relu", "gelu", "dropout", "scaled_dot_product_attention"]


def softmax(x, axis=-1, mask=None, dim=None):
    """softmax along `axis` (or PyTorch's `dim`); mask True = may attend."""
    return x.softmax(axis if dim is None else dim, mask=mask)


def log_softmax(x, axis=-1, dim=None):
    """x - log(sum(exp(x))) along `axis` (or PyTorch's `dim`), same shape."""
    return x.log_softmax(axis if dim is None else dim)


def relu(x):
    """max(x, 0) element-wise, same shape."""
    return x.relu()


def dropout(x, p=0.5, training=True):
    """Zero each element with probability p and scale the rest by 1/(1-p), so the mean is kept.

    Inactive (x itself) when not training or p = 0. The mask comes from tinyattn's generator,
    so ta.manual_seed makes it repeat.
    """
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    require_float("dropout", x=x.data)  # the kept values are scaled by 1/(1-p): not an integer
    return x * wrap(dropout_mask(x.shape, p, x.dtype))


def mse_loss(input, target, reduction="mean"):
    """Mean (or sum, or none) of (input - target)^2, as PyTorch's F.mse_loss; composed, so autograd differentiates it."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"mse_loss: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if tuple(getattr(target, "shape", ())) != tuple(input.shape):
        raise ShapeError(f"mse_loss: input {input.shape} and target {getattr(target, 'shape', ())} must have one shape "
                         "(PyTorch broadcasts with a warning; tinyattn refuses)")
    require_float("mse_loss", input=input.data)
    squared = (input - target) ** 2
    return squared if reduction == "none" else squared.mean() if reduction == "mean" else squared.sum()
