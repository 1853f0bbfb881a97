"""Additive (Bahdanau) attention on arrays: scores, masked softmax and context, and the backward.

For each batch entry b, query i and key j, with wq = W q (B, Tq, h) and uk = U k (B, Tk, h)
already projected, v (h,) and the values (B, Tk, Dv):

    hidden[b, i, j] = tanh(wq[b, i] + uk[b, j])                     (h,)
    score[b, i, j]  = v . hidden[b, i, j]
    weights[b, i]   = softmax over j of score[b, i], where mask[b, i, j] (zeros if none is kept)
    context[b, i]   = sum_j weights[b, i, j] values[b, j]

Backward, with gc = dL/dcontext and gw = dL/dweights:

    dweights = gc values^T + gw,            dvalues = weights^T gc
    dscore   = weights * (dweights - sum_j weights * dweights)          (softmax's rule)
    dpre     = dscore * v * (1 - hidden^2)   (tanh's rule; the pre-activation is wq + uk)
    dwq[i]   = sum_j dpre[i, j],   duk[j] = sum_i dpre[i, j],   dv = sum dscore * hidden

What runs where (measured for the translation model, (64, 1, 14) scores with h = 64): the
products (v . hidden for all pairs at once, weights @ values, ...) are BLAS calls, the softmax
is tinyattn/ops/softmax.py, and the two element-wise passes over the (B, Tq, Tk, h) hidden
tensor, the one place with work per (pair, unit), are `pair_tanh` (forward: numpy, whose SIMD
tanh beat a Numba loop with fast_tanh, 52-62 against 84-90 us) and `through_pair_tanh`
(backward: a Numba kernel, 14 us against the numpy reference's 123-130 us).
"""
import numba
import numpy as np

from .backend import kernel_takes
from .matmul import matmul
from .softmax import softmax, softmax_backward


# ----------------------------------------------------------------------------- the two passes
def pair_tanh(wq, uk):
    """hidden (B, Tq, Tk, h) = tanh(wq[:, i] + uk[:, j]) for every pair (i, j)."""
    return np.tanh(wq[:, :, None, :] + uk[:, None, :, :])


def through_pair_tanh_reference(d_score, v, hidden):
    """(dwq, duk): dpre = dscore v (1 - hidden^2), summed over the keys and over the queries."""
    d_pre = d_score[..., None] * v * (1 - hidden * hidden)
    return d_pre.sum(axis=2), d_pre.sum(axis=1)


@numba.njit(cache=True, error_model="numpy")
def _through_pair_tanh_kernel(d_score, v, hidden, d_wq, d_uk):
    B, Tq, Tk, h = hidden.shape
    one = v.dtype.type(1)
    d_wq[:] = 0
    d_uk[:] = 0
    for b in range(B):
        for i in range(Tq):
            dq = d_wq[b, i]
            for j in range(Tk):
                ds, row, dk = d_score[b, i, j], hidden[b, i, j], d_uk[b, j]
                for k in range(h):
                    d_pre = ds * v[k] * (one - row[k] * row[k])
                    dq[k] += d_pre
                    dk[k] += d_pre


def through_pair_tanh_numba(d_score, v, hidden):
    B, Tq, Tk, h = hidden.shape
    d_wq, d_uk = np.empty((B, Tq, h), hidden.dtype), np.empty((B, Tk, h), hidden.dtype)
    _through_pair_tanh_kernel(np.ascontiguousarray(d_score), np.ascontiguousarray(v), hidden, d_wq, d_uk)
    return d_wq, d_uk


def through_pair_tanh(d_score, v, hidden):
    if not kernel_takes(d_score, v, hidden):
        return through_pair_tanh_reference(d_score, v, hidden)
    return through_pair_tanh_numba(d_score, v, hidden)


# ----------------------------------------------------------------------------- the whole step
def additive_attention(wq, uk, v, values, mask):
    """-> (context (B, Tq, Dv), weights (B, Tq, Tk), hidden (B, Tq, Tk, h)); mask bool,
    broadcasting to (B, Tq, Tk), or None."""
    hidden = pair_tanh(wq, uk)
    h = hidden.shape[-1]
    scores = matmul(hidden.reshape(-1, h), v.reshape(h, 1)).reshape(hidden.shape[:3])
    weights = softmax(scores, mask)
    return matmul(weights, values), weights, hidden


def additive_attention_backward(g_context, g_weights, weights, hidden, v, values):
    """-> (dwq, duk, dv, dvalues); g_weights None: the weights were not used."""
    d_weights = matmul(g_context, values.swapaxes(-1, -2))
    if g_weights is not None:
        d_weights += g_weights
    d_values = matmul(weights.swapaxes(-1, -2), g_context)
    d_score = softmax_backward(weights, d_weights)
    d_wq, d_uk = through_pair_tanh(d_score, v, hidden)
    h = hidden.shape[-1]
    d_v = matmul(d_score.reshape(1, -1), hidden.reshape(-1, h)).reshape(h)
    return d_wq, d_uk, d_v, d_values
