"""Log-softmax with cross-entropy: the loss of a classifier, averaged over the batch.

    log_p = log(softmax(logits))                     row by row, logits (B, C)
    L = -(1/B) * sum_b log_p[b, target[b]]           target (B,): the right class of each row

The target is data, not a weight: it gets no gradient.
Write backward: return dL/dlogits, shape (B, C). grad is a number (the loss is one number).
    python -m tinyattn.exercises check cross_entropy
    python -m tinyattn.exercises hint cross_entropy    (a step at a time, if you are stuck)
"""
import numpy as np


def forward(logits, target):
    """logits (B, C), target (B,) integers -> the loss (a 0-d array), and what backward needs."""
    shifted = logits - logits.max(axis=-1, keepdims=True)  # for exp's sake; log_p is unchanged
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    loss = -log_p[np.arange(len(target)), target].mean()
    return np.asarray(loss), (log_p, target)


def backward(grad, cache):
    """grad = dL/dloss, a number (0-d array). Return dL/dlogits, shape (B, C)."""
    log_p, target = cache
    raise NotImplementedError("write backward: return dL/dlogits")
