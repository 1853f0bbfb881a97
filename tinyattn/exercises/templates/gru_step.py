"""One GRU step (Cho et al. 2014, https://arxiv.org/abs/1406.1078), with PyTorch's equations (nn.GRUCell).

    gi = x W_ih^T + b_ih,   gh = h W_hh^T + b_hh     each stacked as three blocks of H: r | z | n
    r = sigmoid(gi_r + gh_r)                         reset gate
    z = sigmoid(gi_z + gh_z)                         update gate
    n = tanh(gi_n + r * gh_n)                        candidate state; r scales all of gh_n, b_hn included
    h' = (1 - z) * n + z * h

Write backward: return (dL/dx, dL/dh, dL/dw_ih, dL/dw_hh, dL/db_ih, dL/db_hh).
    python -m tinyattn.exercises check gru_step
    python -m tinyattn.exercises hint gru_step         (a step at a time, if you are stuck)
"""
import numpy as np


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


def forward(x, h, w_ih, w_hh, b_ih, b_hh):
    """x (B, D), h (B, H), w_ih (3H, D), w_hh (3H, H), b_ih (3H,), b_hh (3H,) -> h' (B, H)."""
    i_r, i_z, i_n = np.split(x @ w_ih.T + b_ih, 3, axis=1)
    h_r, h_z, h_n = np.split(h @ w_hh.T + b_hh, 3, axis=1)
    r = sigmoid(i_r + h_r)
    z = sigmoid(i_z + h_z)
    n = np.tanh(i_n + r * h_n)
    h_new = (1 - z) * n + z * h
    return h_new, (x, h, w_ih, w_hh, r, z, n, h_n)


def backward(grad, cache):
    """grad = dL/dh', shape (B, H). Return the six gradients, each the shape of its input."""
    x, h, w_ih, w_hh, r, z, n, h_n = cache
    raise NotImplementedError("write backward: return (dL/dx, dL/dh, dL/dw_ih, dL/dw_hh, dL/db_ih, dL/db_hh)")
