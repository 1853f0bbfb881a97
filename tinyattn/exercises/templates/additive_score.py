"""The additive attention score (Bahdanau, Cho and Bengio 2015, "Neural Machine Translation by
Jointly Learning to Align and Translate", https://arxiv.org/abs/1409.0473): a one-hidden-layer
network scores every query against every key.

    score[b, i, j] = v . tanh(W q[b, i] + U k[b, j])

W q is computed once per query and used with every key; U k once per key and used with every query.
Write backward: return (dL/dq, dL/dk, dL/dW, dL/dU, dL/dv), each the shape of its input.
    python -m tinyattn.exercises check additive_score
    python -m tinyattn.exercises hint additive_score   (a step at a time, if you are stuck)
"""
import numpy as np


def forward(q, k, W, U, v):
    """q (B, Tq, Dq), k (B, Tk, Dk), W (H, Dq), U (H, Dk), v (H,) -> scores (B, Tq, Tk)."""
    query_part = q @ W.T                                                    # (B, Tq, H)
    key_part = k @ U.T                                                      # (B, Tk, H)
    hidden = np.tanh(query_part[:, :, None, :] + key_part[:, None, :, :])   # (B, Tq, Tk, H)
    return hidden @ v, (q, k, W, U, v, hidden)


def backward(grad, cache):
    """grad = dL/dscores, shape (B, Tq, Tk). Return (dL/dq, dL/dk, dL/dW, dL/dU, dL/dv)."""
    q, k, W, U, v, hidden = cache
    raise NotImplementedError("write backward: return (dL/dq, dL/dk, dL/dW, dL/dU, dL/dv)")
