"""Exercise: the backward of scaled dot-product attention (Vaswani et al. 2017, "Attention Is All You Need").

    S = Q K^T / sqrt(d)     scores: how well each query matches each key (d = size of q and k)
    W = softmax(S)          weights over the keys, one row per query
    O = W V                 each output is a weighted average of the values

Shapes: q (B, Tq, d), k (B, Tk, d), v (B, Tk, dv) -> out (B, Tq, dv).
Copy this file, write backward, and check it:
    python -m tinyattn.exercises check sdpa my_sdpa.py
Afterwards, compare with class ScaledDotProductAttention in tinyattn/nn/fused/sdpa.py.
"""
import numpy as np

import tinyattn as ta


class Attention(ta.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        scale = 1 / np.sqrt(q.shape[-1])
        scores = q @ k.swapaxes(-1, -2) * scale
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = e / e.sum(axis=-1, keepdims=True)
        ctx.save_for_backward(q, k, v, weights)
        ctx.scale = scale
        return weights @ v

    @staticmethod
    def backward(ctx, grad):
        q, k, v, weights = ctx.saved_tensors
        # grad is dL/dO (B, Tq, dv). Return (dL/dq, dL/dk, dL/dv), each the shape of its input.
        # Step 1. O = W V is a matrix product: dL/dW = grad V^T and dL/dV = W^T grad.
        #         (swapaxes(-1, -2) transposes the last two axes of a batch of matrices.)
        # Step 2. W = softmax(S) row by row: dL/dS = W * (dL/dW - sum(dL/dW * W) over the keys),
        #         as in the softmax exercise.
        # Step 3. S = Q K^T * scale: dL/dQ = dL/dS K * scale and dL/dK = dL/dS^T Q * scale.
        #         Check each product's shape against the input it belongs to.
        raise NotImplementedError("write the backward of attention (the steps are in the comments above)")
