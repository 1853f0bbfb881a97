"""Scaled dot-product attention (Vaswani et al. 2017, https://arxiv.org/abs/1706.03762).

    scores  S = Q K^T * scale (+ bias)     (how well each query matches each key)
    weights W = softmax(S) over the keys   (masked places get exactly 0)
    output  O = W V                        (the weighted average of the values)

One path, top to bottom: F.scaled_dot_product_attention (PyTorch's spelling) folds its attn_mask
and is_causal into tinyattn's mask and bias and calls `attend`, which the layers call too;
attend checks the arguments and runs the block `attention` (ops/blocks.py). That block's
reference is attention_composed, the three stages as autograd ops; its fused form is one graph
node that equals it (nn/fused/dot_product_attention_node.py, whose docstring derives the backward).

Two optional extras, both as in PyTorch's F.scaled_dot_product_attention:
  * `bias`: a float array (or Tensor) added to the scores, PyTorch's float attn_mask (-inf hides
    a place like a False in the bool mask; a learned bias, e.g. a relative position, trains);
  * `dropout_p`: dropout on the weights, W' = W * keep, keep = 0 or 1/(1-p); W' takes W's place
    in O = W' V and is the weights returned.

Masks (masks.py) say where attention MAY go (True = may attend) and broadcast against the
scores as PyTorch's boolean attn_mask does: (Tq, Tk) for every sequence alike, (B, 1, Tk) for padding.
"""
import math
from typing import NamedTuple, Optional

import numpy as np

from ..autograd.dtypes import broadcasts_to
from ..autograd.dtypes import ShapeError, require_float
from ..autograd.tensor import Tensor, _raw, wrap
from ..ops import blocks
from .masks import attention_mask, dropout_mask


def scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, *,
                                 mask=None, bias=None):
    """(output, weights): softmax(q k^T * scale + bias) v, scale = 1/sqrt(d_k) by default.

    q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv) -> output (..., Tq, dv), weights (..., Tq, Tk),
    with any number of batch dims (none: q (Tq, d)), broadcast as PyTorch's. PyTorch's arguments mean what they mean there: attn_mask bool (True = may
    attend) or float (added to the scores; a Tensor that requires grad trains), is_causal (query i
    sees keys <= i), dropout_p (always applied: pass 0 outside training), scale. tinyattn's own
    mask= (bool, True = may attend) and bias= (float, added) may be given instead or as well.
    Unlike PyTorch's, it also returns the weights. One graph node, or under `ta.fused(False)`
    the composed graph, whose weights are the Softmax's own output (after dropout, if any).
    """
    Tq, Tk = check_qkv(q, k, v)[-2:]  # (the causal mask needs valid shapes)
    mask, bias = _merge_masks(attn_mask, is_causal, mask, bias, Tq, Tk)
    output, weights, _ = attend(q, k, v, mask=mask, bias=bias, dropout_p=dropout_p, scale=scale)
    return output, weights


def _merge_masks(attn_mask, is_causal, mask, bias, Tq, Tk):
    """PyTorch's attn_mask and is_causal folded into tinyattn's (mask, bias): a bool attn_mask
    joins mask (both True = may attend), a float one joins bias, is_causal adds a causal mask."""
    if is_causal:
        if attn_mask is not None:  # as PyTorch, which refuses the pair
            raise ValueError("scaled_dot_product_attention: pass attn_mask or is_causal=True, not both; "
                             "for both, give attn_mask=mask & nn.causal_mask(T)")
        attn_mask = np.tril(np.ones((Tq, Tk), bool))  # query i sees keys 0..i (top left, as PyTorch)
    if attn_mask is None:
        return mask, bias
    if not isinstance(attn_mask, Tensor):
        attn_mask = np.asarray(attn_mask)
    if attn_mask.dtype == np.bool_:
        attn_mask = _raw(attn_mask)
        return (attn_mask if mask is None else np.asarray(_raw(mask)) & attn_mask), bias
    return mask, (attn_mask if bias is None else bias + attn_mask)


