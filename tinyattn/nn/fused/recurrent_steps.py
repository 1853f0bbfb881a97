"""Fused recurrent steps: one graph node per time step, forward and backward written by hand.

Each equals the `equations` of its step rule in nn/recurrent.py (_RNNRule, _GRURule,
_LSTMRule: the same step as autograd ops), which nn.RNNCell/GRUCell/LSTMCell and the layers run
instead under `ta.fused(False)`.

Each step takes the input projection gi = x W_ih^T + b_ih already computed (a sequence layer
computes it for all time steps in one product) and the previous state, and returns the next
state. PyTorch's equations, gates stacked in PyTorch's order:

    RNN   h' = act(gi + h W_hh^T + b_hh)
    GRU   r|z|n:  r = sig(gi_r + gh_r),  z = sig(gi_z + gh_z),  n = tanh(gi_n + r * gh_n),
                  h' = (1 - z) * n + z * h,           where gh = h W_hh^T + b_hh
    LSTM  i|f|g|o of gates = gi + h W_hh^T + b_hh:  i, f, o = sig(.), g = tanh(.),
                  c' = f * c + i * g,   h' = o * tanh(c')

`keep` (bool (B, 1) or None) freezes the state of finished sequences: where keep is False
the step returns the old state unchanged, so padding never reaches a state.
Matrix products go through tinyattn.ops.arrays.matmul (BLAS); the GRU and LSTM gate arithmetic is in
tinyattn/ops/reference_blocks.py (numpy) and tinyattn/ops/kernels/recurrent_gates.py (Numba), each way.
"""
import numpy as np

from ...autograd.function import Function
from ...ops import arrays
from ...ops.reference_blocks import freeze


def _hidden_projection(h, w_hh, b_hh):
    gh = arrays.matmul(h, w_hh.T)
    return gh + b_hh if b_hh is not None else gh


def _through_hidden_projection(d_gates, h, w_hh, has_bias):
    """Gradients of gh = h W_hh^T + b_hh: (to h, to W_hh, to b_hh)."""
    return arrays.matmul(d_gates, w_hh), arrays.matmul(d_gates.T, h), (arrays.sum_over(d_gates, (0,)) if has_bias else None)


class RNNStep(Function):
    """h' = act(gi + h W_hh^T + b_hh);  with a = pre-activation, da = g * act'(a):
    dL/dgi = da,  dL/dh = da W_hh,  dL/dW_hh = da^T h,  dL/db_hh = sum of da.
    Equals _RNNRule.equations (nn/recurrent.py), then where(keep, h', h)."""

    @staticmethod
    def forward(ctx, gi, h, w_hh, b_hh, nonlinearity, keep):
        pre = gi + _hidden_projection(h, w_hh, b_hh)
        new = np.tanh(pre) if nonlinearity == "tanh" else np.maximum(pre, 0)
        ctx.save_for_backward(h, w_hh, new)
        ctx.meta = nonlinearity, keep, b_hh is not None
        return freeze(keep, new, h)

    @staticmethod
    def backward(ctx, g):
        h, w_hh, new = ctx.saved_tensors
        nonlinearity, keep, has_bias = ctx.meta
        g_new = g if keep is None else g * keep
        d_pre = g_new * (1 - new * new) if nonlinearity == "tanh" else g_new * (new > 0)
        dh, dw, db = _through_hidden_projection(d_pre, h, w_hh, has_bias)
        if keep is not None:
            dh = dh + g * ~keep
        return d_pre, dh, dw, db, None, None


class GRUStep(Function):
    """GRU step (equations at the top). With g = dL/dh' (gate rules in ops/reference_blocks.py):
    dz = g (h - n) z(1-z),  dn_pre = g (1-z)(1-n^2),  dr = dn_pre gh_n r(1-r),
    dL/dgi = [dr, dz, dn_pre],  dL/dgh = [dr, dz, dn_pre * r],  dL/dh = g z + dgh W_hh.
    Equals _GRURule.equations (nn/recurrent.py), then where(keep, h', h)."""

    @staticmethod
    def forward(ctx, gi, h, w_hh, b_hh, keep):
        gh = _hidden_projection(h, w_hh, b_hh)
        new, r, z, n = arrays.gru_gates(gi, gh, h, keep)
        ctx.save_for_backward(h, w_hh, r, z, n, gh)
        ctx.meta = keep, b_hh is not None
        return new

    @staticmethod
    def backward(ctx, g):
        h, w_hh, r, z, n, gh = ctx.saved_tensors
        keep, has_bias = ctx.meta
        d_gi, d_gh, dh_direct = arrays.gru_gates_backward(g, h, r, z, n, gh, keep)
        dh, dw, db = _through_hidden_projection(d_gh, h, w_hh, has_bias)
        return d_gi, dh + dh_direct, dw, db, None


class LSTMStep(Function):
    """LSTM step (equations at the top); two outputs h', c'. With gh = dL/dh', gc = dL/dc':
    dc = gc + gh * o * (1 - tanh(c')^2)        (c' reaches the loss directly and through h')
    d_i = dc * g * i(1-i),  d_f = dc * c * f(1-f),  d_g = dc * i * (1-g^2),  d_o = gh * tanh(c') * o(1-o)
    dL/dgi = d_gates = [d_i, d_f, d_g, d_o],  dL/dc = dc * f,  dL/dh = d_gates W_hh.
    Equals _LSTMRule.equations (nn/recurrent.py), then where(keep, ., .) on h' and c'."""

    @staticmethod
    def forward(ctx, gi, h, c, w_hh, b_hh, keep):
        gates = gi + _hidden_projection(h, w_hh, b_hh)
        h_new, c_new, i, f, g, o, tanh_c = arrays.lstm_gates(gates, c, h, keep)
        ctx.save_for_backward(h, c, w_hh, i, f, g, o, tanh_c)
        ctx.meta = keep, b_hh is not None
        return h_new, c_new

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        h, c, w_hh, i, f, g, o, tanh_c = ctx.saved_tensors
        keep, has_bias = ctx.meta
        d_gates, dc_prev, dh_frozen = arrays.lstm_gates_backward(grad_h, grad_c, c, i, f, g, o, tanh_c, keep)
        dh, dw, db = _through_hidden_projection(d_gates, h, w_hh, has_bias)
        if dh_frozen is not None:
            dh = dh + dh_frozen
        return d_gates, dh, dc_prev, dw, db, None
