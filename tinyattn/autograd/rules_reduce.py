"""Reductions: sum and mean, max and min (over everything, or PyTorch's (values, indices) over a
dim), the element-wise maximum, minimum and clamp built on them, and the statistics (var, std,
std_mean, logsumexp, norm).

Their backward spreads g back over the reduced axes: keep the reduced axes as size 1 (if
keepdims=False removed them) and let broadcasting copy g to the input's shape. The composed ones
(maximum, clamp, var, norm, ...) get their gradients from the rules they are built of.
"""
import math
import numbers
from collections import namedtuple

import numpy as np

from ..ops import arrays
from . import rules_elementwise, rules_shape
from . import tensor as _tensor
from .dtypes import ShapeError, axes, dim_or_axis, one_axis, reduced_axes, require_float
from .function import Function


def _kept_shape(shape, axes):
    """The input's shape with the reduced axes (None: all) as size 1: g in it broadcasts back."""
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if axis in axes else size for axis, size in enumerate(shape))


def _spread(g, shape, kept_shape):
    """g copied along the reduced axes to the input's shape (one allocation, no temporaries).
    np.empty_like(g, ...) is np.empty(shape, g.dtype) in C order that names g: numpy hands the call
    to an array type that follows its calls (ta.compile's capture), which then follows the rule too
    (np.reshape, not g.reshape: a replay may give a 0-d g as a numpy scalar)."""
    out = np.empty_like(g, order="C", shape=shape)
    out[...] = np.reshape(g, kept_shape)
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


# --------------------------------------------------------------------------------------------------
# The max over some axes (ta.max, x.max(), and min through -max(-x)).
#
# Unlike sum and mean (above), whose backward spreads g over every input, max sends g
# only to the maxima: the other inputs did not change the result.
# --------------------------------------------------------------------------------------------------

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
        (is_max,) = ctx.saved_arrays
        axes, kept_shape = ctx.meta
        ties = np.sum(is_max, axis=axes, keepdims=True)
        share = g.reshape(kept_shape) / ties.astype(g.dtype)
        return np.where(is_max, share, g.dtype.type(0)), None, None


# --------------------------------------------------------------------------------------------------
# Larger and smaller, composed from where, gather and max: ta.maximum / ta.minimum, clamp, and
# PyTorch's x.max(dim) / x.min(dim), which return (values, indices).
#
# Composed, so each gradient is where's or gather's (already checked), routed as PyTorch routes it:
#   maximum/minimum  ties split the gradient in half between the two inputs (torch's rule), a NaN
#                    in either gives each the whole gradient (torch's rule too);
#   clamp            the gradient passes where min <= x <= max (not at a NaN, as torch), a tensor
#                    bound gets it where it won;
#   max(dim)/min(dim) the gradient goes to the one entry `indices` names (torch's rule), while
#                    x.max() over everything shares it among tied entries (torch's rule too).
# --------------------------------------------------------------------------------------------------

# as torch.return_types.max / .min: a tuple (values, indices) with those two names
MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])


def _pick(a, b, larger):
    """a where a wins, b where b wins, their mean on a tie (so each gets half the gradient). A NaN
    in either loses both comparisons: there a + b, NaN, gives each the whole gradient, as PyTorch."""
    op = "maximum" if larger else "minimum"
    a, b = _tensor.pair(_bound(op, "input", a), _bound(op, "other", b))
    _broadcast_shape(op, a, b)
    if a.data.dtype.kind != "f":  # integers (pair gave both one dtype) carry no gradient to split
        return _tensor.wrap((np.maximum if larger else np.minimum)(a.data, b.data))
    a_wins, b_wins = (a > b, a < b) if larger else (a < b, a > b)
    tie = (a == b).data
    neither = a * 0.5 + b * 0.5
    if not (tie | a_wins.data | b_wins.data).all():  # a NaN somewhere
        neither = rules_elementwise.where(tie, neither, a + b)
    return rules_elementwise.where(a_wins.data, a, rules_elementwise.where(b_wins.data, b, neither))


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
        out = rules_elementwise.where((out < min).data, min, out)
    if max is not None:
        out = rules_elementwise.where((out > max).data, max, out)
    nan = np.isnan(x.data) if x.data.dtype.kind == "f" else np.zeros(x.shape, bool)
    for bound in bounds:  # a NaN bound makes NaN where it applies, as PyTorch's clamp
        nan = nan | np.isnan(np.asarray(_tensor._raw(bound), dtype=float))
    if nan.any():  # NaN stays NaN and takes no gradient, as PyTorch's clamp
        out = rules_elementwise.where(nan, math.nan, out)
    return out


