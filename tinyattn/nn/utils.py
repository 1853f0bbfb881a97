"""Gradient utilities."""
import math

import numpy as np

from ..autograd.tensor import Tensor


def clip_grad_norm_(parameters, max_norm):
    """Scale all gradients together so their joint L2 norm is at most max_norm; returns the norm before.

    Joint, not per tensor: the direction of the whole update is kept, only its length shrinks.
    `parameters` is an iterable of tensors, or one tensor (as PyTorch).
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    total = math.sqrt(sum(float(np.sum(np.square(g, dtype=np.float64))) for g in grads))
    if total > max_norm:
        scale = max_norm / (total + 1e-6)
        for g in grads:
            g *= g.dtype.type(scale)
    return total
