"""Larger and smaller, composed from where, gather and max: ta.maximum / ta.minimum, clamp, and
PyTorch's x.max(dim) / x.min(dim), which return (values, indices).

Composed, so each gradient is where's or gather's (already checked), routed as PyTorch routes it:
  maximum/minimum  ties split the gradient in half between the two inputs (torch's rule), a NaN
                   in either gives each the whole gradient (torch's rule too);
  clamp            the gradient passes where min <= x <= max (not at a NaN, as torch), a tensor
                   bound gets it where it won;
  max(dim)/min(dim) the gradient goes to the one entry `indices` names (torch's rule), while
                   x.max() over everything shares it among tied entries (torch's rule too).
"""
import math
import numbers
from collections import namedtuple

import numpy as np

from .axes import axes as _axes, one_axis
from .errors import ShapeError
from .ops_max import Max

# as torch.return_types.max / .min: a tuple (values, indices) with those two names
MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])


def _pick(a, b, larger):
    """a where a wins, b where b wins, their mean on a tie (so each gets half the gradient). A NaN
    in either loses both comparisons: there a + b, NaN, gives each the whole gradient, as PyTorch."""
    op = "maximum" if larger else "minimum"
    a, b = _pair(_bound(op, "input", a), _bound(op, "other", b))
    _broadcast_shape(op, a, b)
    if a.data.dtype.kind != "f":  # integers (pair gave both one dtype) carry no gradient to split
        return _tensor.wrap((np.maximum if larger else np.minimum)(a.data, b.data))
    a_wins, b_wins = (a > b, a < b) if larger else (a < b, a > b)
    tie = (a == b).data
    neither = a * 0.5 + b * 0.5
    if not (tie | a_wins.data | b_wins.data).all():  # a NaN somewhere
        neither = _where(tie, neither, a + b)
    return _where(a_wins.data, a, _where(b_wins.data, b, neither))


def _bound(op, name, value):
    """A Tensor or a real number, as maximum's operands and clamp's bounds must be; else a TypeError naming op."""
    if isinstance(value, _tensor.Tensor) or (isinstance(value, (numbers.Real, np.number, np.bool_))
                                              and not isinstance(value, np.ndarray)):
        return value
    raise TypeError(f"{op}: {name} must be a Tensor or a number, got {value!r} ({type(value).__name__})")


def _broadcast_shape(op, *operands):
    """The shape the operands broadcast to; a ShapeError naming op and the shapes if they do not."""
    shapes = [np.shape(_tensor._raw(v)) for v in operands]
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(f"{op}: shapes {' and '.join(map(str, shapes))} do not broadcast (aligned from the "
                         "last dim, each pair of sizes must be equal or 1)") from None


def maximum(input, other):
    """The larger of two tensors element-wise, broadcast (torch.maximum): on a tie each gets half
    the gradient, as in PyTorch; NaN in either gives NaN."""
    return _pick(input, other, True)


def minimum(input, other):
    """The smaller of two tensors element-wise, broadcast (torch.minimum); ties split the gradient."""
    return _pick(input, other, False)


def clamp(x, min=None, max=None):
    """x limited to [min, max] element-wise (torch.clamp; numbers or tensors that broadcast). The
    gradient reaches x where min <= x <= max, and a tensor bound where it replaced x; if
    min > max the result is max everywhere, as PyTorch's."""
    if min is None and max is None:
        raise ValueError("clamp: give min=, max= or both")
    bounds = [_bound("clamp", name, v) for name, v in (("min", min), ("max", max)) if v is not None]
    _broadcast_shape("clamp", x, *bounds)
    out = x
    if min is not None:
        out = _where((out < min).data, min, out)
    if max is not None:
        out = _where((out > max).data, max, out)
    nan = np.isnan(x.data) if x.data.dtype.kind == "f" else None
    if nan is not None and nan.any():  # NaN stays NaN and takes no gradient, as PyTorch's clamp
        out = _where(nan, math.nan, out)
    return out


def max_or_min(x, op, dim=None, keepdim=None, axis=None, keepdims=None):
    """x.max / x.min in all their spellings (see Tensor.max)."""
    if isinstance(dim, _tensor.Tensor):  # x.max(other): PyTorch's element-wise maximum
        return (maximum if op == "max" else minimum)(x, dim)
    if keepdim is not None and keepdims is not None:
        raise TypeError(f"{op}: got both keepdim={keepdim} and keepdims={keepdims}; they are one argument (pass one)")
    if axis is not None or keepdims is not None:  # numpy's spelling: the values only
        if dim is not None:
            raise TypeError(f"{op}: got both axis={axis} and dim={dim}; they are one argument (pass one)")
        return _reduce(x, op, axis, bool(keepdim if keepdims is None else keepdims))
    if dim is None:
        if keepdim:
            raise TypeError(f"{op}: keepdim=True needs a dim; x.{op}() reduces over everything to a 0-d tensor")
        return _reduce(x, op, None, False)
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{op}: dim={dim} names several dims; PyTorch's {op}(dim) takes one. For the values "
                        f"over several, write x.{op}(axis={tuple(dim)})")
    if x.ndim == 0:
        _axes(dim, 0, op)  # a 0-d tensor takes dim 0 or -1 (as PyTorch), anything else is out of range
    dim = one_axis(dim, x.ndim, op) if x.ndim else 0
    if x.ndim and x.shape[dim] == 0:
        raise ValueError(f"{op}: dim {dim} of {x.shape} is empty, it has no {op}imum")
    data = x.data if x.ndim else x.data.reshape(1)
    indices = (np.argmax if op == "max" else np.argmin)(data, axis=dim, keepdims=True)
    values = _gather(x if x.ndim else x.reshape(1), dim, indices)
    if not keepdim or x.ndim == 0:
        values, indices = values.reshape(values.shape[:dim] + values.shape[dim + 1:]), indices.squeeze(dim)
    return (MaxResult if op == "max" else MinResult)(values, _tensor.wrap(indices))


def _reduce(x, op, axis, keepdims):
    """The values over `axis` (None: all), sharing the gradient among ties (ops_max.Max)."""
    axes = _axes(axis, x.ndim, op)
    if op == "max":
        return Max.apply(x, axes, keepdims)
    if x.data.size == 0:
        raise ValueError(f"min: tensor of shape {x.shape} is empty, it has no minimum")
    if x.data.dtype.kind != "f":  # no gradient to route, and -x would wrap around for unsigned ints
        return _tensor.wrap(np.min(x.data, axis=axes, keepdims=keepdims))
    return -_reduce(-x, "max", axes, keepdims)


from . import tensor as _tensor  # noqa: E402  (tensor.py imports the op modules first)
from .ops_select import gather as _gather  # noqa: E402
from .ops_where import where as _where  # noqa: E402
from .promotion import pair as _pair  # noqa: E402
