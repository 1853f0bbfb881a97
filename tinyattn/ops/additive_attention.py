"""Additive (Bahdanau) attention on arrays: scores, masked softmax and context in one pass.

For each batch entry b, query i and key j, with wq = W q (B, Tq, h) and uk = U k (B, Tk, h)
already projected, v (h,) and the values (B, Tk, Dv):

    hidden[b, i, j] = tanh(wq[b, i] + uk[b, j])                     (h,)
    score[b, i, j]  = v . hidden[b, i, j]
    weights[b, i]   = softmax over j of score[b, i], where mask[b, i, j] (zeros if none is kept)
    context[b, i]   = sum_j weights[b, i, j] values[b, j]

Backward, with gc = dL/dcontext and gw = dL/dweights:

    dweights = gc . values[j] + gw          dvalues[j] = sum_i weights[i, j] gc[i]
    dscore   = weights * (dweights - sum_j weights * dweights)          (softmax's rule)
    dpre     = dscore * v * (1 - hidden^2)   (tanh's rule; the pre-activation is wq + uk)
    dwq[i]   = sum_j dpre[i, j],   duk[j] = sum_i dpre[i, j],   dv = sum dscore * hidden

The reference is numpy on whole arrays (a (B, Tq, Tk, h) hidden tensor); the Numba kernels do
the same per (b, i) row with loops over h that LLVM vectorizes (fast_tanh, fast_exp; no
fastmath, since masks send -inf through; error_model="numpy" so a division is not a branch).
"""
import numba
import numpy as np

from .backend import get_backend
from .fast_activations import fast_tanh
from .fast_exp import fast_exp
from .softmax import _sum8, softmax_reference


# ----------------------------------------------------------------------------- reference
def additive_attention_reference(wq, uk, v, values, mask):
    """-> (context (B, Tq, Dv), weights (B, Tq, Tk), hidden (B, Tq, Tk, h)); mask bool (B, Tq, Tk)."""
    hidden = np.tanh(wq[:, :, None, :] + uk[:, None, :, :])
    weights = softmax_reference(hidden @ v, mask)
    return weights @ values, weights, hidden


def additive_attention_backward_reference(g_context, g_weights, weights, hidden, v, values):
    """-> (dwq, duk, dv, dvalues)."""
    d_weights = g_context @ values.swapaxes(-1, -2) + g_weights
    d_values = weights.swapaxes(-1, -2) @ g_context
    d_score = weights * (d_weights - np.sum(weights * d_weights, axis=-1, keepdims=True))
    d_pre = d_score[..., None] * v * (1 - hidden * hidden)
    d_v = np.einsum("bij,bijh->h", d_score, hidden)
    return d_pre.sum(axis=2), d_pre.sum(axis=1), d_v, d_values


# ----------------------------------------------------------------------------- numba kernels
@numba.njit(cache=True, error_model="numpy")
def _forward_kernel(wq, uk, v, values, mask, context, weights, hidden):
    B, Tq, Tk, h = hidden.shape
    Dv = values.shape[2]
    zero, one = wq.dtype.type(0), wq.dtype.type(1)
    for b in range(B):
        for i in range(Tq):
            w = weights[b, i]
            top = -np.inf
            for j in range(Tk):
                row = hidden[b, i, j]
                for k in range(h):
                    row[k] = fast_tanh(wq[b, i, k] + uk[b, j, k])
                s = wq.dtype.type(_sum8(row, v, True))  # v . hidden, 8 partial sums
                w[j] = s if mask[b, i, j] else -np.inf
                top = max(top, w[j])
            c = context[b, i]
            c[:] = zero
            if top == -np.inf:  # nothing to attend: zero weights, zero context
                w[:] = zero
                continue
            total = zero
            for j in range(Tk):
                w[j] = fast_exp(w[j] - top)
                total += w[j]
            inv = one / total
            for j in range(Tk):
                w[j] *= inv
                for d in range(Dv):
                    c[d] += w[j] * values[b, j, d]


@numba.njit(cache=True, error_model="numpy")
def _backward_kernel(g_context, g_weights, weights, hidden, v, values, d_wq, d_uk, d_v, d_values):
    B, Tq, Tk, h = hidden.shape
    Dv = values.shape[2]
    zero, one = v.dtype.type(0), v.dtype.type(1)
    d_score = np.empty(Tk, v.dtype)
    d_wq[:] = zero
    d_uk[:] = zero
    d_v[:] = zero
    d_values[:] = zero
    for b in range(B):
        for i in range(Tq):
            w, gc = weights[b, i], g_context[b, i]
            total = zero
            for j in range(Tk):
                s = g_weights[b, i, j] + v.dtype.type(_sum8(gc, values[b, j], True))
                for d in range(Dv):
                    d_values[b, j, d] += w[j] * gc[d]
                d_score[j] = s
                total += w[j] * s
            for j in range(Tk):
                ds = w[j] * (d_score[j] - total)
                row = hidden[b, i, j]
                for k in range(h):
                    d_pre = ds * v[k] * (one - row[k] * row[k])
                    d_wq[b, i, k] += d_pre
                    d_uk[b, j, k] += d_pre
                    d_v[k] += ds * row[k]


def additive_attention_numba(wq, uk, v, values, mask):
    B, Tq, h = wq.shape
    Tk = uk.shape[1]
    context = np.empty((B, Tq, values.shape[2]), wq.dtype)
    weights = np.empty((B, Tq, Tk), wq.dtype)
    hidden = np.empty((B, Tq, Tk, h), wq.dtype)
    _forward_kernel(wq, uk, v, values, mask, context, weights, hidden)
    return context, weights, hidden


def additive_attention_backward_numba(g_context, g_weights, weights, hidden, v, values):
    d_wq = np.empty(hidden.shape[:2] + hidden.shape[3:], v.dtype)
    d_uk = np.empty((hidden.shape[0], hidden.shape[2], hidden.shape[3]), v.dtype)
    d_v, d_values = np.empty_like(v), np.empty_like(values)
    _backward_kernel(g_context, g_weights, weights, hidden, v, values, d_wq, d_uk, d_v, d_values)
    return d_wq, d_uk, d_v, d_values


# ----------------------------------------------------------------------------- dispatch
def _c(a):
    return np.ascontiguousarray(a)


def additive_attention(wq, uk, v, values, mask):
    """Forward (see the top); all arrays of one float dtype, mask bool (B, Tq, Tk) (a copy of a
    broadcast mask: it is h times smaller than the hidden tensor, so the copy is cheap)."""
    mask = _c(np.broadcast_to(mask, wq.shape[:2] + uk.shape[1:2]))
    if get_backend() == "numpy":
        return additive_attention_reference(wq, uk, v, values, mask)
    return additive_attention_numba(_c(wq), _c(uk), _c(v), _c(values), mask)


def additive_attention_backward(g_context, g_weights, weights, hidden, v, values):
    if get_backend() == "numpy":
        return additive_attention_backward_reference(g_context, g_weights, weights, hidden, v, values)
    return additive_attention_backward_numba(_c(g_context), _c(g_weights), weights, hidden, _c(v), _c(values))
