"""The recurrent layers (as PyTorch's torch/nn/modules/rnn.py): first what they share, the step
rule, the cell (one step) and the layer (a whole sequence, time first unless batch_first=True,
stacked num_layers deep, each layer optionally bidirectional); then the three kinds, each its
step rule (the equations of one step, written with autograd ops), its cell and its layer: the
Elman RNN, the GRU and the LSTM (read the one you use).

The cell runs its rule once; the layer runs it step by
step, freezing the state of sequences that have ended. Both go through two blocks
(ops/blocks.py): `recurrent_step` and `recurrent_sequence`, whose references are below
(composed_step, composed_sequence): the composed graph, what runs under `ta.fused(False)`. By
default the same numbers (to 1e-10 in float64) come from fused nodes, which
benchmarks/bench_recurrent.py measures faster (benchmarks/RESULTS.md, "Recurrent fused nodes against their composed graphs"): for GRU and
LSTM cells one node per step (fused/recurrent_steps.py), and for nn.GRU and nn.LSTM one node per
direction of a whole sequence (fused/gru_sequence.py, fused/lstm_sequence.py). Parameter names and init follow
PyTorch, so a PyTorch state_dict loads as it is.
"""
import math

import numpy as np

from ..autograd.creation import generator
from ..autograd.dtypes import ShapeError
from ..autograd.rules_shape import cat, stack, unbind
from ..autograd.rules_elementwise import where
from ..autograd.tensor import Tensor, wrap
from ..ops import blocks
from .functional import dropout
from .layers import LinearFunction
from .masks import real_positions
from .module import Module, Parameter
from .sizes import check_sizes


def _init(hidden_size, *shape):
    bound = 1 / math.sqrt(hidden_size)
    return Parameter(generator().uniform(-bound, bound, shape).astype(np.float32))


def project(x, weight, bias):
    """x W^T + b: the input projection of a step (or of every step at once), and W_hh h + b_hh."""
    return LinearFunction.apply(x, weight, bias)


class StepRule:
    """The step equations of one kind of cell, with no parameters of their own: a cell and a
    layer each hold theirs (the layer under PyTorch's names, per direction) and pass them in.

    A rule names `gates` (blocks of hidden_size rows in W_ih and W_hh) and writes `equations`
    (autograd ops, to read).
    """

    gates = None
    state_is_pair = False  # the LSTM's state is (h, c)

    def __init__(self, hidden_size):
        self.hidden_size = hidden_size

    def step(self, gi, state, weight_hh, bias_hh, keep=None):
        """The next state from gi = x W_ih^T + b_ih; where keep (bool (B, 1)) is False the old state
        stays. The block `recurrent_step`: one fused node, or under `ta.fused(False)` composed_step."""
        return blocks.recurrent_step(self, gi, state, weight_hh, bias_hh, keep)

    def zero_state(self, x):
        zeros = wrap(np.zeros((x.shape[0], self.hidden_size), x.dtype))
        return (zeros, zeros) if self.state_is_pair else zeros


def composed_step(rule, gi, state, weight_hh, bias_hh, keep):
    """The block `recurrent_step`'s reference: the rule's equations, then where(keep, new, old)."""
    new = rule.equations(gi, state, weight_hh, bias_hh)
    if keep is None:
        return new
    if isinstance(new, tuple):
        return tuple(where(keep, n, o) for n, o in zip(new, state))
    return where(keep, new, state)


def composed_sequence(rule, gi, state, weight_hh, bias_hh, lengths, keeps, reverse):
    """The block `recurrent_sequence`'s reference: one direction, one rule step per time step ->
    (outputs (B, T, H), last state). Where keeps[t] is False (past a sequence's length) the step
    leaves the state as it was, and the output there is zero."""
    T = gi.shape[1]
    gi_steps = unbind(gi, axis=1)  # split into steps in one node
    per_step = [None] * T
    for t in (reversed(range(T)) if reverse else range(T)):
        keep = None if keeps is None else keeps[t]
        state = rule.step(gi_steps[t], state, weight_hh, bias_hh, keep)
        per_step[t] = state[0] if isinstance(state, tuple) else state
    out = stack(per_step, axis=1)
    if keeps is not None:  # the steps repeat the last state past each length
        out = out * wrap(real_positions(lengths, T)[..., None].astype(out.dtype))
    return out, state


