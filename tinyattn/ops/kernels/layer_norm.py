"""LayerNorm over the trailing axes, forward and backward, one row at a time (ops/reference.py's
layer_norm and layer_norm_backward are the numpy versions they equal; nn/layers.py (LayerNormFunction) derives them).

    forward:   x_hat = (x - mean) * inv_std,  inv_std = 1 / sqrt(var + eps),  y = x_hat * w + b
    backward:  dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) * inv_std,   h = g * w

numpy makes a pass over the whole array per operation (mean, subtract, square, mean, ...),
each a separate loop with its own temporary; here a row of C numbers stays in L1 while every
step runs over it: the forward reads it three times (mean, variance of the centred row, the
writes), the backward twice (both means in one loop, then the write), with no temporary.
Sums are in x's dtype, as numpy's, and may be reordered (softmax.py's REORDER_SUMS: fastmath
"reassoc" and "contract" only, so infinities and NaNs still propagate), which lets LLVM
vectorize them. A missing weight or bias is a row of ones or zeros. `axes` are the trailing
axes (as nn.LayerNorm passes them): a row is everything after the leading axes.
"""
import math

import numba
import numpy as np

from . import out_array
from .softmax import REORDER_SUMS


@numba.njit(cache=True, error_model="numpy", fastmath=REORDER_SUMS)
def _forward_kernel(x, weight, bias, eps, y, x_hat, inv_std):
    rows, n = x.shape
    T = x.dtype.type
    for r in range(rows):
        s = T(0.0)
        for j in range(n):
            s += x[r, j]
        mean = s / T(n)
        s = T(0.0)
        for j in range(n):
            d = x[r, j] - mean
            s += d * d
        inv = T(1.0) / np.sqrt(s / T(n) + eps)
        inv_std[r] = inv
        for j in range(n):
            h = (x[r, j] - mean) * inv
            x_hat[r, j] = h
            y[r, j] = h * weight[j] + bias[j]


@numba.njit(cache=True, error_model="numpy", fastmath=REORDER_SUMS)
def _backward_kernel(g, x_hat, inv_std, weight, out):
    rows, n = g.shape
    T = g.dtype.type
    for r in range(rows):
        sum_h, sum_hx = T(0.0), T(0.0)
        for j in range(n):
            h = g[r, j] * weight[j]
            sum_h += h
            sum_hx += h * x_hat[r, j]
        mean_h, mean_hx, inv = sum_h / T(n), sum_hx / T(n), inv_std[r]
        for j in range(n):
            out[r, j] = (g[r, j] * weight[j] - mean_h - x_hat[r, j] * mean_hx) * inv


def _rows(a, n, dtype):
    return np.ascontiguousarray(a, dtype).reshape(-1, n)


def _row_of(value, fill, n, dtype):
    return np.full(n, fill, dtype) if value is None else np.ascontiguousarray(value, dtype).reshape(n)


def layer_norm(x, axes, weight, bias, eps, out=None):
    """(y, x_hat, inv_std), as the reference; out=(y, x_hat, inv_std) arrays to write them into."""
    lead, dtype = x.shape[:x.ndim - len(axes)], x.dtype
    n = math.prod(x.shape[len(lead):])
    y, x_hat, inv_std = (None, None, None) if out is None else out
    y, x_hat = out_array(y, x.shape, dtype), out_array(x_hat, x.shape, dtype)
    inv_std = out_array(inv_std, lead + (1,) * len(axes), dtype)
    if n:
        _forward_kernel(_rows(x, n, dtype), _row_of(weight, 1, n, dtype), _row_of(bias, 0, n, dtype), dtype.type(eps),
                        y.reshape(-1, n), x_hat.reshape(-1, n), inv_std.reshape(-1))
    else:  # the mean of no numbers: NaN, as numpy's
        inv_std[...] = np.nan
    return y, x_hat, inv_std


def layer_norm_backward(g, axes, x_hat, inv_std, weight, out=None):
    dtype = g.dtype
    n = math.prod(g.shape[g.ndim - len(axes):])
    out = out_array(out, g.shape, dtype)
    if n:
        _backward_kernel(_rows(g, n, dtype), _rows(x_hat, n, dtype), _rows(inv_std, 1, dtype).reshape(-1),
                         _row_of(weight, 1, n, dtype), out.reshape(-1, n))
    return out
