"""The optimiser's bookkeeping, as PyTorch's: parameter groups and per-parameter state.

    optimizer = AdamW([{"params": decay, "weight_decay": 0.1},
                       {"params": no_decay, "weight_decay": 0.0}], lr=3e-4)

Each entry of optimizer.param_groups is a dict holding "params" and every hyperparameter (the
constructor's arguments fill what a group leaves out). The update rules live in sgd.py and adam.py;
saving and loading that state (state_dict) in optimizer_state.py.
"""
import numpy as np

from ..autograd.tensor import Tensor
from ..autograd.inplace import bump
from ..nn.module import Parameter, zero_grads
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
