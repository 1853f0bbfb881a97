"""The GRU (Cho et al. 2014, PyTorch's equations and gate order r|z|n): its step, cell and layer.

    r  = sigmoid(W_ir x + b_ir + W_hr h + b_hr)        reset gate
    z  = sigmoid(W_iz x + b_iz + W_hz h + b_hz)        update gate
    n  = tanh(W_in x + b_in + r * (W_hn h + b_hn))     candidate state
    h' = (1 - z) * n + z * h

GRURule.equations below is the GRU step this package reads as the reference: every fast form
names it and is tested equal to it (tests/test_one_form.py). Their array math is
ops/reference_blocks.py's gru_gates (the numpy reference; ops/kernels/recurrent_gates.py is its
compiled twin); the fused nodes, one step (fused/recurrent_steps.py, GRUStep) and a whole
direction of a layer (fused/gru_sequence.py, GRUSequence), call it. The cell, the loop over the
steps, stacking and both directions are recurrent.py's, shared with RNN and LSTM.
"""
from .recurrent import RecurrentCell, RecurrentLayer, StepRule, project


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
