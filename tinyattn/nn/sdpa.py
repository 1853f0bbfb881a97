"""Scaled dot-product attention (Vaswani et al. 2017, https://arxiv.org/abs/1706.03762): its
three stages fused into one graph node.

    scores  S = Q K^T * scale (+ bias)     (how well each query matches each key)
    weights W = softmax(S) over the keys   (masked places get exactly 0)
    output  O = W V                        (the weighted average of the values)

Backward, with G_O = dL/dO and G_W = dL/dW (the weights are an output too):
    dL/dV = W^T G_O,   dL/dW = G_O V^T + G_W,   dL/dS = W * (dL/dW - sum(dL/dW * W))  (softmax)
    dL/dQ = dL/dS K * scale,   dL/dK = dL/dS^T Q * scale,   dL/dbias = dL/dS (summed over broadcast)

Two optional extras, both as in PyTorch's F.scaled_dot_product_attention:
  * `bias`: a float array (or Tensor) added to the scores, PyTorch's float attn_mask (-inf hides
    a place like a False in the bool mask; a learned bias, e.g. a relative position, trains),
    kept inside the fused node rather than as a separate composed path: forward it is one
    addition, backward its gradient is dL/dS, which the node computes anyway;
  * `dropout_p`: dropout on the weights, W' = W * keep, keep = 0 or 1/(1-p). W' takes W's place
    in O = W' V and is the weights output; the chain rule through it is dL/dW = keep * dL/dW'.

`scaled_dot_product_attention_reference` writes the same with autograd ops, to read and to
test against. Masks (masks.py) say where attention MAY go (True = may attend) and broadcast
against the scores as PyTorch's boolean attn_mask does: (Tq, Tk) for every sequence alike,
(B, 1, Tk) for padding.
"""
import math

import numpy as np

from ..autograd.broadcast import broadcasts_to, unbroadcast
from ..autograd.errors import ShapeError, require_float
from ..autograd.function import Function
from ..autograd.tensor import Tensor, wrap
from ..ops.arrays import matmul
from ..ops.arrays import softmax, softmax_backward
from .masks import attention_mask, dropout_mask


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
    """(O, W) = (softmax(Q K^T * scale + bias, mask) V, softmax(...)); backward in the module docstring.

    bias (added to the scores) and keep (dropout's multiplier of the weights) may be None.
    """

    @staticmethod
    def forward(ctx, q, k, v, mask, scale, bias=None, keep=None):
        # The scale multiplies q (T x d) rather than the scores (T x T): the same product,
        # fewer multiplications whenever there are more keys than dimensions.
        scores = matmul(q * q.dtype.type(scale), k.swapaxes(-1, -2))
        if bias is not None:
            scores = scores + bias
        weights = softmax(scores, mask)
        dropped = weights if keep is None else weights * keep
        ctx.save_for_backward(q, k, v, weights, dropped, keep)
        ctx.scale = scale
        ctx.bias_shape = None if bias is None else bias.shape
        return matmul(dropped, v), dropped

    @staticmethod
    def backward(ctx, g_out, g_weights):
        q, k, v, weights, dropped, keep = ctx.saved_tensors
        dtype = weights.dtype.type
        d_weights = matmul(g_out, v.swapaxes(-1, -2)) + g_weights
        if keep is not None:
            d_weights = d_weights * keep
        d_v = matmul(dropped.swapaxes(-1, -2), g_out)
        d_scores = softmax_backward(weights, d_weights)
        scale = dtype(ctx.scale)
        d_q = matmul(d_scores, k) * scale
        d_k = matmul(d_scores.swapaxes(-1, -2), q) * scale
        d_bias = unbroadcast(d_scores, ctx.bias_shape) if ctx.needs_input_grad[5] else None
        return d_q, d_k, d_v, None, None, d_bias, None


