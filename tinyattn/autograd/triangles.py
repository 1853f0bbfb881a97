"""tril and triu: the lower or upper triangle of a matrix kept, the rest set to 0 (PyTorch's).

Composed from masked_fill, so the gradient is masked_fill's: g where an entry was kept, else 0.
A causal attention mask is triu(ones(T, T, dtype=bool), diagonal=1): True above the diagonal.
"""
import math

import numpy as np

from .axes import whole_number
from .errors import ShapeError


def tril(x, diagonal=0):
    """x with the entries above the `diagonal`-th diagonal of its last two dims set to 0 (PyTorch's tril)."""
    return _triangle(x, diagonal, "tril")


def triu(x, diagonal=0):
    """x with the entries below the `diagonal`-th diagonal of its last two dims set to 0 (PyTorch's triu)."""
    return _triangle(x, diagonal, "triu")


def _triangle(x, diagonal, op):
    if x.ndim < 2:
        raise ShapeError(f"{op}: needs a matrix (or a batch of them), got shape {x.shape}")
    diagonal = whole_number(diagonal, op, "diagonal", low=-math.inf)
    rows, cols = x.shape[-2:]
    keep = np.tri(rows, cols, diagonal, dtype=bool) if op == "tril" else ~np.tri(rows, cols, diagonal - 1, dtype=bool)
    return x.masked_fill(~keep, 0)
