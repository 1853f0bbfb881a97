"""attention: hints, worked solution, classic mistakes."""
import numpy as np

from . import Mistake

HINTS = [
    "Recompute W from q, k and allowed exactly as forward does (the mask included). Then go back "
    "one stage at a time: out = W v first. It is a matrix product: which products give dL/dW and dL/dv?",
    "W = softmax(S) row by row: that is the softmax exercise. Masked entries have W = 0, so whatever "
    "comes back to them is multiplied by 0.",
    "S = q k^T * scale with scale = 1/sqrt(d). The scale multiplies the scores, so it multiplies "
    "their gradient too. dL/dq has q's shape (Tq, d): which of dS k and dS^T k is that? And dL/dk?",
]


def _weights(q, k, allowed):
    """(scale, softmax(q k^T * scale) over the allowed keys): the forward's weights, recomputed."""
    scale = 1 / np.sqrt(q.shape[-1])
    scores = np.where(allowed, q @ k.swapaxes(-1, -2) * scale, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return scale, e / e.sum(axis=-1, keepdims=True)


def backward(grad, cache):
    """W is recomputed (mask included). out = W v: dW = grad v^T, dv = W^T grad. Softmax per row:
    dS = W (dW - sum_j dW W). Masked weights are 0, so their dS is 0: no gradient crosses the mask.
    S = q k^T * scale: dq = dS k * scale, dk = dS^T q * scale (query rows, key columns)."""
    q, k, v, allowed = cache
    scale, weights = _weights(q, k, allowed)
    d_weights = grad @ v.swapaxes(-1, -2)
    d_v = weights.swapaxes(-1, -2) @ grad
    d_scores = weights * (d_weights - (d_weights * weights).sum(axis=-1, keepdims=True))
    return d_scores @ k * scale, d_scores.swapaxes(-1, -2) @ q * scale, d_v


def mistakes(grad, cache, inputs):
    q, k, v, allowed = cache
    scale, weights = _weights(q, k, allowed)
    d_weights = grad @ v.swapaxes(-1, -2)
    d_scores = weights * (d_weights - (d_weights * weights).sum(axis=-1, keepdims=True))
    unmasked = backward(grad, (q, k, v, np.ones_like(allowed)))
    forgot_mask = ("yours is what attention without the mask would get: gradient reaches the keys a "
                   "query may not see. Recompute the weights with the mask, as forward does")
    return [
        Mistake("q", unmasked[0], forgot_mask),
        Mistake("v", unmasked[2], forgot_mask),
        Mistake("q", weights * d_weights @ k * scale, "yours misses the softmax's '- sum' term: dS = W * dW "
                "alone. Each weight shares its row's denominator, so every score of a row moves every weight "
                "of it: the softmax exercise's backward, row by row"),
        Mistake("k", d_scores @ q * scale, "yours is dS q: the rows of dS are queries, and k's rows are keys. "
                "dL/dk sums over the queries, so it is dS^T q (transposed)"),
    ]
