"""The element-wise parts of the fused nodes' steps, in plain numpy (the versions to read).

GRU, gates r|z|n, gi = x W_ih^T + b_ih and gh = h W_hh^T + b_hh (B, 3H) already computed:
    r = sig(gi_r + gh_r),  z = sig(gi_z + gh_z),  n = tanh(gi_n + r * gh_n),  h' = (1 - z) n + z h
  backward, g = dL/dh' (where keep is True; a frozen row passes g straight to h):
    dz = g (h - n) z (1 - z),  dn_pre = g (1 - z)(1 - n^2),  dr = dn_pre gh_n r (1 - r)
    dgi = [dr, dz, dn_pre],  dgh = [dr, dz, dn_pre r],  dh (direct part) = g z

LSTM, gates i|f|g|o = gi + gh (B, 4H):
    i, f, o = sig(.),  g = tanh(.),  c' = f c + i g,  h' = o tanh(c')
  backward, gh = dL/dh', gc = dL/dc':
    dc = gc + gh o (1 - tanh(c')^2),  d_i = dc g i(1-i),  d_f = dc c f(1-f),  d_g = dc i (1-g^2),
    d_o = gh tanh(c') o(1-o),  dgates = [d_i, d_f, d_g, d_o],  dc (to c) = dc f

`keep` (bool (B, 1) or None): where False the step returns the old state, and the gradient of
the new state goes to the old one unchanged.

Additive attention's backward through hidden = tanh(wq[:, i] + uk[:, j]) (B, Tq, Tk, h):
    dpre = dscore v (1 - hidden^2),  dwq = sum over keys of dpre,  duk = sum over queries.
"""
import numpy as np

from .reference import sigmoid


def freeze(keep, new, old):
    """new where keep (bool (B, 1)) is True, old elsewhere; new itself when keep is None."""
    return new if keep is None else np.where(keep, new, old)


def gru_gates(gi, gh, h, keep):
    """-> (h' (frozen where keep is False), r, z, n)."""
    i_r, i_z, i_n = np.split(gi, 3, axis=1)
    h_r, h_z, h_n = np.split(gh, 3, axis=1)
    r = sigmoid(i_r + h_r)
    z = sigmoid(i_z + h_z)
    n = np.tanh(i_n + r * h_n)
    return freeze(keep, (1 - z) * n + z * h, h), r, z, n


def gru_gates_backward(g, h, r, z, n, gh, keep):
    """-> (dgi, dgh, dh through the gates' z h term and frozen rows); gh is the whole (B, 3H)."""
    h_n = gh[:, 2 * h.shape[1]:]
    g_new = g if keep is None else g * keep
    dz = g_new * (h - n) * z * (1 - z)
    dn_pre = g_new * (1 - z) * (1 - n * n)
    dr = dn_pre * h_n * r * (1 - r)
    dh = g_new * z if keep is None else g_new * z + g * ~keep
    return np.concatenate([dr, dz, dn_pre], axis=1), np.concatenate([dr, dz, dn_pre * r], axis=1), dh


def lstm_gates(gates, c, h, keep):
    """-> (h', c' (both frozen where keep is False), i, f, g, o, tanh(c'))."""
    a_i, a_f, a_g, a_o = np.split(gates, 4, axis=1)
    i, f, o = sigmoid(a_i), sigmoid(a_f), sigmoid(a_o)
    g = np.tanh(a_g)
    c_new = f * c + i * g
    tanh_c = np.tanh(c_new)
    return freeze(keep, o * tanh_c, h), freeze(keep, c_new, c), i, f, g, o, tanh_c


def lstm_gates_backward(grad_h, grad_c, c, i, f, g, o, tanh_c, keep):
    """-> (dgates, dc to the old cell state, dh straight to the old state (frozen rows only, or None))."""
    gh = grad_h if keep is None else grad_h * keep
    gc = grad_c if keep is None else grad_c * keep
    dc = gc + gh * o * (1 - tanh_c * tanh_c)
    d_gates = np.concatenate([dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g),
                              gh * tanh_c * o * (1 - o)], axis=1)
    dc_prev = dc * f
    if keep is None:
        return d_gates, dc_prev, None
    return d_gates, dc_prev + grad_c * ~keep, grad_h * ~keep


def through_pair_tanh(d_score, v, hidden):
    """(dwq, duk): dpre = dscore v (1 - hidden^2), summed over the keys and over the queries."""
    d_pre = d_score[..., None] * v * (1 - hidden * hidden)
    return d_pre.sum(axis=2), d_pre.sum(axis=1)
