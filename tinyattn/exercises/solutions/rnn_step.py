"""rnn_step: hints, worked solution, classic mistakes."""
import numpy as np

from . import Mistake

HINTS = [
    "Name the pre-activation a = x W_ih^T + b_ih + h W_hh^T + b_hh. First get dL/da from grad: "
    "through tanh, whose output forward kept as h'.",
    "a is a sum of two Linear layers: dL/da reaches each term unchanged. Each Linear backward is "
    "the matmul exercise (with the weight transposed: a = x W^T).",
    "Each bias was used by every row of the batch: sum dL/da over the batch axis.",
]


def backward(grad, cache):
    """da = grad * (1 - h'^2) (tanh' written with the output). a = x W_ih^T + h W_hh^T + biases:
    dx = da W_ih, dh = da W_hh, dW_ih = da^T x, dW_hh = da^T h, each bias = da summed over the batch."""
    x, h, w_ih, w_hh, h_new = cache
    d_pre = grad * (1 - h_new ** 2)
    d_bias = d_pre.sum(axis=0)
    return d_pre @ w_ih, d_pre @ w_hh, d_pre.T @ x, d_pre.T @ h, d_bias, d_bias


def mistakes(grad, cache, inputs):
    x, h, w_ih, w_hh, h_new = cache
    pre = np.arctanh(h_new)
    return [
        Mistake("x", grad @ w_ih, "yours skips tanh's derivative: multiply grad by 1 - h'^2 before the products"),
        Mistake("x", grad * (1 - pre ** 2) @ w_ih, "yours takes 1 - a^2 with a the pre-activation: tanh's "
                "derivative is 1 - tanh(a)^2, and tanh(a) is h', the output forward kept"),
    ]
