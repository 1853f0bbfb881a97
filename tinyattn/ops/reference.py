"""The array functions the engine's op rules call, in plain numpy: the version to read.

Each takes and returns numpy arrays (no Tensor here). The op rules call them by name from
tinyattn/ops/arrays.py, where the fast path may swap in a compiled twin (README, "Reading tour
2"); tests/test_kernel_table.py and test_ops_softmax.py check that the two agree.

Softmax along the last axis, for one row x (every other axis is just "more rows"):

    y_i = exp(x_i - m) / s,   m = max_j x_j,   s = sum_j exp(x_j - m)      (log: z_i = x_i - m - log s)

Subtracting the row max changes nothing (it cancels in the ratio) but keeps every exp in (0, 1].
Backward, with g = dL/dy (the Jacobian is dy_i/dx_j = y_i (d_ij - y_j)):

    softmax:      dL/dx = y * (g - sum(g * y))        log_softmax:  dL/dx = g - exp(z) * sum(g)

A mask (softmax only) is bool, True = may attend: excluded entries get exactly 0 and the max and
the sum run over the kept ones. A row with nothing kept, or whose kept entries are all -inf,
gives zeros (log_softmax: -inf), never NaN.
"""
import numpy as np


def matmul(a, b):
    """(..., n, k) @ (..., k, m) -> (..., n, m), batch axes broadcast (numpy's matmul)."""
    return np.matmul(a, b)


def softmax(x, mask=None):
    keep = np.ones(x.shape, bool) if mask is None else np.broadcast_to(mask, x.shape)
    kept = np.where(keep, x, -np.inf)
    m = kept.max(axis=-1, keepdims=True)
    # A row with nothing finite to keep has max -inf; x - (-inf) would be inf or NaN, so use
    # 0 instead: then every exp below is exp(-inf) = 0 and the row comes out all zeros.
    m = np.where(np.isneginf(m), 0, m).astype(x.dtype)
    e = np.exp(kept - m)  # excluded entries are exp(-inf) = 0 exactly
    s = e.sum(axis=-1, keepdims=True)
    return e / np.where(s == 0, 1, s).astype(x.dtype)


def softmax_backward(y, grad):
    return y * (grad - np.sum(grad * y, axis=-1, keepdims=True))


def log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    m = np.where(np.isneginf(m), 0, m).astype(x.dtype)  # an all -inf row: see softmax
    s = np.exp(x - m).sum(axis=-1, keepdims=True)
    log_s = np.log(np.where(s == 0, 1, s)).astype(x.dtype)  # no log(0) warning
    return np.where(s == 0, -np.inf, x - m - log_s).astype(x.dtype)


def log_softmax_backward(log_y, grad):
    return grad - np.exp(log_y) * np.sum(grad, axis=-1, keepdims=True)


def sum_over(x, axes, keepdims=False):
    """x summed over `axes` (a tuple of non-negative ints, or None for all). The method, not np.sum:
    the same reduction without np.sum's wrapper, 1.5 us a call (benchmarks/bench_first_axis_sums.py)."""
    return x.sum(axis=axes, keepdims=keepdims)


def multiply(a, b):
    """a * b, broadcast as numpy broadcasts."""
    return a * b


def sigmoid(x):
    """1 / (1 + exp(-x)) without overflow: with e = exp(-|x|) <= 1, it is 1 / (1 + e) for
    x >= 0 and e / (1 + e) for x < 0, so exp never sees a large positive number."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1, e) / (1 + e)


def scatter_rows(indices, rows, num_rows):
    """out[indices[i]] += rows[i] on a (num_rows, D) table of zeros (a repeated index adds up):
    the backward of a table lookup."""
    out = np.zeros((num_rows, rows.shape[1]), rows.dtype)
    np.add.at(out, indices, rows)
    return out


def adam_update(p, g, m, v, b1, b2, step_size, bias2_sqrt, eps, weight_decay):
    """One Adam update of p, m and v in place, every number in p's dtype:

        m = b1 m + (1 - b1) g,   v = b2 v + (1 - b2) g^2,   p -= step_size * m / (sqrt(v) / bias2_sqrt + eps)

    with g + weight_decay * p for g when weight_decay is not 0; b1 and b2 come as pairs (b, 1 - b)."""
    (b1, one_minus_b1), (b2, one_minus_b2) = b1, b2
    if weight_decay:
        g = g + weight_decay * p
    m *= b1
    m += one_minus_b1 * g
    v *= b2
    v += one_minus_b2 * g * g
    p -= step_size * (m / (np.sqrt(v) / bias2_sqrt + eps))


# LayerNorm over `axes` (the trailing axes, as nn.LayerNorm passes them), with h = g * weight:
#
#     x_hat = (x - mean) / sqrt(var + eps)  (biased var),   y = x_hat * weight + bias
#     dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) / sqrt(var + eps)
#
# (nn/layers.py's LayerNormFunction derives it.)

def layer_norm(x, axes, weight, bias, eps):
    """(y, x_hat, inv_std): x_hat = (x - mean) * inv_std, inv_std = 1 / sqrt(var + eps) over `axes`
    (biased var), y = x_hat * weight + bias (each optional)."""
    mean = x.mean(axis=axes, keepdims=True)
    centred = x - mean
    inv_std = 1 / np.sqrt((centred * centred).mean(axis=axes, keepdims=True) + x.dtype.type(eps))
    x_hat = centred * inv_std
    y = x_hat if weight is None else x_hat * weight
    return (y if bias is None else y + bias), x_hat, inv_std


def layer_norm_backward(g, axes, x_hat, inv_std, weight):
    """dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) * inv_std, h = g * weight, means over `axes`."""
    h = g if weight is None else g * weight
    return (h - h.mean(axis=axes, keepdims=True) - x_hat * (h * x_hat).mean(axis=axes, keepdims=True)) * inv_std
