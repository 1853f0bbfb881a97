"""Two broadcast products numpy runs slowly, and their gradients, each in one pass.

numpy broadcasts by running its inner loop once per row of the output. Two broadcasts that
attention code writes all the time then cost one short loop per row:

    x (..., n) * s (..., 1)   one number per row: attention weights times the values,
                              a mask or a normaliser per row
    x (..., n) * v (n,)       one number per column: the additive score's v, LayerNorm's gain

(768, 128) * (768, 1) takes numpy 23 us and one Numba pass 9; (768, 64) * (64,) 11 and 4.
Their gradients have the same shapes, plus one sum: for y = x * s, dL/ds is the dot product of
each row of g with the same row of x; for y = x * v, dL/dv sums g * x over the rows.

    scale_rows(x, s)      x * s          row_dots(g, x)      (g * x).sum(-1, keepdims=True)
    scale_columns(x, v)   x * v          column_dots(g, x)   (g * x) summed over all rows

Each has its numpy reference (the expression beside it), run instead when the backend is
"numpy", when the dtypes are not one float type, or when an operand is not C-contiguous.
row_dots lets LLVM reorder its additions (fastmath "reassoc") so that it can add 8 at a time:
its last bits may differ from numpy's pairwise sum; the others give numpy's bits.
"""
import numba
import numpy as np

from .backend import kernel_takes


def _kernels_apply(*arrays):
    """True if the Numba kernels may run on these arrays (one float dtype, C-contiguous)."""
    return kernel_takes(*arrays, contiguous=True)


@numba.njit(cache=True)
def _scale_rows_kernel(x, s, out):
    for r in range(x.shape[0]):
        factor = s[r]
        for j in range(x.shape[1]):
            out[r, j] = factor * x[r, j]


@numba.njit(cache=True)
def _scale_columns_kernel(x, v, out):
    for r in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[r, j] = x[r, j] * v[j]


@numba.njit(cache=True, fastmath={"reassoc"})
def _row_dots_kernel(g, x, out):
    for r in range(g.shape[0]):
        total = g.dtype.type(0)
        for j in range(g.shape[1]):
            total += g[r, j] * x[r, j]
        out[r] = total


@numba.njit(cache=True)
def _column_dots_kernel(g, x, out):
    out[:] = 0
    for r in range(g.shape[0]):
        for j in range(g.shape[1]):
            out[j] += g[r, j] * x[r, j]


def multiply(a, b):
    """a * b as numpy computes it, one pass for the two slow broadcasts (module docstring)."""
    if a.shape == b.shape:  # the usual case, and numpy's fast one: decided in one comparison
        return a * b
    for x, s in ((a, b), (b, a)):
        if (s.ndim == x.ndim >= 2 and s.shape[-1] == 1 and x.shape[-1] > 1 and s.shape[:-1] == x.shape[:-1]
                and _kernels_apply(x, s)):
            out = np.empty_like(x)
            _scale_rows_kernel(x.reshape(-1, x.shape[-1]), s.reshape(-1), out.reshape(-1, x.shape[-1]))
            return out
        if s.ndim == 1 and x.ndim >= 2 and s.shape[0] == x.shape[-1] > 1 and _kernels_apply(x, s):
            out = np.empty_like(x)
            _scale_columns_kernel(x.reshape(-1, x.shape[-1]), s, out.reshape(-1, x.shape[-1]))
            return out
    return a * b


def row_dots(g, x):
    """(g * x).sum(-1, keepdims=True) for g and x of one shape."""
    if g.ndim == 0 or g.size == 0 or not _kernels_apply(g, x):
        return (g * x).sum(-1, keepdims=True)
    out = np.empty(g.shape[:-1] + (1,), g.dtype)
    _row_dots_kernel(g.reshape(-1, g.shape[-1]), x.reshape(-1, g.shape[-1]), out.reshape(-1))
    return out


def column_dots(g, x):
    """(g * x) summed over every axis but the last, for g and x of one shape (ndim >= 2)."""
    if g.size == 0 or not _kernels_apply(g, x):
        return (g * x).sum(axis=tuple(range(g.ndim - 1)))
    out = np.empty(g.shape[-1], g.dtype)
    _column_dots_kernel(g.reshape(-1, g.shape[-1]), x.reshape(-1, g.shape[-1]), out)
    return out
