"""The LSTM (Hochreiter & Schmidhuber 1997, PyTorch's equations and gate order i|f|g|o): its
step, cell and layer. The state is a pair (h, c).

    i, f, o = sigmoid(W_i* x + b_i* + W_h* h + b_h*)   input, forget, output gates
    g       = tanh(W_ig x + b_ig + W_hg h + b_hg)       candidate cell
    c'      = f * c + i * g,     h' = o * tanh(c')

LSTMRule.equations below is the LSTM step this package reads as the reference: every fast form
names it and is tested equal to it (tests/test_one_form.py). Their array math is
ops/reference_blocks.py's lstm_gates (the numpy reference; ops/kernels/recurrent_gates.py is its
compiled twin); the fused nodes, one step (fused/recurrent_steps.py, LSTMStep) and a whole
direction of a layer (fused/lstm_sequence.py, LSTMSequence), call it. The cell, the loop over
the steps, stacking and both directions are recurrent.py's, shared with RNN and GRU.
"""
from ..autograd.rules_shape import stack
from .recurrent import RecurrentCell, RecurrentLayer, StepRule, project


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
