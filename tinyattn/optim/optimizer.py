"""The optimisers, as PyTorch's: the bookkeeping (parameter groups and per-parameter state), then SGD,
Adam and AdamW.

    optimizer = AdamW([{"params": decay, "weight_decay": 0.1},
                       {"params": no_decay, "weight_decay": 0.0}], lr=3e-4)

Each entry of optimizer.param_groups is a dict holding "params" and every hyperparameter (the
constructor's arguments fill what a group leaves out). The update rules follow it in this file (SGD,
Adam, AdamW: each a `_update` of one parameter); saving and loading that state (state_dict) is in
optimizer_state.py.
"""
import math

import numpy as np

from ..autograd.tensor import Tensor
from ..autograd.inplace import bump
from ..nn.module import Parameter, zero_grads
from ..ops import arrays
from .optimizer_state import OptimizerState


class Optimizer(OptimizerState):
    """Parameter groups and per-parameter state (a list parallel to .params, the groups' parameters in order)."""

    def __init__(self, params, defaults):
        if isinstance(params, Tensor):
            # iterating a tensor walks its rows: the optimiser would train nothing (PyTorch refuses too)
            raise TypeError(f"{type(self).__name__}: params must be an iterable of Parameters, got one "
                            f"{type(params).__name__} of shape {params.shape}; pass [param] or model.parameters()")
        self.defaults = dict(defaults)
        self.param_groups = []
        self.state = []
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        for group in groups if isinstance(groups[0], dict) else [{"params": groups}]:
            self.add_param_group(group)

    @property
    def params(self):
        """Every parameter, group after group (what clip_grad_norm_ and the state list follow)."""
        return [p for group in self.param_groups for p in group["params"]]

    @property
    def lr(self):
        """The learning rate all groups share (tinyattn's shorthand; with groups, read param_groups[i]["lr"])."""
        rates = {group["lr"] for group in self.param_groups}
        if len(rates) > 1:
            raise ValueError(f"{type(self).__name__}.lr: the parameter groups have different learning rates "
                             f"{[group['lr'] for group in self.param_groups]}; read param_groups[i]['lr']")
        return rates.pop()

    @lr.setter
    def lr(self, value):
        for group in self.param_groups:
            group["lr"] = value

    def add_param_group(self, param_group):
        """Append a group {"params": [...], hyperparameter: value, ...}; the defaults fill the rest (as PyTorch)."""
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}.add_param_group: a parameter group is a dict with 'params', "
                            f"got a {type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError(f"{name}: parameter group {len(self.param_groups)} has no 'params' entry")
        params = param_group["params"]
        if isinstance(params, (set, frozenset)):
            raise TypeError(f"{name}: a group's params must be an ordered sequence; a set's order changes between runs")
        params = [params] if isinstance(params, Tensor) else list(params)
        params = list({id(p): p for p in params}.values())  # a tied weight listed twice steps once
        first = len(self.params)
        for i, p in enumerate(params):
            if not isinstance(p, Parameter) and not getattr(p, "requires_grad", False):
                raise TypeError(f"{name}: parameter {first + i} does not require grad")
        taken = {id(p) for p in self.params}
        if any(id(p) in taken for p in params):
            raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        group = {**self.defaults, **param_group, "params": params}
        self._check_group(group)
        self.param_groups.append(group)
        self.state.extend(dict() for _ in params)

    def zero_grad(self, set_to_none=True):
        """Set every parameter's .grad to None (the next backward starts afresh; step skips a parameter
        whose .grad is None), as PyTorch 2's default; set_to_none=False fills the gradients with zeros."""
        zero_grads(self.params, set_to_none)

    def step(self):
        """Update every parameter that has a .grad (all gradients are checked first: a failed step moves none)."""
        for i, p in enumerate(self.params):
            g = p.grad
            if g is not None and (np.shape(g) != p.shape or np.asarray(g).dtype != p.data.dtype):
                raise ValueError(f"{type(self).__name__}.step: parameter {i} is {p.data.dtype} {p.shape} but its .grad "
                                 f"is {np.asarray(g).dtype} {np.shape(g)}; a gradient has its parameter's shape and dtype")
        states = iter(self.state)
        for group in self.param_groups:
            for p in group["params"]:
                state = next(states)
                if p.grad is not None:
                    self._update(p, p.grad, state, group)
                    bump(p)  # an in-place change, as PyTorch counts it: a graph built before it can tell

    def _update(self, param, grad, state, group):
        raise NotImplementedError

    def _check_group(self, group):
        """Refuse a group's hyperparameters outside their range (each optimiser names its own)."""

    def _check(self, **limits):
        """Refuse hyperparameters outside their range before any step, naming each (as PyTorch does).

        limits: name -> (value, low, high, high_included); high None means no upper bound."""
        where = f" (parameter group {len(self.param_groups)})" if self.param_groups else ""
        for name, (value, low, high, high_included) in limits.items():
            above = high is not None and (value > high if high_included else value >= high)
            if not value >= low or above:  # `not >=` also catches NaN
                upper = "" if high is None else f" and {'<=' if high_included else '<'} {high}"
                raise ValueError(f"{type(self).__name__}: {name} must be >= {low}{upper}, got {value}{where}")


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
