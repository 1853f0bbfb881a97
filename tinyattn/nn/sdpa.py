"""Scaled dot-product attention (Vaswani et al. 2017, https://arxiv.org/abs/1706.03762): its
three stages fused into one graph node.

    scores  S = Q K^T * scale             (how well each query matches each key)
    weights W = softmax(S) over the keys   (masked places get exactly 0)
    output  O = W V                        (the weighted average of the values)

Backward, with G_O = dL/dO and G_W = dL/dW (the weights are an output too):
    dL/dV = W^T G_O,   dL/dW = G_O V^T + G_W,   dL/dS = W * (dL/dW - sum(dL/dW * W))  (softmax)
    dL/dQ = dL/dS K * scale,   dL/dK = dL/dS^T Q * scale

`scaled_dot_product_attention_reference` writes the same with autograd ops, to read and to
test against. Masks (masks.py) say where attention MAY go (True = may attend) and broadcast
against the scores as PyTorch's boolean attn_mask does: (Tq, Tk) for every sequence alike,
(B, 1, Tk) for padding.
"""
import math

import numpy as np

from ..autograd.errors import ShapeError, require_float
from ..autograd.function import Function
from ..autograd.tensor import Tensor
from ..ops.matmul import matmul
from ..ops.softmax import softmax, softmax_backward
from .masks import attention_mask


def attention_scale(d_k):
    """1/sqrt(d_k), the default scale: q.k of random unit-variance vectors has variance d_k."""
    return 1 / math.sqrt(d_k)


def _check_qkv(q, k, v):
    require_float("attention", q=q.data, k=k.data, v=v.data)
    if not (q.ndim == k.ndim == v.ndim) or q.ndim < 3:
        raise ShapeError(f"attention: q {q.shape}, k {k.shape}, v {v.shape} need one number of dims, at least 3 "
                         "(batch, [heads,] time, size): add a batch axis with q[None]")
    if q.shape[-1] != k.shape[-1]:
        raise ShapeError(f"attention: query size {q.shape[-1]} and key size {k.shape[-1]} differ (q {q.shape}, k {k.shape})")
    if k.shape[-2] != v.shape[-2]:
        raise ShapeError(f"attention: {k.shape[-2]} keys but {v.shape[-2]} values (k {k.shape}, v {v.shape})")
    if q.shape[:-2] != k.shape[:-2] or k.shape[:-2] != v.shape[:-2]:
        raise ShapeError(f"attention: batch dims differ: q {q.shape}, k {k.shape}, v {v.shape}")


class ScaledDotProductAttention(Function):
    """(O, W) = (softmax(Q K^T * scale, mask) V, softmax(...)); backward in the module docstring."""

    @staticmethod
    def forward(ctx, q, k, v, mask, scale):
        # The scale multiplies q (T x d) rather than the scores (T x T): the same product,
        # fewer multiplications whenever there are more keys than dimensions.
        scores = matmul(q * q.dtype.type(scale), k.swapaxes(-1, -2))
        weights = softmax(scores, mask)
        ctx.save_for_backward(q, k, v, weights)
        ctx.scale = scale
        return matmul(weights, v), weights

    @staticmethod
    def backward(ctx, g_out, g_weights):
        q, k, v, weights = ctx.saved_tensors
        dtype = weights.dtype.type
        d_weights = matmul(g_out, v.swapaxes(-1, -2)) + g_weights
        d_v = matmul(weights.swapaxes(-1, -2), g_out)
        d_scores = softmax_backward(weights, d_weights)
        scale = dtype(ctx.scale)
        d_q = matmul(d_scores, k) * scale
        d_k = matmul(d_scores.swapaxes(-1, -2), q) * scale
        return d_q, d_k, d_v, None, None


def scaled_dot_product_attention(q, k, v, mask=None, scale=None):
    """(output, weights): softmax(q k^T * scale) v, scale = 1/sqrt(d_k) by default; one graph node."""
    _check_qkv(q, k, v)
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    mask = attention_mask(mask, q.shape[:-1] + (k.shape[-2],), "scaled_dot_product_attention")
    return ScaledDotProductAttention.apply(q, k, v, mask, scale)


def scaled_dot_product_attention_reference(q, k, v, mask=None, scale=None):
    """The same three stages with autograd ops: scores, masked softmax, weighted sum."""
    _check_qkv(q, k, v)
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    scores = (q @ k.transpose(-2, -1)) * scale
    weights = scores.softmax(-1, mask=attention_mask(mask, scores.shape))
    return weights @ v, weights
