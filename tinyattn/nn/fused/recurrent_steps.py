"""Fused recurrent steps: one graph node per time step, forward and backward written by hand.

Each equals the `equations` of its step rule (nn/recurrent.py GRURule, LSTMRule: the same
step as autograd ops, the reference), which nn.GRUCell/LSTMCell run instead under
`ta.fused(False)`. (The Elman RNN has no node: one gained too little over its composed step
to keep a second form; the figure is in the git history of benchmarks/RESULTS.md.)

Each step takes the input projection gi = x W_ih^T + b_ih already computed (a sequence layer
computes it for all time steps in one product) and the previous state, and returns the next
state; gh = h W_hh^T + b_hh. `keep` (bool (B, 1) or None) freezes the state of finished
sequences: where keep is False the step returns the old state unchanged, so padding never
reaches a state.

The GRU and LSTM steps on arrays (gru_step, lstm_step and their backwards, below) are the hidden
projection around the gate rules of ops/reference_blocks.py (where the equations and their
derivatives are written, once); the sequence nodes (gru_sequence.py, lstm_sequence.py) call
these same functions at each step. Matrix products and gates go through tinyattn.ops.arrays, so
the fast path reaches them.
"""
from ...autograd.function import Function
from ...ops import arrays


def hidden_projection(h, w_hh, b_hh):
    """gh = h W_hh^T + b_hh."""
    gh = arrays.matmul(h, w_hh.T)
    return gh + b_hh if b_hh is not None else gh


def through_hidden_projection(d_gh, h, w_hh, has_bias):
    """Gradients of gh = h W_hh^T + b_hh: (to h: d_gh W_hh, to W_hh: d_gh^T h, to b_hh: sum of d_gh)."""
    return arrays.matmul(d_gh, w_hh), arrays.matmul(d_gh.T, h), (arrays.sum_over(d_gh, (0,)) if has_bias else None)


def gru_step(gi, h, w_hh, b_hh, keep):
    """The GRU step on arrays: (h', what gru_step_backward needs)."""
    gh = hidden_projection(h, w_hh, b_hh)
    new, r, z, n = arrays.gru_gates(gi, gh, h, keep)
    return new, (r, z, n, gh)


def gru_step_backward(g, h, w_hh, saved, has_bias, keep):
    """g = dL/dh' -> (dL/dgi, dL/dh, dL/dW_hh, dL/db_hh): the gate rules, then the hidden projection's."""
    r, z, n, gh = saved
    d_gi, d_gh, dh_direct = arrays.gru_gates_backward(g, h, r, z, n, gh, keep)
    dh, dw, db = through_hidden_projection(d_gh, h, w_hh, has_bias)
    return d_gi, dh + dh_direct, dw, db


def lstm_step(gi, h, c, w_hh, b_hh, keep):
    """The LSTM step on arrays: (h', c', what lstm_step_backward needs)."""
    gates = gi + hidden_projection(h, w_hh, b_hh)
    h_new, c_new, *saved = arrays.lstm_gates(gates, c, h, keep)
    return h_new, c_new, saved


def lstm_step_backward(grad_h, grad_c, h, c, w_hh, saved, has_bias, keep):
    """(dL/dh', dL/dc') -> (dL/dgi, dL/dh, dL/dc, dL/dW_hh, dL/db_hh): the gate rules, then the
    hidden projection's (d gates = dL/dgi, as gates = gi + gh)."""
    d_gates, dc_prev, dh_frozen = arrays.lstm_gates_backward(grad_h, grad_c, c, *saved, keep)
    dh, dw, db = through_hidden_projection(d_gates, h, w_hh, has_bias)
    if dh_frozen is not None:
        dh = dh + dh_frozen
    return d_gates, dh, dc_prev, dw, db


class GRUStep(Function):
    """One GRU step (gru_step). With g = dL/dh', the gate rules (ops/reference_blocks.py,
    gru_gates_backward) give dL/dgi, dL/dgh and the direct part g z of dL/dh; through gh = h W_hh^T + b_hh:
    dL/dh = g z + dgh W_hh,  dL/dW_hh = dgh^T h,  dL/db_hh = sum of dgh.
    Equals GRURule.equations (nn/recurrent.py), then where(keep, h', h)."""

    @staticmethod
    def forward(ctx, gi, h, w_hh, b_hh, keep):
        new, saved = gru_step(gi, h, w_hh, b_hh, keep)
        ctx.save_for_backward(h, w_hh, *saved)
        ctx.meta = keep, b_hh is not None
        return new

    @staticmethod
    def backward(ctx, g):
        h, w_hh, *saved = ctx.saved_arrays
        keep, has_bias = ctx.meta
        return (*gru_step_backward(g, h, w_hh, saved, has_bias, keep), None)


class LSTMStep(Function):
    """One LSTM step (lstm_step); two outputs h', c'. With dL/dh' and dL/dc', the gate rules
    (ops/reference_blocks.py, lstm_gates_backward) give d_gates = dL/dgi and dL/dc = dc f; through
    gates = gi + h W_hh^T + b_hh:  dL/dh = d_gates W_hh,  dL/dW_hh = d_gates^T h,  dL/db_hh = sum of d_gates.
    Equals LSTMRule.equations (nn/recurrent.py), then where(keep, ., .) on h' and c'."""

    @staticmethod
    def forward(ctx, gi, h, c, w_hh, b_hh, keep):
        h_new, c_new, saved = lstm_step(gi, h, c, w_hh, b_hh, keep)
        ctx.save_for_backward(h, c, w_hh, *saved)
        ctx.meta = keep, b_hh is not None
        return h_new, c_new

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        h, c, w_hh, *saved = ctx.saved_arrays
        keep, has_bias = ctx.meta
        d_gates, dh, dc_prev, dw, db = lstm_step_backward(grad_h, grad_c, h, c, w_hh, saved, has_bias, keep)
        return d_gates, dh, dc_prev, dw, db, None
