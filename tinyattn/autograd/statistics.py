"""var, std, std_mean, logsumexp and norm, composed from sum, mean, max, exp, log and sqrt (whose gradients
are checked), so none of them needs a backward rule of its own.
"""
import math

import numpy as np

from .axes import axes, dim_or_axis
from .errors import require_float


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
    dims = axes(dim, x.ndim, "var")
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
    return _where(zero, 0.0, _where(zero, 1.0, v).sqrt()) if zero.any() else v.sqrt()


def _power_with_zero_slope_at_zero(v, p):
    """v ** p for v >= 0, with gradient 0 where v is 0, as PyTorch's norm takes it (p v ** (p - 1)
    is inf there for p < 1, and its product with a zero upstream NaN): as _sqrt_with_zero_slope_at_zero."""
    zero = v.data == 0
    return _where(zero, 0.0, _where(zero, 1.0, v) ** p) if zero.any() else v ** p


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
    dims = axes(dim, x.ndim, "norm")
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


from . import tensor as _tensor  # noqa: E402  (tensor.py imports the op modules first)
from .ops_where import where as _where  # noqa: E402
