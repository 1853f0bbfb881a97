"""SGD, Adam and AdamW, with the update rules PyTorch documents, and their state for checkpoints."""
import math

import numpy as np

from ..autograd.tensor import Tensor
from ..nn.module import Parameter
from ..ops.arrays import adam_update


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
        """Set every parameter's .grad to None (the next backward starts afresh)."""
        for p in self.params:
            p.grad = None

    def step(self):
        """Update every parameter that has a .grad (all gradients are checked first: a failed step moves none)."""
        # every gradient checked before any parameter moves: a failed step changes nothing
        for i, p in enumerate(self.params):
            g = p.grad
            if g is not None and (np.shape(g) != p.shape or np.asarray(g).dtype != p.data.dtype):
                raise ValueError(f"{type(self).__name__}.step: parameter {i} is {p.data.dtype} {p.shape} but its .grad "
                                 f"is {np.asarray(g).dtype} {np.shape(g)}; a gradient has its parameter's shape and dtype")
        for p, state in zip(self.params, self.state):
            if p.grad is not None:
                self._update(p, p.grad, state)

    def _update(self, param, grad, state):
        raise NotImplementedError

    def _check(self, **limits):
        """Refuse hyperparameters outside their range before any step, naming each (as PyTorch does).

        limits: name -> (value, low, high, high_included); high None means no upper bound."""
        for name, (value, low, high, high_included) in limits.items():
            above = high is not None and (value > high if high_included else value >= high)
            if not value >= low or above:  # `not >=` also catches NaN
                upper = "" if high is None else f" and {'<=' if high_included else '<'} {high}"
                raise ValueError(f"{type(self).__name__}: {name} must be >= {low}{upper}, got {value}")

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
    """As PyTorch's SGD, with d = g + weight_decay * p:

    b = momentum * b + (1 - dampening) * d   (b = d on the first step)
    p -= lr * (d + momentum * b)   with nesterov=True (Sutskever et al. 2013: look ahead along b),
    p -= lr * b                    otherwise (p -= lr * d without momentum).
    """

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(params, lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                         nesterov=bool(nesterov))
        self._check(lr=(lr, 0, None, False), momentum=(momentum, 0, None, False),
                    weight_decay=(weight_decay, 0, None, False))
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(f"SGD: nesterov=True needs momentum > 0 and dampening = 0, got momentum={momentum}, "
                             f"dampening={dampening}")

    def _update(self, p, g, state):
        # every number as the parameter's dtype: a numpy float64 scalar would turn float32 math float64
        dtype = p.data.dtype.type
        lr, momentum, dampening, decay = (dtype(self.hyper[k]) for k in ("lr", "momentum", "dampening", "weight_decay"))
        if decay:
            g = g + decay * p.data
        if momentum:
            if "momentum_buffer" in state:
                buf = state["momentum_buffer"]
                buf *= momentum
                buf += g if not dampening else (1 - dampening) * g
            else:
                buf = state["momentum_buffer"] = np.array(g, copy=True)
            g = g + momentum * buf if self.hyper["nesterov"] else buf
        p.data -= lr * g


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015) with bias correction, as PyTorch computes it:

    m = b1 m + (1 - b1) g,   v = b2 v + (1 - b2) g^2,   t = step number
    p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
        if len(self.hyper["betas"]) != 2:
            raise ValueError(f"{type(self).__name__}: betas must be a pair (b1, b2), got {betas}")
        self._check(lr=(lr, 0, None, False), eps=(eps, 0, None, False), weight_decay=(weight_decay, 0, None, False),
                    **{"betas[0]": (betas[0], 0, 1, False), "betas[1]": (betas[1], 0, 1, False)})

    def _update(self, p, g, state, l2_decay=None):
        dtype = p.data.dtype.type  # all arithmetic in the parameter's dtype (see SGD)
        b1, b2 = self.hyper["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p.data)
            state["exp_avg_sq"] = np.zeros_like(p.data)
        state["step"] += 1
        t = state["step"]
        # one pass over the parameter (adam_update: ops/reference.py, and its Numba kernel ops/kernels/adam.py)
        adam_update(p.data, g, state["exp_avg"], state["exp_avg_sq"], (dtype(b1), dtype(1 - b1)), (dtype(b2), dtype(1 - b2)),
                    dtype(self.hyper["lr"] / (1 - b1 ** t)), dtype(math.sqrt(1 - b2 ** t)),
                    dtype(self.hyper["eps"]), dtype(self.hyper["weight_decay"] if l2_decay is None else l2_decay))


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter 2019), as PyTorch's AdamW:

    p *= 1 - lr * weight_decay   (the decay acts on p directly, not through m and v),
    then Adam's step with no decay in the gradient.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def _update(self, p, g, state):
        decay = self.hyper["lr"] * self.hyper["weight_decay"]
        if decay:
            p.data *= p.data.dtype.type(1 - decay)
        super()._update(p, g, state, l2_decay=0.0)
