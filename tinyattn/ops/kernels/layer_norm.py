"""LayerNorm over the trailing axes, forward and backward, one row at a time (ops/reference.py's
layer_norm and layer_norm_backward are the numpy versions they equal; nn/layers.py (LayerNormFunction) derives them).

    forward:   x_hat = (x - mean) * inv_std,  inv_std = 1 / sqrt(var + eps),  y = x_hat * w + b
    backward:  dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) * inv_std,   h = g * w

numpy makes a pass over the whole array per operation (mean, subtract, square, mean, ...),
each a separate loop with its own temporary; here a row of C numbers stays in L1 while every
step runs over it. Row sums are float64 (softmax.py's _sum8); everything else stays in x's dtype. A missing weight
or bias is a row of ones or zeros. `axes` are the trailing axes (as nn.LayerNorm passes them):
a row is everything after the leading axes.
"""
import numba
import numpy as np

from .softmax import _sum8  # float64 row sums with 8 accumulators (vectorizable without fastmath)


@numba.njit(cache=True, error_model="numpy")
def _forward_kernel(x, weight, bias, eps, y, x_hat, inv_std):
    rows, n = x.shape
    T = x.dtype.type
    for r in range(rows):
        xr, hr = x[r], x_hat[r]
        mean = T(_sum8(xr, xr, False) / n)
        for j in range(n):
            hr[j] = xr[j] - mean
        inv = T(1.0 / np.sqrt(T(_sum8(hr, hr, True) / n) + eps))
        inv_std[r] = inv
        for j in range(n):
            hr[j] *= inv
            y[r, j] = hr[j] * weight[j] + bias[j]


@numba.njit(cache=True, error_model="numpy")
def _backward_kernel(g, x_hat, inv_std, weight, out):
    rows, n = g.shape
    T = g.dtype.type
    for r in range(rows):
        h = out[r]  # h = g * w first, overwritten by dL/dx below
        for j in range(n):
            h[j] = g[r, j] * weight[j]
        mean_h, mean_hx, inv = T(_sum8(h, h, False) / n), T(_sum8(h, x_hat[r], True) / n), inv_std[r]
        for j in range(n):
            h[j] = (h[j] - mean_h - x_hat[r, j] * mean_hx) * inv


def _rows(a, n, dtype):
    return np.ascontiguousarray(a, dtype).reshape(-1, n)


def _row_of(value, fill, n, dtype):
    return np.full(n, fill, dtype) if value is None else np.ascontiguousarray(value, dtype).reshape(n)


def layer_norm(x, axes, weight, bias, eps):
    lead, dtype = x.shape[:x.ndim - len(axes)], x.dtype
    n = int(np.prod(x.shape[len(lead):]))
    y, x_hat = np.empty(x.shape, dtype), np.empty(x.shape, dtype)
    inv_std = np.empty(lead + (1,) * len(axes), dtype)
    if n:
        _forward_kernel(_rows(x, n, dtype), _row_of(weight, 1, n, dtype), _row_of(bias, 0, n, dtype), dtype.type(eps),
                        y.reshape(-1, n), x_hat.reshape(-1, n), inv_std.reshape(-1))
    else:  # the mean of no numbers: NaN, as numpy's
        inv_std[...] = np.nan
    return y, x_hat, inv_std


def layer_norm_backward(g, axes, x_hat, inv_std, weight):
    dtype = g.dtype
    n = int(np.prod(g.shape[g.ndim - len(axes):]))
    out = np.empty(g.shape, dtype)
    if n:
        _backward_kernel(_rows(g, n, dtype), _rows(x_hat, n, dtype), _rows(inv_std, 1, dtype).reshape(-1),
                         _row_of(weight, 1, n, dtype), out.reshape(-1, n))
    return out
