"""Random tensors drawn from tinyattn's generator (rng.py), so ta.manual_seed makes them repeat:
randn, rand, randint and multinomial, as PyTorch's."""
import numpy as np

from . import rng as _rng
from .axes import whole_number
from .creation import _leaf, _shape
from .tensor import Tensor, wrap


def randn(*shape, dtype=np.float32, requires_grad=False):
    """Standard normal draws from tinyattn's generator."""
    return _leaf(_rng.generator().standard_normal(_shape(shape, "randn")).astype(dtype), requires_grad)


def rand(*shape, dtype=np.float32, requires_grad=False):
    """Uniform draws in [0, 1) from tinyattn's generator."""
    return _leaf(_rng.generator().random(_shape(shape, "rand")).astype(dtype), requires_grad)


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
    return wrap(_rng.generator().integers(low, high, size).astype(dtype))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Category indices drawn in proportion to the weights in each row of `input` (1-D (C,) or 2-D
    (N, C), non-negative, need not sum to 1): int64 of shape (num_samples,) or (N, num_samples),
    PyTorch's torch.multinomial. Without replacement no category is drawn twice in a row.
    generator: a numpy Generator (tinyattn's seeded one by default)."""
    num_samples = whole_number(num_samples, "multinomial", "num_samples", low=1)
    weights = np.asarray(input.data if isinstance(input, Tensor) else input, dtype=np.float64)
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
    rng = _rng.generator() if generator is None else generator
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
    return wrap(out if weights.ndim == 2 else out[0])
