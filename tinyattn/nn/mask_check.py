"""How an attention layer checks a mask (masks.py's rule: bool, True = may attend, broadcasting
right-aligned against the scores (B, [H,] Tq, Tk)): a wrong dtype or shape is an error naming
both shapes and the fix, and a mask that leaves a query nothing to attend to warns.
"""
import os
import sys
import warnings

import numpy as np

from ..autograd.dtypes import broadcasts_to
from ..autograd.dtypes import ShapeError
from ..autograd.tensor import Tensor


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
