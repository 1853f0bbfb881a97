"""Exercise: the backward of softmax.

    y = softmax(x) along the last axis:   y_i = exp(x_i) / sum_j exp(x_j)

Copy this file, replace the `raise NotImplementedError` in backward with your code, and check it:
    python -m tinyattn.exercises check softmax my_softmax.py
Afterwards, compare with tinyattn's own: class Softmax in tinyattn/autograd/ops_nn.py.
"""
import numpy as np

import tinyattn as ta


class Softmax(ta.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))  # shifting by the max changes nothing but overflow
        y = e / e.sum(axis=-1, keepdims=True)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        # grad is dL/dy (the shape of y). Return dL/dx (the shape of x).
        # Step 1. For one row, differentiate the quotient: dy_i/dx_j = y_i * (delta_ij - y_j),
        #         where delta_ij is 1 if i == j, else 0.
        # Step 2. Chain rule: dL/dx_j = sum_i grad_i * dy_i/dx_j = y_j * grad_j - y_j * sum_i grad_i y_i.
        # Step 3. For every row at once: sum over the last axis, with keepdims=True so the row sums
        #         broadcast against y.
        raise NotImplementedError("write the backward of softmax (the steps are in the comments above)")