def _check_bias(bias, scores_shape, dtype, op):
    """A float array or Tensor that broadcasts to the scores, or None; arrays take q's dtype."""
    if bias is None:
        return None
    if not isinstance(bias, Tensor):
        bias = np.asarray(bias)
    if bias.dtype.kind != "f":
        raise TypeError(f"{op}: bias must be a float array added to the scores, got {bias.dtype}; "
                        "for a bool mask (True = may attend) use mask=")
    if not broadcasts_to(bias.shape, scores_shape):
        raise ShapeError(f"{op}: bias {bias.shape} does not broadcast to the scores (batch, [heads,] queries, keys) "
                         f"= {scores_shape}")
    return bias if isinstance(bias, Tensor) else bias.astype(dtype, copy=False)


def scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, *,
                                 mask=None, bias=None):
    """(output, weights): softmax(q k^T * scale + bias) v, scale = 1/sqrt(d_k) by default; one graph node.

    q (B, [H,] Tq, d), k (B, [H,] Tk, d), v (B, [H,] Tk, dv) -> output (B, [H,] Tq, dv), weights
    (B, [H,] Tq, Tk). PyTorch's arguments mean what they mean there: attn_mask bool (True = may
    attend) or float (added to the scores; a Tensor that requires grad trains), is_causal (query i
    sees keys <= i), dropout_p (always applied: pass 0 outside training), scale. tinyattn's own
    mask= (bool, True = may attend) and bias= (float, added) may be given instead or as well.
    Unlike PyTorch's, it also returns the weights.
    """
    _check_qkv(q, k, v)
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    scores_shape = q.shape[:-1] + (k.shape[-2],)
    mask, bias = _merge_masks(attn_mask, is_causal, mask, bias, scores_shape)
    mask = attention_mask(mask, scores_shape, "scaled_dot_product_attention")
    bias = _check_bias(bias, scores_shape, q.dtype, "scaled_dot_product_attention")
    keep = dropout_mask(scores_shape, dropout_p, q.dtype) if dropout_p else None
    return ScaledDotProductAttention.apply(q, k, v, mask, scale, bias, keep)


def _merge_masks(attn_mask, is_causal, mask, bias, scores_shape):
    """PyTorch's attn_mask and is_causal folded into tinyattn's (mask, bias): a bool attn_mask
    joins mask (both True = may attend), a float one joins bias, is_causal adds a causal mask."""
    if is_causal:
        if attn_mask is not None:  # as PyTorch, which refuses the pair
            raise ValueError("scaled_dot_product_attention: pass attn_mask or is_causal=True, not both; "
                             "for both, give attn_mask=mask & nn.causal_mask(T)")
        Tq, Tk = scores_shape[-2:]
        attn_mask = np.tril(np.ones((Tq, Tk), bool))  # query i sees keys 0..i (top left, as PyTorch)
    if attn_mask is None:
        return mask, bias
    if not isinstance(attn_mask, Tensor):
        attn_mask = np.asarray(attn_mask)
    if attn_mask.dtype == np.bool_:
        attn_mask = attn_mask.data if isinstance(attn_mask, Tensor) else attn_mask
        return (attn_mask if mask is None else np.asarray(_raw(mask)) & attn_mask), bias
    return mask, (attn_mask if bias is None else bias + attn_mask)


def _raw(mask):
    return mask.data if isinstance(mask, Tensor) else mask


def scaled_dot_product_attention_reference(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, *,
                                           mask=None, bias=None):
    """The same three stages with autograd ops: scores, masked softmax, (dropout,) weighted sum."""
    _check_qkv(q, k, v)
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    mask, bias = _merge_masks(attn_mask, is_causal, mask, bias, q.shape[:-1] + (k.shape[-2],))
    scores = (q @ k.transpose(-2, -1)) * scale
    bias = _check_bias(bias, scores.shape, q.dtype, "scaled_dot_product_attention")
    if bias is not None:
        scores = scores + bias
    weights = scores.softmax(-1, mask=attention_mask(mask, scores.shape))
    if dropout_p:
        weights = weights * wrap(dropout_mask(scores.shape, dropout_p, q.dtype))
    return weights @ v, weights
