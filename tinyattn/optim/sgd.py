"""Stochastic gradient descent with momentum, PyTorch's update rule."""
import numpy as np

from .optimizer import Optimizer


class SGD(Optimizer):
    """As PyTorch's SGD, with d = g + weight_decay * p:

    b = momentum * b + (1 - dampening) * d   (b = d on the first step)
    p -= lr * (d + momentum * b)   with nesterov=True (Sutskever et al. 2013: look ahead along b),
    p -= lr * b                    otherwise (p -= lr * d without momentum).
    Every hyperparameter may differ between parameter groups.
    """

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=bool(nesterov)))

    def _check_group(self, group):
        self._check(lr=(group["lr"], 0, None, False), momentum=(group["momentum"], 0, None, False),
                    weight_decay=(group["weight_decay"], 0, None, False))
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(f"SGD: nesterov=True needs momentum > 0 and dampening = 0, got "
                             f"momentum={group['momentum']}, dampening={group['dampening']}")

    def _update(self, p, g, state, group):
        # every number as the parameter's dtype: a numpy float64 scalar would turn float32 math float64
        dtype = p.data.dtype.type
        lr, momentum, dampening, decay = (dtype(group[k]) for k in ("lr", "momentum", "dampening", "weight_decay"))
        if decay:
            g = g + decay * p.data
        if momentum:
            if "momentum_buffer" in state:
                buf = state["momentum_buffer"]
                buf *= momentum
                buf += g if not dampening else (1 - dampening) * g
            else:
                buf = state["momentum_buffer"] = np.array(g, copy=True)
            g = g + momentum * buf if group["nesterov"] else buf
        p.data -= lr * g
