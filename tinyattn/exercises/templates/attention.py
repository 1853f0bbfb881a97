"""Scaled dot-product attention with a causal mask (Vaswani et al. 2017, "Attention Is All You
Need", https://arxiv.org/abs/1706.03762, section 3.2.1).

    S = q k^T / sqrt(d)               how well each query matches each key (d = size of q and k)
    S[i, j] = -inf where not allowed   causal: query i may look at keys 0..i only
    W = softmax(S)                     over the keys, row by row
    out = W v                          each output is a weighted average of the values

forward keeps only its inputs: backward recomputes W, as FlashAttention does to save the memory
of every (Tq, Tk) matrix (Dao et al. 2022, https://arxiv.org/abs/2205.14135).
Write backward: return (dL/dq, dL/dk, dL/dv). `allowed` is data and gets no gradient.
    python -m tinyattn.exercises check attention
    python -m tinyattn.exercises hint attention        (a step at a time, if you are stuck)
"""
import numpy as np


def forward(q, k, v, allowed):
    """q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv), allowed (Tq, Tk) bool, True = may attend
    -> out (..., Tq, dv), and what backward needs. The leading axes (batch, heads) may be any."""
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    scores = np.where(allowed, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v, (q, k, v, allowed)


def backward(grad, cache):
    """grad = dL/dout, shape (..., Tq, dv). Return (dL/dq, dL/dk, dL/dv), each the shape of its input."""
    q, k, v, allowed = cache
    raise NotImplementedError("write backward: return (dL/dq, dL/dk, dL/dv)")
