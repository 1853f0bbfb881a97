"""New tensors filled with one value: zeros, ones, full and the *_like forms.

Tensors whose values follow their index (arange, eye) are in ranges.py; random ones (randn,
rand, randint, multinomial) in sampling.py, drawn from the one generator in rng.py.
"""
import numbers

import numpy as np

from .tensor import Tensor, wrap


def _shape(shape, op):
    """A shape given as sizes (2, 3) or as one tuple ((2, 3)), checked: whole numbers >= 0."""
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)
    for size in shape:
        if isinstance(size, Tensor):
            size = size.item()
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
            raise ValueError(f"{op}: the shape {shape} must be whole numbers >= 0, e.g. {op}(2, 3)")
    return tuple(int(size) for size in shape)


def _leaf(array, requires_grad):
    out = wrap(array)
    return out.requires_grad_(True) if requires_grad else out


def zeros(*shape, dtype=np.float32, requires_grad=False):
    """A tensor of zeros of `shape` (sizes, or one tuple), float32 unless dtype says otherwise."""
    return _leaf(np.zeros(_shape(shape, "zeros"), dtype), requires_grad)


def ones(*shape, dtype=np.float32, requires_grad=False):
    """A tensor of ones of `shape` (sizes, or one tuple), float32 unless dtype says otherwise."""
    return _leaf(np.ones(_shape(shape, "ones"), dtype), requires_grad)


def _fill_value(op, value):
    if not isinstance(value, (numbers.Number, np.number, np.bool_)) or isinstance(value, complex):
        raise TypeError(f"{op}: fill_value must be a real number or a bool, got {value!r} ({type(value).__name__})")
    return value


def full(size, fill_value, dtype=None, requires_grad=False):
    """A tensor of shape `size` filled with `fill_value` (PyTorch's torch.full): float32 for a
    float value, int64 for an int, bool for a bool, unless `dtype` says otherwise."""
    _fill_value("full", fill_value)
    if dtype is None:
        dtype = np.bool_ if isinstance(fill_value, bool) else np.int64 if isinstance(fill_value, int) else np.float32
    return _leaf(np.full(_shape((size,), "full"), fill_value, dtype), requires_grad)


def zeros_like(x, dtype=None, requires_grad=False):
    """Zeros of x's shape and (unless given) dtype."""
    return _leaf(np.zeros(x.shape, x.dtype if dtype is None else dtype), requires_grad)


def ones_like(x, dtype=None, requires_grad=False):
    """Ones of x's shape and (unless given) dtype."""
    return _leaf(np.ones(x.shape, x.dtype if dtype is None else dtype), requires_grad)


def full_like(x, fill_value, dtype=None, requires_grad=False):
    """A tensor of x's shape filled with `fill_value`, in x's dtype unless `dtype` says otherwise."""
    return _leaf(np.full(x.shape, _fill_value("full_like", fill_value), x.dtype if dtype is None else dtype), requires_grad)
