"""One LSTM step (Hochreiter and Schmidhuber 1997, "Long Short-Term Memory",
https://doi.org/10.1162/neco.1997.9.8.1735; with the forget gate of Gers, Schmidhuber and Cummins
2000, "Learning to Forget", https://doi.org/10.1162/089976600300015015), PyTorch's equations (nn.LSTMCell).

    gates = x W_ih^T + b_ih + h W_hh^T + b_hh        four blocks of H: i | f | g | o
    i, f, o = sigmoid(gates_i, gates_f, gates_o),    g = tanh(gates_g)
    c' = f * c + i * g                               the cell: kept memory plus new content
    h' = o * tanh(c')

The step has two outputs, so backward gets two gradients: dL/dh' and dL/dc' (from the next step).
Write backward: return (dL/dx, dL/dh, dL/dc, dL/dw_ih, dL/dw_hh, dL/db_ih, dL/db_hh).
    python -m tinyattn.exercises check lstm_step
    python -m tinyattn.exercises hint lstm_step        (a step at a time, if you are stuck)
"""
import numpy as np


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


def forward(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """x (B, D), h (B, H), c (B, H), w_ih (4H, D), w_hh (4H, H), b_ih, b_hh (4H,) -> (h' (B, H), c' (B, H))."""
    i, f, g, o = np.split(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=1)
    i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
    c_new = f * c + i * g
    h_new = o * np.tanh(c_new)
    return (h_new, c_new), (x, h, c, w_ih, w_hh, i, f, g, o, c_new)


def backward(grad, cache):
    """grad = (dL/dh', dL/dc'), each (B, H). Return the seven gradients, each the shape of its input."""
    grad_h, grad_c = grad
    x, h, c, w_ih, w_hh, i, f, g, o, c_new = cache
    raise NotImplementedError("write backward: return (dL/dx, dL/dh, dL/dc, dL/dw_ih, dL/dw_hh, dL/db_ih, dL/db_hh)")
