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



# ----------------------------------------------------------------------------- the two passes
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


def through_pair_tanh(d_score, v, hidden):
    B, Tq, Tk, h = hidden.shape
    d_wq, d_uk = np.empty((B, Tq, h), hidden.dtype), np.empty((B, Tk, h), hidden.dtype)
    _through_pair_tanh_kernel(np.ascontiguousarray(d_score), np.ascontiguousarray(v), hidden, d_wq, d_uk)
    return d_wq, d_uk
