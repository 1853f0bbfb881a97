"""A recurrent cell: one time step of a kind of cell (GRUCell, LSTMCell, RNNCell), with its own
parameters under PyTorch's names (weight_ih, weight_hh, bias_ih, bias_hh). Its step rule, the
equations, is the one the layers in recurrent.py run at every step.
"""
from ..autograd.dtypes import ShapeError
from ..autograd.tensor import Tensor
from .module import Module
from .recurrent import _check_bias, _init, project
from .sizes import check_sizes


class RecurrentCell(Module):
    """One time step: forward(x (B, I), state=None) -> the next state. Its parameters are its own."""

    Rule = None

    def __init__(self, input_size, hidden_size, bias=True, **rule_options):
        _check_bias(type(self).__name__, bias)
        check_sizes(type(self).__name__, input_size=input_size, hidden_size=hidden_size)
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.rule = self.Rule(hidden_size, **rule_options)
        rows = self.rule.gates * hidden_size
        self.weight_ih = _init(hidden_size, rows, input_size)
        self.weight_hh = _init(hidden_size, rows, hidden_size)
        self.bias_ih = _init(hidden_size, rows) if bias else None
        self.bias_hh = _init(hidden_size, rows) if bias else None

    def forward(self, x, state=None):
        self._check(x, state)
        state = self.rule.zero_state(x) if state is None else state
        return self.step(project(x, self.weight_ih, self.bias_ih), state)

    def step(self, gi, state, keep=None):
        """The next state from the input projection gi (a fused node unless the switch is off)."""
        return self.rule.step(gi, state, self.weight_hh, self.bias_hh, keep)

    def _check(self, x, state):
        name = type(self).__name__
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ShapeError(f"{name}: input {x.shape}, expected (batch, {self.input_size})")
        if state is None:
            return
        expected = (x.shape[0], self.hidden_size)
        if self.rule.state_is_pair:  # (h, c), each checked in full
            if not isinstance(state, (tuple, list)) or len(state) != 2:
                raise TypeError(f"{name}: the state is a pair (h, c), each {expected}; got {type(state).__name__}")
            parts = zip(("h", "c"), state)
        else:
            if isinstance(state, (tuple, list)):
                raise TypeError(f"{name}: the state is one tensor h {expected}, not a {type(state).__name__}")
            parts = (("state", state),)
        for part, tensor in parts:
            if not isinstance(tensor, Tensor) or tensor.shape != expected:
                got = tensor.shape if isinstance(tensor, Tensor) else type(tensor).__name__
                raise ShapeError(f"{name}: {part} {got}, expected (batch, hidden) = {expected}")

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}"
