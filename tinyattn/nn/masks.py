"""Attention masks: one rule, PyTorch's boolean `attn_mask` of F.scaled_dot_product_attention.

A mask is bool, True = may attend, and broadcasts against the scores (B, [H,] Tq, Tk) by
numpy's (and PyTorch's) rules, right-aligned:

    causal_mask(T)            (T, T)      every sequence alike: query i sees keys <= i
    causal_mask(T, start)     (T, start + T)  T new queries after `start` cached positions (kv_cache.py)
    padding_mask(lengths, T)  (B, 1, T)   each sequence its own: keys past its length are hidden

A mask that does not broadcast is an error naming both shapes: no shape is ever guessed (a
(T, T) mask is never read as (batch, keys), even when the batch size happens to equal T). That
check, which every attention layer makes, is mask_check.py's attention_mask.
"""
import numpy as np

from ..autograd.creation import generator
from ..autograd.dtypes import ShapeError
from ..autograd.tensor import Tensor


def causal_mask(T, start=0):
    """bool (T, start + T): query i, at position start + i, may attend to keys at positions <= start + i.
    With start 0 (no cached positions before the queries) that is (T, T), True on and below the diagonal."""
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 0:
        raise ValueError(f"causal_mask: T is the number of positions, a whole number >= 0; got {T!r}")
    return np.arange(start + T)[None, :] <= np.arange(start, start + T)[:, None]


def real_positions(lengths, T):
    """bool (B, T), True at positions t < lengths[b]: the one place lengths become a mask (the
    recurrent layers' steps, pooling, and ~real_positions as PyTorch's key_padding_mask)."""
    return np.arange(T)[None, :] < np.asarray(lengths)[:, None]


def padding_mask(lengths, T):
    """bool (B, 1, T), True on each sequence's real positions: the keys a query may attend to."""
    lengths = np.asarray(lengths.data if isinstance(lengths, Tensor) else lengths)
    if lengths.ndim != 1 or lengths.dtype.kind not in "iu":
        raise ShapeError(f"padding_mask: lengths must be a 1-D array of integers, got {lengths.dtype} {lengths.shape}")
    if lengths.size and (lengths.min() < 0 or lengths.max() > T):
        raise ValueError(f"padding_mask: lengths must lie in [0, {T}], got {lengths.min()}..{lengths.max()}")
    return real_positions(lengths, T)[:, None, :]


def lengths_mask(lengths, T):
    """bool (B, 1, T), padding_mask's other name. Never (B, T): attention reads a 2-D mask as
    (queries, keys), so a (B, T) mask would silently mean something else whenever B == T."""
    return padding_mask(lengths, T)


def dropout_mask(shape, p, dtype):
    """Dropout's multiplier: 0 with probability p, else 1/(1-p) (so the mean is kept), from
    tinyattn's generator (ta.manual_seed makes it repeat)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if p == 1:
        return np.zeros(shape, dtype)
    keep = generator().random(shape) >= p
    return keep * np.asarray(1 / (1 - p), dtype=dtype)
