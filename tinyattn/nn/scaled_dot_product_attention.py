"""F.scaled_dot_product_attention, PyTorch's spelling of attention (sdpa.py's `attend`, which
the layers call): its attn_mask (bool, True = may attend, or float, added to the scores) and
is_causal are folded into tinyattn's mask and bias, then attend runs.
"""
import numpy as np

from ..autograd.tensor import Tensor, _raw
from .fused.switch import fused
from .sdpa import attend, check_qkv


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


def scaled_dot_product_attention_reference(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, *,
                                           mask=None, bias=None):
    """scaled_dot_product_attention as its composed graph whatever the switch says (to read and to test)."""
    with fused(False):
        return scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, mask=mask, bias=bias)