def max_or_min(x, op, dim=None, keepdim=None, axis=None, keepdims=None):
    """x.max / x.min in all their spellings (see Tensor.max)."""
    if isinstance(dim, _tensor.Tensor):  # x.max(other): PyTorch's element-wise maximum
        return (maximum if op == "max" else minimum)(x, dim)
    if keepdim is not None and keepdims is not None:
        raise TypeError(f"{op}: got both keepdim={keepdim} and keepdims={keepdims}; they are one argument (pass one)")
    if dim is not None and axis is None and keepdims is not None:  # x.max(1, keepdims=True): PyTorch's too
        keepdim, keepdims = keepdims, None
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
        axes(dim, 0, op)  # a 0-d tensor takes dim 0 or -1 (as PyTorch), anything else is out of range
    dim = one_axis(dim, x.ndim, op) if x.ndim else 0
    if x.ndim and x.shape[dim] == 0:
        raise ValueError(f"{op}: dim {dim} of {x.shape} is empty, it has no {op}imum")
    data = x.data if x.ndim else x.data.reshape(1)
    indices = (np.argmax if op == "max" else np.argmin)(data, axis=dim, keepdims=True)
    values = rules_shape.gather(x if x.ndim else x.reshape(1), dim, indices)
    if not keepdim or x.ndim == 0:
        values, indices = values.reshape(values.shape[:dim] + values.shape[dim + 1:]), indices.squeeze(dim)
    return (MaxResult if op == "max" else MinResult)(values, _tensor.wrap(indices))


def _reduce(x, op, axis, keepdims):
    """The values over `axis` (None: all), sharing the gradient among ties (ops_max.Max)."""
    dims = axes(axis, x.ndim, op)
    if op == "max":
        return Max.apply(x, dims, keepdims)
    if x.data.size == 0:
        raise ValueError(f"min: tensor of shape {x.shape} is empty, it has no minimum")
    if x.data.dtype.kind != "f":  # no gradient to route, and -x would wrap around for unsigned ints
        return _tensor.wrap(np.min(x.data, axis=dims, keepdims=keepdims))
    return -_reduce(-x, "max", dims, keepdims)


# --------------------------------------------------------------------------------------------------
# var, std, std_mean, logsumexp and norm, composed from sum, mean, max, exp, log and sqrt (whose gradients
# are checked), so none of them needs a backward rule of its own.
# --------------------------------------------------------------------------------------------------

@dim_or_axis
def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """sum((x - mean)^2) / (n - correction) over `dim` (None: all), PyTorch's var: correction=1
    by default (Bessel's), unbiased=False means correction=0. n <= correction gives NaN or inf."""
    if isinstance(dim, bool):  # x.var(False): PyTorch's var(unbiased) spelling
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError("var: give unbiased= or correction=, not both")
    correction = (1 if unbiased is None or unbiased else 0) if correction is None else correction
    require_float("var", x=x.data)
    dims = reduced_axes(dim, x.ndim, "var")
    n = math.prod(x.shape[d] for d in dims)
    centred = x - x.mean(axis=dims, keepdims=True)
    squares = (centred * centred).sum(axis=dims, keepdims=keepdim)
    if n > correction:
        return squares / (n - correction)
    with np.errstate(invalid="ignore"):  # n <= correction: 0 * inf = NaN (or inf), as PyTorch gives
        return squares * math.inf


