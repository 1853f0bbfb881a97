"""Two broadcast products numpy runs slowly, each in one pass.

numpy broadcasts by running its inner loop once per row of the output. Two broadcasts that
attention code writes all the time then cost one short loop per row:

    x (..., n) * s (..., 1)   one number per row: attention weights times the values,
                              a mask or a normaliser per row
    x (..., n) * v (n,)       one number per column: the additive score's v, LayerNorm's gain

numpy loops over the rows of both; one Numba pass is faster at this project's shapes
(benchmarks/RESULTS.md, "broadcast product (768, 128) * (768, 1)" and the row below it).
Every other product (same shapes, the usual case, mixed dtypes, or any other broadcast) is
numpy's a * b, which is also the reference (tinyattn/ops/reference.py). Both give numpy's bits.

The output is a fresh C-ordered array whatever the operands' layout: the kernels write through
its 2-D view, which must be the output itself and not a copy (np.empty_like(x) of a transposed
x is transposed too, and reshaping it copies: the products were written into the copy).
"""
import numba
import numpy as np


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


def _rows(a):
    """a as a C-ordered (rows, last axis) array: one compiled signature per dtype, whatever a's layout."""
    return np.ascontiguousarray(a).reshape(-1, a.shape[-1])


def multiply(a, b):
    """a * b as numpy computes it, one pass for the two slow broadcasts (module docstring)."""
    if a.shape == b.shape or a.dtype != b.dtype:  # the usual case (numpy's fast one), or numpy's promotion
        return a * b
    for x, s in ((a, b), (b, a)):
        if s.ndim == x.ndim >= 2 and s.shape[-1] == 1 and x.shape[-1] > 1 and s.shape[:-1] == x.shape[:-1]:
            out = np.empty(x.shape, x.dtype)
            _scale_rows_kernel(_rows(x), np.ascontiguousarray(s).reshape(-1), out.reshape(-1, x.shape[-1]))
            return out
        if s.ndim == 1 and x.ndim >= 2 and s.shape[0] == x.shape[-1] > 1:
            out = np.empty(x.shape, x.dtype)
            _scale_columns_kernel(_rows(x), np.ascontiguousarray(s), out.reshape(-1, x.shape[-1]))
            return out
    return a * b
