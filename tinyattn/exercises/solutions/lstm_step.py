"""lstm_step: hints, worked solution, classic mistakes."""
import numpy as np

from . import Mistake

HINTS = [
    "c' leaves the step twice: as an output (its gradient is grad_c) and inside h' = o tanh(c'). "
    "The total dL/dc' adds both paths.",
    "From h' = o tanh(c'): dL/do = grad_h tanh(c'), and the path into c' is grad_h o (1 - tanh(c')^2).",
    "From c' = f c + i g, with the total dL/dc': dL/df is times c (the old cell), dL/di times g, "
    "dL/dg times i, and dL/dc = dL/dc' f.",
    "Through the gates' nonlinearities (sigmoid' = s(1-s), tanh' = 1 - g^2), stack [i | f | g | o]: "
    "the same gradient goes to both Linear layers, as in the RNN step.",
]


def backward(grad, cache):
    """dc' = grad_c + grad_h o (1 - tanh(c')^2) (c' is an output and feeds h'). do = grad_h tanh(c');
    di = dc' g, df = dc' c, dg = dc' i, dc = dc' f. Through the gate nonlinearities, stacked
    [i | f | g | o], then the two Linear backwards, biases summed over the batch."""
    grad_h, grad_c = grad
    x, h, c, w_ih, w_hh, i, f, g, o, c_new = cache
    d_c_new = grad_c + grad_h * o * (1 - np.tanh(c_new) ** 2)
    d_gates = _gate_gradients(grad_h, d_c_new, cache)
    d_c = d_c_new * f
    d_bias = d_gates.sum(axis=0)
    return d_gates @ w_ih, d_gates @ w_hh, d_c, d_gates.T @ x, d_gates.T @ h, d_bias, d_bias


def _gate_gradients(grad_h, d_c_new, cache, old_cell=None):
    """dL/dgates [i | f | g | o] given the total gradient reaching c' (old_cell: what stands for c,
    so that mistakes() can show the forget gate fed the new cell instead)."""
    x, h, c, w_ih, w_hh, i, f, g, o, c_new = cache
    c = c if old_cell is None else old_cell
    return np.concatenate([d_c_new * g * i * (1 - i), d_c_new * c * f * (1 - f), d_c_new * i * (1 - g ** 2),
                           grad_h * np.tanh(c_new) * o * (1 - o)], axis=1)


def mistakes(grad, cache, inputs):
    grad_h, grad_c = grad
    x, h, c, w_ih, w_hh, i, f, g, o, c_new = cache
    through_h = grad_h * o * (1 - np.tanh(c_new) ** 2)
    return [
        Mistake("x", _gate_gradients(grad_h, through_h, cache) @ w_ih, "yours misses grad_c: c' is an output "
                "of the step too (the next step reads it), so dL/dc' starts from grad_c"),
        Mistake("x", _gate_gradients(grad_h, grad_c, cache) @ w_ih, "yours misses the path from c' through "
                "h' = o * tanh(c'): dL/dc' adds grad_h * o * (1 - tanh(c')^2)"),
        Mistake("x", _gate_gradients(grad_h, grad_c + grad_h * o * (1 - c_new ** 2), cache) @ w_ih,
                "yours takes 1 - c'^2 for tanh's derivative: it is 1 - tanh(c')^2"),
        Mistake("x", _gate_gradients(grad_h, grad_c + through_h, cache, old_cell=c_new) @ w_ih,
                "the forget gate's block uses the new cell: c' = f * c + i * g, so dL/df is dL/dc' times "
                "the old cell c"),
    ]
