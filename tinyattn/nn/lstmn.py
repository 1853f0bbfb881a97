"""LSTMN: an LSTM that attends over its own past (Cheng, Dong and Lapata 2016, "Long Short-Term
Memory-Networks for Machine Reading", https://arxiv.org/abs/1601.06733).

Instead of one memory cell carried from step to step, the LSTMN keeps a tape of every earlier
hidden state h_i and cell c_i, and at each step reads an attention-weighted summary of it:

    a_i     = v^T tanh(W_h h_i + W_x x_t + W_s s_{t-1})      i < t   (how relevant step i is now)
    w       = softmax(a)                                       over the past steps only
    s_t     = sum_i w_i h_i,     m_t = sum_i w_i c_i           adaptive summaries of the tape
    i, f, o = sigmoid(.), g = tanh(.)   of   W [s_t; x_t] + b  (gates i|f|o|g as in the paper)
    c_t     = f * m_t + i * g,   h_t = o * tanh(c_t)

At t = 0 the tape is empty: the weights and summaries are zero, so the first step is an LSTM
step from a zero state.
"""
import numpy as np

from ..autograd.dtypes import ShapeError
from ..autograd.rules_shape import cat, stack, unbind
from ..autograd.tensor import wrap
from .layers import Linear
from .module import Module
from .masks import real_positions
from .recurrent import step_masks
from .sizes import check_sizes


class LSTMN(Module):
    """forward(x (B, T, I), lengths=None) -> (outputs (B, T, H), attention over past steps (B, T, T)).

    Row t of the attention holds the weights step t gave to steps 0..t-1 (zeros elsewhere).
    With lengths, outputs past each sequence's length are zero; since a step only looks back,
    padding never reaches a real step.
    """

    def __init__(self, input_size, hidden_size):
        check_sizes("LSTMN", input_size=input_size, hidden_size=hidden_size)
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.W_h = Linear(hidden_size, hidden_size, bias=False)  # the tape's hidden states
        self.W_x = Linear(input_size, hidden_size)               # the current input
        self.W_s = Linear(hidden_size, hidden_size, bias=False)  # the previous summary
        self.v = Linear(hidden_size, 1, bias=False)
        self.gates = Linear(hidden_size + input_size, 4 * hidden_size)

    def forward(self, x, lengths=None):
        if x.ndim != 3 or x.shape[2] != self.input_size:
            raise ShapeError(f"LSTMN: input {x.shape}, expected (batch, time, {self.input_size})")
        B, T, _ = x.shape
        H = self.hidden_size
        zeros = wrap(np.zeros((B, H), x.dtype))
        summary = zeros
        tape_h, tape_c, tape_keys = [], [], []  # tape_keys[i] = W_h h_i, computed once per step
        outputs, rows = [], []
        for t, x_t in enumerate(unbind(x, axis=1)):
            if t == 0:
                summary, memory = zeros, zeros
                weights = wrap(np.zeros((B, 0), x.dtype))
            else:
                query = (self.W_x(x_t) + self.W_s(summary)).unsqueeze(1)          # (B, 1, H)
                scores = self.v((stack(tape_keys, axis=1) + query).tanh())          # (B, t, 1)
                weights = scores.reshape(B, t).softmax(-1)                         # (B, t)
                summary = (weights.unsqueeze(1) @ stack(tape_h, axis=1)).reshape(B, H)
                memory = (weights.unsqueeze(1) @ stack(tape_c, axis=1)).reshape(B, H)
            gates = self.gates(cat([summary, x_t], axis=-1))
            i, f, o = gates[:, :H].sigmoid(), gates[:, H:2 * H].sigmoid(), gates[:, 2 * H:3 * H].sigmoid()
            g = gates[:, 3 * H:].tanh()
            c = f * memory + i * g
            h = o * c.tanh()
            tape_h.append(h)
            tape_c.append(c)
            tape_keys.append(self.W_h(h))
            outputs.append(h)
            rows.append(cat([weights, wrap(np.zeros((B, T - t), x.dtype))], axis=-1))  # row t of (T, T)
        out, attention = stack(outputs, axis=1), stack(rows, axis=1)
        if lengths is not None:
            lengths, _ = step_masks(lengths, B, T, "LSTMN")  # the same checks as the RNN layers
            real = real_positions(lengths, T)[..., None].astype(x.dtype)  # (B, T, 1)
            out, attention = out * wrap(real), attention * wrap(real)
        return out, attention

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}"
