"""One step of a recurrent network (Elman 1990, "Finding Structure in Time",
https://doi.org/10.1207/s15516709cog1402_1), as PyTorch's nn.RNNCell computes it.

    h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)

Write backward: return (dL/dx, dL/dh, dL/dw_ih, dL/dw_hh, dL/db_ih, dL/db_hh). Through time,
dL/dh is what the previous step receives as its grad.
    python -m tinyattn.exercises check rnn_step
    python -m tinyattn.exercises hint rnn_step         (a step at a time, if you are stuck)
"""
import numpy as np


def forward(x, h, w_ih, w_hh, b_ih, b_hh):
    """x (B, D), h (B, H), w_ih (H, D), w_hh (H, H), b_ih (H,), b_hh (H,) -> h' (B, H)."""
    h_new = np.tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)
    return h_new, (x, h, w_ih, w_hh, h_new)


def backward(grad, cache):
    """grad = dL/dh', shape (B, H). Return the six gradients, each the shape of its input."""
    x, h, w_ih, w_hh, h_new = cache
    raise NotImplementedError("write backward: return (dL/dx, dL/dh, dL/dw_ih, dL/dw_hh, dL/db_ih, dL/db_hh)")
