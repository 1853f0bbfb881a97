"""Attention masks: one rule, PyTorch's boolean `attn_mask` of F.scaled_dot_product_attention.

A mask is bool, True = may attend, and broadcasts against the scores (B, [H,] Tq, Tk) by
numpy's (and PyTorch's) rules, right-aligned:

    causal_mask(T)            (T, T)      every sequence alike: query i sees keys <= i
    causal_mask(T, start)     (T, start + T)  T new queries after `start` cached positions (kv_cache.py)
    padding_mask(lengths, T)  (B, 1, T)   each sequence its own: keys past its length are hidden

Every attention layer checks its mask with attention_mask (below): a wrong dtype or a shape that
does not broadcast is an error naming both shapes and the fix (no shape is ever guessed: a (T, T)
mask is never read as (batch, keys), even when the batch size happens to equal T), and a mask that
leaves a query nothing to attend to warns.
"""
import os
import sys
import warnings

import numpy as np

from ..autograd.dtypes import broadcasts_to
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


def attention_mask(mask, scores_shape, op="attention", convention="the mask is True where a query may attend"):
    """`mask` checked against scores of shape (B, [H,] Tq, Tk): a bool array that broadcasts, or None.

    The array is returned as given (never copied to the scores' size); softmax broadcasts it.
    A mask that leaves a query nothing to attend to warns once (warn_if_a_query_sees_nothing).
    """
    if mask is None:
        return None
    mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"{op}: the mask must be bool (True = may attend), got {mask.dtype}; "
                        "for lengths use nn.padding_mask(lengths, T)")
    scores_shape = tuple(scores_shape)
    if not broadcasts_to(mask.shape, scores_shape):
        raise ShapeError(
            f"{op}: mask {mask.shape} does not broadcast to the scores (batch, [heads,] queries, keys) = "
            f"{scores_shape}. Use (queries, keys) for one mask for every sequence (nn.causal_mask(T)), "
            f"or (batch, 1, keys) for padding (nn.padding_mask(lengths, T))")
    warn_if_a_query_sees_nothing(mask, op, convention)
    return mask


def warn_if_a_query_sees_nothing(allowed, op, convention):
    """Warn when a bool mask leaves some query no key to attend to: its weights come out all zero,
    and the usual cause is a mask of the other polarity. `allowed` is True where attention may go;
    `convention` names the polarity the caller's own mask was given in. The warning points at the
    caller's line (the first frame outside tinyattn), once per such line: a second mistake
    elsewhere gets its own word, a training loop repeating one line gets one."""
    if allowed.size == 0 or allowed.all() or np.any(allowed, axis=-1).all():
        return
    frame, stacklevel = sys._getframe(), 1  # stacklevel 1: this function, the caller of warnings.warn
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, stacklevel = frame.f_back, stacklevel + 1
    site = (frame.f_code.co_filename, frame.f_lineno)
    if site in _warned_sites:
        return
    _warned_sites.add(site)
    warnings.warn(f"{op}: the mask leaves some query with no key to attend to, so its weights are all zero. "
                  f"Here {convention}; a mask of the opposite polarity is the usual cause (invert it with ~mask). "
                  "This warning is shown once per line that calls with such a mask.", UserWarning, stacklevel=stacklevel)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # .../tinyattn/
_warned_sites = set()  # (file, line) of each call already warned about
