"""Where tensors come from: filled with one value (zeros, ones, full and the *_like forms), by
their index (arange, eye), or drawn at random (randn, rand, randint, multinomial) from the one
generator that ta.manual_seed seeds.
"""
import numbers

import numpy as np

from . import tensor as _tensor
from .dtypes import whole_number


def _shape(shape, op):
    """A shape given as sizes (2, 3) or as one tuple ((2, 3)), checked: whole numbers >= 0."""
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)
    for size in shape:
        if isinstance(size, _tensor.Tensor):
            size = size.item()
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
            raise ValueError(f"{op}: the shape {shape} must be whole numbers >= 0, e.g. {op}(2, 3)")
    return tuple(int(size) for size in shape)


def _leaf(array, requires_grad):
    out = _tensor.wrap(array)
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


# --------------------------------------------------------------------------------------------------
# New tensors whose values follow their index: arange (start, start + step, ...) and eye (ones
# where the row index equals the column index). Constant ones are in creation.py.
# --------------------------------------------------------------------------------------------------

def arange(start, end=None, step=1, dtype=None, requires_grad=False):
    """start, start + step, ... below end (PyTorch's torch.arange): int64 from integers, else float32."""
    if end is None:
        start, end = 0, start
    for name, value in (("start", start), ("end", end), ("step", step)):
        if not isinstance(value, (numbers.Real, np.number)) or isinstance(value, bool):
            raise TypeError(f"arange: {name} must be a number, got {value!r}")
    if step == 0:
        raise ValueError("arange: step must be nonzero (start, start + step, ... never reaches end)")
    if (end - start) * step < 0:
        raise ValueError(f"arange: upper bound and larger bound inconsistent with step sign: from {start} "
                         f"to {end} by {step} (as PyTorch; a negative step counts down: arange(5, 0, -1))")
    if dtype is None:
        integral = all(float(v).is_integer() and not isinstance(v, float) for v in (start, end, step))
        dtype = np.int64 if integral else np.float32
    return _leaf(np.arange(start, end, step, dtype=dtype), requires_grad)


def eye(n, m=None, dtype=np.float32, requires_grad=False):
    """The n x m (m defaults to n) identity matrix: ones on the diagonal (PyTorch's torch.eye)."""
    n, m = _shape((n, n if m is None else m), "eye")
    return _leaf(np.eye(n, m, dtype=dtype), requires_grad)


# --------------------------------------------------------------------------------------------------
# tinyattn's one random generator, behind initialisation, dropout and ta.randn.
#
# `manual_seed(s)` makes every random draw of tinyattn (ta.randn, layer initialisation,
# dropout) repeat from run to run; `get_rng_state` / `set_rng_state` let a checkpoint carry it.
# --------------------------------------------------------------------------------------------------

_generator = np.random.default_rng()


def manual_seed(seed):
    """Seed tinyattn's generator; returns it."""
    global _generator
    _generator = np.random.default_rng(seed)
    return _generator


def generator():
    """The generator that initialisation and dropout draw from."""
    return _generator


def get_rng_state():
    """The generator's state as a JSON-friendly dict."""
    return _generator.bit_generator.state


def set_rng_state(state):
    """Restore a state from get_rng_state(), so the next draws repeat exactly."""
    _generator.bit_generator.state = state


# --------------------------------------------------------------------------------------------------
# Random tensors drawn from tinyattn's generator (below), so ta.manual_seed makes them repeat:
# randn, rand, randint and multinomial, as PyTorch's.
# --------------------------------------------------------------------------------------------------

def randn(*shape, dtype=np.float32, requires_grad=False):
    """Standard normal draws from tinyattn's generator."""
    return _leaf(generator().standard_normal(_shape(shape, "randn")).astype(dtype), requires_grad)


def rand(*shape, dtype=np.float32, requires_grad=False):
    """Uniform draws in [0, 1) from tinyattn's generator."""
    return _leaf(generator().random(_shape(shape, "rand")).astype(dtype), requires_grad)


def randint(low, high=None, size=None, dtype=np.int64):
    """Integers drawn uniformly from [low, high) (PyTorch's torch.randint: randint(high, size)
    or randint(low, high, size)); int64 unless `dtype` says otherwise."""
    if size is None:  # randint(high, size): PyTorch's two-argument form
        if high is None:
            raise TypeError("randint: give a size, as randint(high, (2, 3)) or randint(low, high, (2, 3))")
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=(2, 3))
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: high ({high}) must be greater than low ({low}); draws come from [low, high)")
    size = _shape((size,), "randint")
    return _tensor.wrap(generator().integers(low, high, size).astype(dtype))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Category indices drawn in proportion to the weights in each row of `input` (1-D (C,) or 2-D
    (N, C), non-negative, need not sum to 1): int64 of shape (num_samples,) or (N, num_samples),
    PyTorch's torch.multinomial. Without replacement no category is drawn twice in a row.
    generator: a numpy Generator (tinyattn's seeded one by default)."""
    num_samples = whole_number(num_samples, "multinomial", "num_samples", low=1)
    weights = np.asarray(input.data if isinstance(input, _tensor.Tensor) else input, dtype=np.float64)
    if weights.ndim not in (1, 2) or weights.shape[-1] == 0:
        raise ValueError(f"multinomial: input must be 1-D or 2-D with at least one category, got shape {weights.shape}")
    if not np.all(np.isfinite(weights)) or (weights < 0).any():
        raise ValueError("multinomial: the weights must be finite and >= 0")
    rows = np.atleast_2d(weights)
    if (rows.sum(-1) == 0).any():
        raise ValueError("multinomial: a row of weights sums to 0, nothing can be drawn")
    if not replacement and num_samples > (rows > 0).sum(-1).min():
        raise ValueError(f"multinomial: {num_samples} draws without replacement, but a row has only "
                         f"{(rows > 0).sum(-1).min()} categories of non-zero weight")
    rng = _generator if generator is None else generator
    if replacement:  # the inverse of each row's cumulative distribution at uniform points
        cdf = np.cumsum(rows, -1)
        u = rng.random((rows.shape[0], num_samples)) * cdf[:, -1:]
        out = np.stack([np.minimum(np.searchsorted(c, row_u, side="right"), rows.shape[1] - 1)
                        for c, row_u in zip(cdf, u)])
    else:  # Gumbel top-k: the k largest of log w + Gumbel noise are a draw without replacement
        with np.errstate(divide="ignore"):
            keys = np.log(rows) + rng.gumbel(size=rows.shape)
        out = np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
    out = out.astype(np.int64)
    return _tensor.wrap(out if weights.ndim == 2 else out[0])
