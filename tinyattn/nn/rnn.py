"""The Elman RNN: its step equation, the cell (one step) and the layer (a whole sequence).

    h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)      (or relu)

The cell, the loop over the steps, stacking and both directions are recurrent.py's, shared with
GRU and LSTM. The RNN has no fused node: its step is these few ops on either path (a node gained
too little).
"""
from .recurrent import RecurrentCell, RecurrentLayer, StepRule, project


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
