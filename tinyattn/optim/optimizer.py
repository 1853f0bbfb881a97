"""SGD and Adam, with the update rules PyTorch documents, and their state for checkpoints."""
import math

import numpy as np

from ..autograd.tensor import Tensor
from ..nn.module import Parameter
from ..ops.adam import adam_update


class Optimizer:
    """Holds the parameters, a learning rate, and per-parameter state (by position in the list)."""

    defaults = {}

    def __init__(self, params, **hyper):
        if isinstance(params, Tensor):
            # iterating a tensor walks its rows: the optimiser would train nothing (PyTorch refuses too)
            raise TypeError(f"{type(self).__name__}: params must be an iterable of Parameters, got one "
                            f"{type(params).__name__} of shape {params.shape}; pass [param] or model.parameters()")
        self.params = list({id(p): p for p in params}.values())  # a tied weight listed twice steps once
        if not self.params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        for i, p in enumerate(self.params):
            if not isinstance(p, Parameter) and not getattr(p, "requires_grad", False):
                raise TypeError(f"{type(self).__name__}: parameter {i} does not require grad")
        self.hyper = {**self.defaults, **hyper}
        self.state = [dict() for _ in self.params]

    @property
    def lr(self):
        return self.hyper["lr"]

    @lr.setter
    def lr(self, value):
        self.hyper["lr"] = value

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        for p, state in zip(self.params, self.state):
            if p.grad is not None:
                self._update(p, p.grad, state)

    def _update(self, param, grad, state):
        raise NotImplementedError

    def state_dict(self):
        """{"hyper": numbers, "state": {"0": {"step": n, "exp_avg": array, ...}, ...}}"""
        return {"hyper": dict(self.hyper),
                "state": {str(i): {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
                          for i, s in enumerate(self.state) if s}}

    def load_state_dict(self, state_dict):
        """Restore from state_dict(); checks shapes against the parameters before changing anything."""
        new_state = [dict() for _ in self.params]
        for key, entry in state_dict["state"].items():
            i = int(key)
            if i >= len(self.params):
                raise ValueError(f"{type(self).__name__}.load_state_dict: state for parameter {i}, "
                                 f"but the optimiser has {len(self.params)}")
            for name, value in entry.items():
                if isinstance(value, np.ndarray) and value.shape != self.params[i].shape:
                    raise ValueError(f"{type(self).__name__}.load_state_dict: {name} of parameter {i} has shape "
                                     f"{value.shape}, the parameter {self.params[i].shape}")
                new_state[i][name] = value.copy() if isinstance(value, np.ndarray) else value
        self.hyper = {**self.hyper, **state_dict["hyper"]}
        self.state = new_state


class SGD(Optimizer):
    """p -= lr * v, where v = momentum * v + (g + weight_decay * p) (v = g on the first step)."""

    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0):
        super().__init__(params, lr=lr, momentum=momentum, weight_decay=weight_decay)

    def _update(self, p, g, state):
        # every number as the parameter's dtype: a numpy float64 scalar would turn float32 math float64
        dtype = p.data.dtype.type
        lr, momentum, decay = (dtype(self.hyper[k]) for k in ("lr", "momentum", "weight_decay"))
        if decay:
            g = g + decay * p.data
        if momentum:
            if "momentum_buffer" in state:
                buf = state["momentum_buffer"]
                buf *= momentum
                buf += g
            else:
                buf = state["momentum_buffer"] = np.array(g, copy=True)
            g = buf
        p.data -= lr * g


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015) with bias correction, as PyTorch computes it:

    m = b1 m + (1 - b1) g,   v = b2 v + (1 - b2) g^2,   t = step number
    p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)

    def _update(self, p, g, state):
        dtype = p.data.dtype.type  # all arithmetic in the parameter's dtype (see SGD)
        b1, b2 = self.hyper["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p.data)
            state["exp_avg_sq"] = np.zeros_like(p.data)
        state["step"] += 1
        t = state["step"]
        # one pass over the parameter (tinyattn/ops/adam.py: a Numba kernel beside the numpy reference)
        adam_update(p.data, g, state["exp_avg"], state["exp_avg_sq"], (dtype(b1), dtype(1 - b1)), (dtype(b2), dtype(1 - b2)),
                    dtype(self.hyper["lr"] / (1 - b1 ** t)), dtype(math.sqrt(1 - b2 ** t)),
                    dtype(self.hyper["eps"]), dtype(self.hyper["weight_decay"]))
