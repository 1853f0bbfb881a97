"""Adam and AdamW, PyTorch's update rules."""
import math

import numpy as np

from ..ops import arrays
from .optimizer import Optimizer


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015) with bias correction, as PyTorch computes it:

    m = b1 m + (1 - b1) g,   v = b2 v + (1 - b2) g^2,   t = step number
    p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
    Every hyperparameter may differ between parameter groups.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

    def _check_group(self, group):
        betas = group["betas"] = tuple(group["betas"])
        if len(betas) != 2:
            raise ValueError(f"{type(self).__name__}: betas must be a pair (b1, b2), got {betas}")
        self._check(lr=(group["lr"], 0, None, False), eps=(group["eps"], 0, None, False),
                    weight_decay=(group["weight_decay"], 0, None, False),
                    **{"betas[0]": (betas[0], 0, 1, False), "betas[1]": (betas[1], 0, 1, False)})

    def _update(self, p, g, state, group, l2_decay=None):
        dtype = p.data.dtype.type  # all arithmetic in the parameter's dtype (see SGD)
        b1, b2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p.data)
            state["exp_avg_sq"] = np.zeros_like(p.data)
        state["step"] += 1
        t = state["step"]
        # one pass over the parameter (adam_update: ops/reference.py, and its Numba kernel ops/kernels/adam.py)
        arrays.adam_update(p.data, g, state["exp_avg"], state["exp_avg_sq"], (dtype(b1), dtype(1 - b1)), (dtype(b2), dtype(1 - b2)),
                    dtype(group["lr"] / (1 - b1 ** t)), dtype(math.sqrt(1 - b2 ** t)),
                    dtype(group["eps"]), dtype(group["weight_decay"] if l2_decay is None else l2_decay))


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter 2019), as PyTorch's AdamW:

    p *= 1 - lr * weight_decay   (the decay acts on p directly, not through m and v),
    then Adam's step with no decay in the gradient.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def _update(self, p, g, state, group):
        decay = group["lr"] * group["weight_decay"]
        if decay:
            p.data *= p.data.dtype.type(1 - decay)
        super()._update(p, g, state, group, l2_decay=0.0)