class Attended(NamedTuple):
    """What attention made: output, weights (after dropout, if any) and the scores before the
    softmax (None from the fused node, inside which they never become a Tensor)."""
    output: Tensor
    weights: Tensor
    scores: Optional[Tensor]


def attend(q, k, v, *, mask=None, bias=None, dropout_p=0.0, scale=None,
           caller=("scaled_dot_product_attention", "the mask is True where a query may attend")):
    """Attention with tinyattn's masks (mask bool, True = may attend; bias float, added) ->
    Attended(output, weights, scores), from the block `attention`: the fused node, or the composed
    graph under `ta.fused(False)`. caller: (the name errors and the empty-row warning give, the
    polarity of the masks that caller takes)."""
    scores_shape = check_qkv(q, k, v)
    scale = attention_scale(q.shape[-1]) if scale is None else float(scale)
    mask = attention_mask(mask, scores_shape, *caller)
    bias = _check_bias(bias, scores_shape, q.dtype, caller[0])
    keep = dropout_mask(scores_shape, dropout_p, q.dtype) if dropout_p else None
    return blocks.attention(q, k, v, mask, scale, bias, keep)


def attention_composed(q, k, v, mask, scale, bias=None, keep=None):
    """The three stages as autograd ops (block `attention`'s reference) -> Attended.

    mask: bool broadcasting to the scores or None; bias: float added to the scores or None;
    keep: dropout's multiplier of the weights (0 or 1/(1-p)) or None.
    """
    scores = (q @ k.transpose(-2, -1)) * scale
    if bias is not None:
        scores = scores + bias
    weights = scores.softmax(-1, mask=mask)
    if keep is not None:
        weights = weights * wrap(keep)
    return Attended(weights @ v, weights, scores)


blocks.register_reference("attention", attention_composed)


def attention_scale(d_k):
    """1/sqrt(d_k), the default scale: q.k of random unit-variance vectors has variance d_k."""
    return 1 / math.sqrt(d_k)


def check_qkv(q, k, v):
    """The scores' shape, batch dims broadcast as PyTorch's (q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv))."""
    require_float("attention", q=q.data, k=k.data, v=v.data)
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise ShapeError(f"attention: q {q.shape}, k {k.shape}, v {v.shape} need at least 2 dims each "
                         "([batch, heads,] time, size)")
    if q.shape[-1] != k.shape[-1]:
        raise ShapeError(f"attention: query size {q.shape[-1]} and key size {k.shape[-1]} differ (q {q.shape}, k {k.shape})")
    if k.shape[-2] != v.shape[-2]:
        raise ShapeError(f"attention: {k.shape[-2]} keys but {v.shape[-2]} values (k {k.shape}, v {v.shape})")
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ShapeError(f"attention: the batch dims of q {q.shape}, k {k.shape}, v {v.shape} do not broadcast "
                         "(each must be equal or 1, as PyTorch)") from None
    return batch + (q.shape[-2], k.shape[-2])


def _check_bias(bias, scores_shape, dtype, op):
    """A float array or Tensor that broadcasts to the scores, or None. A constant (an array, or a
    Tensor with no gradient, like Transformer.generate_square_subsequent_mask's) takes the scores'
    dtype; a Tensor that trains must already have it (casting it would cut its gradient off)."""
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
    if isinstance(bias, Tensor) and bias.dtype != dtype:
        if bias.requires_grad:
            raise TypeError(f"{op}: the float mask is a {bias.dtype} Tensor that requires grad, the scores are "
                            f"{np.dtype(dtype)}; convert the mask (or the model) so the dtypes agree")
        bias = bias.data
    return bias if isinstance(bias, Tensor) else bias.astype(dtype, copy=False)


def scaled_dot_product_attention_reference(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, *,
                                           mask=None, bias=None):
    """scaled_dot_product_attention as its composed graph whatever the table in force (to read and to test)."""
    with blocks.fused(False):
        return scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, mask=mask, bias=bias)