@dim_or_axis
def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """The square root of var (same arguments). Where var is 0 the gradient is 0, as PyTorch's
    (sqrt's own rule, g / (2 sqrt(v)), would give 0 / 0 there)."""
    return _sqrt_with_zero_slope_at_zero(var(x, dim, unbiased, keepdim, correction=correction))


@dim_or_axis
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over `dim`, PyTorch's torch.std_mean: std as x.std (correction=1 by default,
    unbiased=False means 0), the mean over the same dims."""
    dims = None if dim is None or isinstance(dim, bool) else axes(dim, input.ndim, "std_mean")
    return std(input, dim, unbiased, keepdim, correction=correction), input.mean(axis=dims, keepdims=keepdim)


def _sqrt_with_zero_slope_at_zero(v):
    """sqrt(v) for v >= 0, with gradient 0 where v is 0, as PyTorch's std and norm take it (sqrt's
    own rule, g / (2 sqrt(v)), is 0 / 0 there): sqrt sees 1 in those places, and where sends no
    gradient back through them."""
    zero = v.data == 0
    return rules_elementwise.where(zero, 0.0, rules_elementwise.where(zero, 1.0, v).sqrt()) if zero.any() else v.sqrt()


def _power_with_zero_slope_at_zero(v, p):
    """v ** p for v >= 0, with gradient 0 where v is 0, as PyTorch's norm takes it (p v ** (p - 1)
    is inf there for p < 1, and its product with a zero upstream NaN): as _sqrt_with_zero_slope_at_zero."""
    zero = v.data == 0
    return rules_elementwise.where(zero, 0.0, rules_elementwise.where(zero, 1.0, v) ** p) if zero.any() else v ** p


@dim_or_axis
def logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))) over `dim`, without overflow: the largest entry m is taken out first,
    log(sum(exp(x - m))) + m. Its gradient is softmax(x) along dim (m is a constant there)."""
    x = x if x.data.dtype.kind == "f" else x.float()
    dims = axes(dim, x.ndim, "logsumexp")
    if x.data.size == 0:  # log(0) = -inf wherever the sum is empty, on the graph (a zero-size gradient), as PyTorch
        return x.sum(axis=dims, keepdims=keepdim) - math.inf
    m = np.max(x.data, axis=dims, keepdims=True)
    m = _tensor.wrap(np.where(np.isfinite(m), m, 0).astype(x.data.dtype))  # all -inf (or an inf): shift by 0
    out = (x - m).exp().sum(axis=dims, keepdims=True).log() + m
    return out if keepdim else out.reshape(tuple(s for d, s in enumerate(out.shape) if d not in dims))


@dim_or_axis
def norm(x, p="fro", dim=None, keepdim=False):
    """The p-norm over `dim` (None: all elements), PyTorch's x.norm: p = 2 or "fro" (the default),
    1, inf, -inf or any other positive number. A zero vector's norm has gradient 0, as PyTorch's."""
    require_float("norm", x=x.data)
    dims = reduced_axes(dim, x.ndim, "norm")
    if p in ("fro", 2):
        return _sqrt_with_zero_slope_at_zero((x * x).sum(axis=dims, keepdims=keepdim))
    if p == math.inf:
        return abs(x).max(axis=dims, keepdims=keepdim)
    if p == -math.inf:
        return abs(x).min(axis=dims, keepdims=keepdim)
    if p == 1:
        return abs(x).sum(axis=dims, keepdims=keepdim)
    if not isinstance(p, (int, float)) or p <= 0:
        raise ValueError(f"norm: p must be 'fro', inf, -inf or a positive number, got {p!r}")
    # at a zero entry (p < 1) and at a zero vector the slope is taken as 0, as PyTorch's
    powers = _power_with_zero_slope_at_zero(abs(x), p)
    return _power_with_zero_slope_at_zero(powers.sum(axis=dims, keepdims=keepdim), 1.0 / p)
