"""Fused recurrent steps: one graph node per time step, forward and backward written by hand.

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
Matrix products go through tinyattn.ops.matmul; the gate arithmetic is plain numpy.
"""
import numpy as np

from ..autograd.function import Function
from ..autograd.ops_elementwise import stable_sigmoid
from ..ops.matmul import matmul


sigmoid = stable_sigmoid


def _hidden_projection(h, w_hh, b_hh):
    gh = matmul(h, w_hh.T)
    return gh + b_hh if b_hh is not None else gh


def _through_hidden_projection(d_gates, h, w_hh, has_bias):
    """Gradients of gh = h W_hh^T + b_hh: (to h, to W_hh, to b_hh)."""
    return matmul(d_gates, w_hh), matmul(d_gates.T, h), (d_gates.sum(axis=0) if has_bias else None)


def _freeze(keep, new, old):
    return new if keep is None else np.where(keep, new, old)


class RNNStep(Function):
    """h' = act(gi + h W_hh^T + b_hh);  with a = pre-activation, da = g * act'(a):
    dL/dgi = da,  dL/dh = da W_hh,  dL/dW_hh = da^T h,  dL/db_hh = sum of da."""

    @staticmethod
    def forward(ctx, gi, h, w_hh, b_hh, nonlinearity, keep):
        pre = gi + _hidden_projection(h, w_hh, b_hh)
        new = np.tanh(pre) if nonlinearity == "tanh" else np.maximum(pre, 0)
        ctx.save_for_backward(h, w_hh, new)
        ctx.meta = nonlinearity, keep, b_hh is not None
        return _freeze(keep, new, h)

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
    """GRU step (equations at the top). With g = dL/dh':
    dz = g (h - n) z(1-z),  dn_pre = g (1-z)(1-n^2),  dr = dn_pre gh_n r(1-r),
    dL/dgi = [dr, dz, dn_pre],  dL/dgh = [dr, dz, dn_pre * r],  dL/dh = g z + dgh W_hh."""

    @staticmethod
    def forward(ctx, gi, h, w_hh, b_hh, keep):
        gh = _hidden_projection(h, w_hh, b_hh)
        i_r, i_z, i_n = np.split(gi, 3, axis=1)
        h_r, h_z, h_n = np.split(gh, 3, axis=1)
        r = sigmoid(i_r + h_r)
        z = sigmoid(i_z + h_z)
        n = np.tanh(i_n + r * h_n)
        new = (1 - z) * n + z * h
        ctx.save_for_backward(h, w_hh, r, z, n, h_n)
        ctx.meta = keep, b_hh is not None
        return _freeze(keep, new, h)

    @staticmethod
    def backward(ctx, g):
        h, w_hh, r, z, n, h_n = ctx.saved_tensors
        keep, has_bias = ctx.meta
        g_new = g if keep is None else g * keep
        dz = g_new * (h - n) * z * (1 - z)
        dn_pre = g_new * (1 - z) * (1 - n * n)
        dr = dn_pre * h_n * r * (1 - r)
        d_gi = np.concatenate([dr, dz, dn_pre], axis=1)
        d_gh = np.concatenate([dr, dz, dn_pre * r], axis=1)
        dh, dw, db = _through_hidden_projection(d_gh, h, w_hh, has_bias)
        dh = dh + g_new * z
        if keep is not None:
            dh = dh + g * ~keep
        return d_gi, dh, dw, db, None


class LSTMStep(Function):
    """LSTM step (equations at the top); two outputs h', c'. With gh = dL/dh', gc = dL/dc':
    dc = gc + gh * o * (1 - tanh(c')^2)        (c' reaches the loss directly and through h')
    d_i = dc * g * i(1-i),  d_f = dc * c * f(1-f),  d_g = dc * i * (1-g^2),  d_o = gh * tanh(c') * o(1-o)
    dL/dgi = d_gates = [d_i, d_f, d_g, d_o],  dL/dc = dc * f,  dL/dh = d_gates W_hh."""

    @staticmethod
    def forward(ctx, gi, h, c, w_hh, b_hh, keep):
        gates = gi + _hidden_projection(h, w_hh, b_hh)
        a_i, a_f, a_g, a_o = np.split(gates, 4, axis=1)
        i, f, o = sigmoid(a_i), sigmoid(a_f), sigmoid(a_o)
        g = np.tanh(a_g)
        c_new = f * c + i * g
        tanh_c = np.tanh(c_new)
        h_new = o * tanh_c
        ctx.save_for_backward(h, c, w_hh, i, f, g, o, tanh_c)
        ctx.meta = keep, b_hh is not None
        return _freeze(keep, h_new, h), _freeze(keep, c_new, c)

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        h, c, w_hh, i, f, g, o, tanh_c = ctx.saved_tensors
        keep, has_bias = ctx.meta
        gh = grad_h if keep is None else grad_h * keep
        gc = grad_c if keep is None else grad_c * keep
        dc = gc + gh * o * (1 - tanh_c * tanh_c)
        d_gates = np.concatenate([dc * g * i * (1 - i),      # input gate
                                  dc * c * f * (1 - f),      # forget gate
                                  dc * i * (1 - g * g),      # cell candidate
                                  gh * tanh_c * o * (1 - o)],  # output gate
                                 axis=1)
        dh, dw, db = _through_hidden_projection(d_gates, h, w_hh, has_bias)
        dc_prev = dc * f
        if keep is not None:
            dh = dh + grad_h * ~keep
            dc_prev = dc_prev + grad_c * ~keep
        return d_gates, dh, dc_prev, dw, db, None