blocks.register_reference("recurrent_step", composed_step)
blocks.register_reference("recurrent_sequence", composed_sequence)


def _check_bias(name, bias):
    if not isinstance(bias, bool):
        raise TypeError(f"{name}: bias must be True or False, got {bias!r} "
                        "(as in PyTorch, bias comes before nonlinearity: pass nonlinearity=...)")


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
        """The next state from the input projection gi: the rule's step (the block `recurrent_step`)."""
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


class RecurrentLayer(Module):
    """A recurrent layer over a whole sequence: num_layers stacked, each optionally bidirectional.

    Constructor, defaults and parameter names are PyTorch's (weight_ih_l0, ..., weight_hh_l1_reverse):
    x is (T, B, I) and the outputs (T, B, D*H), as PyTorch's default; batch_first=True takes
    (B, T, I) and returns (B, T, D*H). The states h0, h_n are (L*D, B, H) either way. Layer l > 0
    reads the outputs of layer l - 1 (D*H features), with dropout between layers while training.
    The step equations come from the same rule the cells use.
    """

    Rule = None

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, **rule_options):
        name = type(self).__name__
        _check_bias(name, bias)
        check_sizes(name, input_size=input_size, hidden_size=hidden_size)
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"{name}: num_layers must be a whole number >= 1, got {num_layers!r} "
                             "(as in PyTorch, the third argument is num_layers: pass bidirectional=True by name)")
        if not 0 <= dropout <= 1:
            raise ValueError(f"{name}: dropout must lie in [0, 1], got {dropout}")
        super().__init__()
        self.input_size, self.hidden_size, self.bidirectional = input_size, hidden_size, bool(bidirectional)
        self.num_layers, self.batch_first, self.dropout = num_layers, bool(batch_first), dropout
        self.rule = self.Rule(hidden_size, **rule_options)
        rows = self.rule.gates * hidden_size
        D = 2 if bidirectional else 1
        for layer in range(num_layers):
            inputs = input_size if layer == 0 else D * hidden_size
            for suffix in self._suffixes():
                setattr(self, f"weight_ih_l{layer}{suffix}", _init(hidden_size, rows, inputs))
                setattr(self, f"weight_hh_l{layer}{suffix}", _init(hidden_size, rows, hidden_size))
                setattr(self, f"bias_ih_l{layer}{suffix}", _init(hidden_size, rows) if bias else None)
                setattr(self, f"bias_hh_l{layer}{suffix}", _init(hidden_size, rows) if bias else None)

    def _suffixes(self):
        return ("", "_reverse") if self.bidirectional else ("",)

    def forward(self, x, h0=None, lengths=None):
        name = type(self).__name__
        layout = "(batch, time, " if self.batch_first else "(time, batch, "
        if x.ndim != 3 or x.shape[2] != self.input_size:
            raise ShapeError(f"{name}: input {x.shape}, expected {layout}{self.input_size}) "
                             f"(batch_first={self.batch_first})")
        if not self.batch_first:
            x = x.transpose(0, 1)
        B, T, _ = x.shape
        if T == 0:
            raise ShapeError(f"{name}: input {x.shape} has no time steps; a sequence needs at least one")
        D = 2 if self.bidirectional else 1
        lengths, keeps = step_masks(lengths, B, T, name)
        initial = self._initial_states(h0, x, self.num_layers * D)  # layer l, direction d at l * D + d
        finals = []
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:
                x = dropout(x, self.dropout)
            x, layer_finals = self._one_layer(x, layer, initial[layer * D:(layer + 1) * D], lengths, keeps)
            finals += layer_finals
        return (x if self.batch_first else x.transpose(0, 1)), self._final_states(finals)

    def _one_layer(self, x, layer, initial, lengths, keeps):
        """Layer `layer` over x (B, T, I): (outputs (B, T, D*H), [final state of each direction]).

        Each direction is the block `recurrent_sequence`: one fused node per direction, or under
        `ta.fused(False)` step by step (composed_sequence).
        """
        outputs, finals = [], []
        for d, suffix in enumerate(self._suffixes()):
            weight_ih, weight_hh, bias_ih, bias_hh = (getattr(self, f"{name}_l{layer}{suffix}")
                                                      for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
            gi = project(x, weight_ih, bias_ih)  # every step's input projection in one product
            output, state = blocks.recurrent_sequence(self.rule, gi, initial[d], weight_hh, bias_hh, lengths, keeps,
                                                      reverse=d == 1)
            outputs.append(output)
            finals.append(state)
        return (outputs[0] if len(outputs) == 1 else cat(outputs, axis=2)), finals

    def _initial_states(self, h0, x, count):
        B = x.shape[0]
        if h0 is None:
            return [wrap(np.zeros((B, self.hidden_size), x.dtype))] * count
        if tuple(h0.shape) != (count, B, self.hidden_size):
            raise ShapeError(f"{type(self).__name__}: h0 {h0.shape}, expected (num_layers * directions, batch, "
                             f"hidden) = ({count}, {B}, {self.hidden_size})")
        return [h0[i] for i in range(count)]

    def _final_states(self, finals):
        return stack(finals, axis=0)

    def extra_repr(self):
        extras = "".join(f", {key}={value}" for key, value, default in (
            ("num_layers", self.num_layers, 1), ("batch_first", self.batch_first, False),
            ("dropout", self.dropout, 0.0), ("bidirectional", self.bidirectional, False)) if value != default)
        return f"{self.input_size}, {self.hidden_size}{extras}"


def step_masks(lengths, B, T, name):
    """(lengths as an array, keeps) with keeps[t] bool (B, 1), True where step t is inside the sequence."""
    if lengths is None:
        return None, None
    lengths = np.asarray(lengths.data if isinstance(lengths, Tensor) else lengths)
    if lengths.shape != (B,) or lengths.dtype.kind not in "iu":
        raise ShapeError(f"{name}: lengths must be {B} integers (one per sequence), got {lengths.shape} {lengths.dtype}")
    if lengths.min() < 1 or lengths.max() > T:
        raise ValueError(f"{name}: lengths must lie in [1, {T}], got {lengths.min()}..{lengths.max()}")
    keeps = real_positions(lengths, T)
    return lengths, [keeps[:, t, None] for t in range(T)]


# --------------------------------------------------------------------------------------------------
# The Elman RNN: its step equation, the cell (one step) and the layer (a whole sequence).
#
#     h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)      (or relu)
#
# The RNN has no fused node: its step is these few ops on either path (a node gained
# too little).
# --------------------------------------------------------------------------------------------------

class RNNRule(StepRule):
    """h' = tanh(gi + h W_hh^T + b_hh)  (or relu)."""

    gates = 1

    def __init__(self, hidden_size, nonlinearity="tanh"):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(hidden_size)
        self.nonlinearity = nonlinearity

    def equations(self, gi, h, weight_hh, bias_hh):
        pre = gi + project(h, weight_hh, bias_hh)
        return pre.tanh() if self.nonlinearity == "tanh" else pre.relu()


class RNNCell(RecurrentCell):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)  (or relu)."""

    Rule = RNNRule

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh"):
        super().__init__(input_size, hidden_size, bias, nonlinearity=nonlinearity)


class RNN(RecurrentLayer):
    """Elman RNN layer; forward(x (T, B, I), h0=None, lengths=None) -> (outputs (T, B, D*H), h_n (L*D, B, H))."""

    Rule = RNNRule

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False):
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         nonlinearity=nonlinearity)


# --------------------------------------------------------------------------------------------------
# The GRU (Cho et al. 2014, PyTorch's equations and gate order r|z|n): its step, cell and layer.
#
#     r  = sigmoid(W_ir x + b_ir + W_hr h + b_hr)        reset gate
#     z  = sigmoid(W_iz x + b_iz + W_hz h + b_hz)        update gate
#     n  = tanh(W_in x + b_in + r * (W_hn h + b_hn))     candidate state
#     h' = (1 - z) * n + z * h
#
# GRURule.equations below is the GRU step this package reads as the reference: every fast form
# names it and is tested equal to it (tests/test_one_form.py). Their array math is
# ops/reference_blocks.py's gru_gates (the numpy reference; ops/kernels/recurrent_gates.py is its
# compiled twin); the fused nodes, one step (fused/recurrent_steps.py, GRUStep) and a whole
# direction of a layer (fused/gru_sequence.py, GRUSequence), call it. The cell, the loop over the
# steps, stacking and both directions are above, shared with RNN and LSTM.
# --------------------------------------------------------------------------------------------------

class GRURule(StepRule):
    """r, z = sig(.), n = tanh(gi_n + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h."""

    gates = 3

    def equations(self, gi, h, weight_hh, bias_hh):
        H = self.hidden_size
        gh = project(h, weight_hh, bias_hh)
        r = (gi[:, :H] + gh[:, :H]).sigmoid()
        z = (gi[:, H:2 * H] + gh[:, H:2 * H]).sigmoid()
        n = (gi[:, 2 * H:] + r * gh[:, 2 * H:]).tanh()
        return (1 - z) * n + z * h


class GRUCell(RecurrentCell):
    """r, z = sig(.), n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h."""

    Rule = GRURule


class GRU(RecurrentLayer):
    """GRU layer; forward(x (T, B, I), h0=None, lengths=None) -> (outputs (T, B, D*H), h_n (L*D, B, H))."""

    Rule = GRURule


# --------------------------------------------------------------------------------------------------
# The LSTM (Hochreiter & Schmidhuber 1997, PyTorch's equations and gate order i|f|g|o): its
# step, cell and layer. The state is a pair (h, c).
#
#     i, f, o = sigmoid(W_i* x + b_i* + W_h* h + b_h*)   input, forget, output gates
#     g       = tanh(W_ig x + b_ig + W_hg h + b_hg)       candidate cell
#     c'      = f * c + i * g,     h' = o * tanh(c')
#
# LSTMRule.equations below is the LSTM step this package reads as the reference: every fast form
# names it and is tested equal to it (tests/test_one_form.py). Their array math is
# ops/reference_blocks.py's lstm_gates (the numpy reference; ops/kernels/recurrent_gates.py is its
# compiled twin); the fused nodes, one step (fused/recurrent_steps.py, LSTMStep) and a whole
# direction of a layer (fused/lstm_sequence.py, LSTMSequence), call it. The cell, the loop over
# the steps, stacking and both directions are above, shared with RNN and GRU.
# --------------------------------------------------------------------------------------------------

class LSTMRule(StepRule):
    """i, f, o = sig(.), g = tanh(.), c' = f * c + i * g, h' = o * tanh(c'); the state is (h, c)."""

    gates = 4
    state_is_pair = True

    def equations(self, gi, state, weight_hh, bias_hh):
        h, c = state
        H = self.hidden_size
        gates = gi + project(h, weight_hh, bias_hh)
        i, f = gates[:, :H].sigmoid(), gates[:, H:2 * H].sigmoid()
        g, o = gates[:, 2 * H:3 * H].tanh(), gates[:, 3 * H:].sigmoid()
        c_new = f * c + i * g
        return o * c_new.tanh(), c_new


class LSTMCell(RecurrentCell):
    """i, f, o = sig(.), g = tanh(.), c' = f * c + i * g, h' = o * tanh(c'); forward(x, (h, c)) -> (h', c')."""

    Rule = LSTMRule


class LSTM(RecurrentLayer):
    """LSTM layer; forward(x, (h0, c0)=None, lengths=None) -> (outputs, (h_n, c_n)), each state (L*D, B, H)."""

    Rule = LSTMRule

    def _initial_states(self, h0, x, count):
        if h0 is None:
            return [self.rule.zero_state(x)] * count
        if not isinstance(h0, (tuple, list)) or len(h0) != 2:
            raise TypeError("LSTM: the initial state is a pair (h0, c0), each (num_layers * directions, batch, hidden)")
        h, c = h0
        hs, cs = super()._initial_states(h, x, count), super()._initial_states(c, x, count)
        return list(zip(hs, cs))

    def _final_states(self, finals):
        return stack([h for h, _ in finals], axis=0), stack([c for _, c in finals], axis=0)
