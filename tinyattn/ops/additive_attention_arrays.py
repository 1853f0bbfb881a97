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
is the softmax of tinyattn/ops/arrays.py, and the two element-wise passes over the (B, Tq, Tk, h) hidden
tensor, the one place with work per (pair, unit), are `pair_tanh` (forward: numpy, whose SIMD
tanh beat a Numba loop with fast_tanh when the kernels were written) and `through_pair_tanh`
(backward: a Numba kernel; benchmarks/RESULTS.md, "through_pair_tanh (attention backward pass)").
"""

import numpy as np

from . import arrays


def pair_tanh(wq, uk):
    """hidden (B, Tq, Tk, h) = tanh(wq[:, i] + uk[:, j]) for every pair (i, j)."""
    return np.tanh(wq[:, :, None, :] + uk[:, None, :, :])


# ----------------------------------------------------------------------------- the whole step
def additive_attention(wq, uk, v, values, mask):
    """-> (context (B, Tq, Dv), weights (B, Tq, Tk), hidden (B, Tq, Tk, h)); mask bool,
    broadcasting to (B, Tq, Tk), or None."""
    hidden = pair_tanh(wq, uk)
    h = hidden.shape[-1]
    scores = arrays.matmul(hidden.reshape(-1, h), v.reshape(h, 1)).reshape(hidden.shape[:3])
    weights = arrays.softmax(scores, mask)
    return arrays.matmul(weights, values), weights, hidden


def additive_attention_backward(g_context, g_weights, weights, hidden, v, values):
    """-> (dwq, duk, dv, dvalues); g_weights None: the weights were not used."""
    d_weights = arrays.matmul(g_context, values.swapaxes(-1, -2))
    if g_weights is not None:
        d_weights += g_weights
    d_values = arrays.matmul(weights.swapaxes(-1, -2), g_context)
    d_score = arrays.softmax_backward(weights, d_weights)
    d_wq, d_uk = arrays.through_pair_tanh(d_score, v, hidden)
    h = hidden.shape[-1]
    d_v = arrays.matmul(d_score.reshape(1, -1), hidden.reshape(-1, h)).reshape(h)
    return d_wq, d_uk, d_v, d_values
