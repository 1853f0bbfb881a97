"""Multi-head attention as in "Attention Is All You Need" (Vaswani et al. 2017), PyTorch's module.

For H heads of size d = E / H, with W_q, W_k, W_v the rows of the packed in_proj_weight:

    Q = query W_q^T + b_q,   K = key W_k^T + b_k,   V = value W_v^T + b_v
    head_h = softmax(Q_h K_h^T / sqrt(d) + mask) V_h      Q_h = columns h*d .. (h+1)*d of Q
    out = concat(head_1, ..., head_H) W_o^T + b_o         W_o = out_proj.weight

Parameter names, shapes, initialisation and mask polarity are PyTorch's nn.MultiheadAttention,
so a state_dict crosses both ways. The attention itself is scaled_dot_product_attention.py's:
one fused node, or under `ta.fused(False)` the composed graph, whose scores and softmax a learner
can hold (last_tensors). nn.keep_attention_weights, at the end, switches the keeping of each
call's weights on for every MultiheadAttention inside a model.
"""
from typing import NamedTuple

import numpy as np

from ..autograd.dtypes import ShapeError
from ..autograd.tensor import Tensor
from . import init
from .layers import Linear, LinearFunction
from .masks import causal_mask
from .module import Module, Parameter
from .positions import SCHEMES, alibi_bias, rotary
from .scaled_dot_product_attention import attend
from .sizes import check_sizes


class AttentionTensors(NamedTuple):
    """The last call's scores and weights as graph Tensors, (B, H, Tq, Tk) each (see MultiheadAttention)."""
    scores: Tensor
    weights: Tensor


_POLARITY = "a bool mask is True where attention may NOT go (PyTorch's polarity for attn_mask and key_padding_mask)"


def _xavier_parameter(fan_out, fan_in):
    """A (fan_out, fan_in) float32 Parameter filled by nn.init.xavier_uniform_, PyTorch's init of in_proj_weight."""
    return init.xavier_uniform_(Parameter(np.empty((fan_out, fan_in), np.float32)))


class MultiheadAttention(Module):
    """PyTorch's nn.MultiheadAttention: forward(query (Tq, B, E), key (Tk, B, kdim),
    value (Tk, B, vdim), ...) -> (out (Tq, B, E), weights (B, [H,] Tq, Tk) or None).

    Time first by default, as PyTorch's; batch_first=True takes and returns (batch, time,
    features). The weights are batch first either way, as PyTorch's.

    keep_weights = True stores each call's (B, H, Tq, Tk) weights, a detached numpy array, in
    last_weights (also when need_weights=False, as the Transformer layers call it). Under
    `ta.fused(False)` it also keeps last_tensors = (scores, weights): the graph's own Tensors,
    (B, H, Tq, Tk) each, the scores Q_h K_h^T / sqrt(d) (+ a float mask) and their softmax (after
    dropout, when training with it). Call .retain_grad() on them before backward to read
    dL/dscores and dL/dweights; with the fused node (the default) last_tensors is None.

    positions = "alibi" or "rope" (tinyattn's own; PyTorch's module has no such option) gives
    each head where its queries and keys are (positions.py, no parameters): "rope" turns each
    head's queries and keys by their positions, "alibi" adds -m_h |i - j| to head h's scores.
    Query i and key j are at positions i and j (counted from 0 in each).

    cache = nn.KVCache() (tinyattn's own) decodes a position at a time (nn/kv_cache.py): the
    queries sit at positions cache.length, ... and read every key so far. With `key is query`
    (self-attention) the new keys and values join the cache; any other key is a memory whose keys
    and values are made at the first call and kept. Positions (rope, alibi, is_causal) are placed
    by the same lines with and without a cache; the model calls cache.advance(T) after each step.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, kdim=None, vdim=None, batch_first=False,
                 positions=None):
        super().__init__()
        if positions not in (None, *SCHEMES):
            raise ValueError(f"MultiheadAttention: positions must be None, 'alibi' or 'rope', got {positions!r}")
        self.positions = positions
        check_sizes("MultiheadAttention", embed_dim=embed_dim, num_heads=num_heads,
                    **{name: size for name, size in (("kdim", kdim), ("vdim", vdim)) if size is not None})
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} must be a positive multiple of "
                             f"num_heads {num_heads} (each head gets embed_dim // num_heads features)")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if self._qkv_same_embed_dim:  # [W_q; W_k; W_v] stacked, as PyTorch stores them
            self.in_proj_weight = _xavier_parameter(3 * embed_dim, embed_dim)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = _xavier_parameter(embed_dim, embed_dim)
            self.k_proj_weight = _xavier_parameter(embed_dim, self.kdim)
            self.v_proj_weight = _xavier_parameter(embed_dim, self.vdim)
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, np.float32)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias)
        if bias:
            self.out_proj.bias.data[:] = 0
        self.keep_weights, self.last_weights, self.last_tensors = False, None, None

    def projections(self):
        """(W_q, b_q), (W_k, b_k), (W_v, b_v): slices of the packed parameters (gradients flow back)."""
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            weights = [self.in_proj_weight[i * E:(i + 1) * E] for i in range(3)]
        else:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        biases = [None] * 3 if self.in_proj_bias is None else [self.in_proj_bias[i * E:(i + 1) * E] for i in range(3)]
        return list(zip(weights, biases))

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False, cache=None):
        self_attention = key is query  # (read before the transposes below make new tensors)
        if not self.batch_first:  # (time, batch, features) in, and out again at the end
            query, key, value = (t.transpose(0, 1) if t.ndim == 3 else t for t in (query, key, value))
        B, Tq, _ = self._check_inputs(query, key, value)
        start = 0 if cache is None else cache.length  # the queries' first position; keys start at 0
        (W_q, b_q), (W_k, b_k), (W_v, b_v) = self.projections()
        Q = self._split_heads(self._turn(LinearFunction.apply(query, W_q, b_q), start))

        def keys_values(first):  # the keys' first position: start for new keys, 0 for a memory
            K = self._turn(LinearFunction.apply(key, W_k, b_k), first)
            return self._split_heads(K), self._split_heads(LinearFunction.apply(value, W_v, b_v))

        if cache is None:
            K, V = keys_values(0)
        elif self_attention:
            K, V = cache.extend(self, *keys_values(start))
        else:
            K, V = cache.fixed(self, lambda: keys_values(0))
        allowed, bias = self._masks(key_padding_mask, attn_mask, is_causal, B, Tq, K.shape[2], start)
        heads, weights, scores = attend(
            Q, K, V, mask=allowed, bias=bias,
            dropout_p=self.dropout if self.training else 0.0, caller=("MultiheadAttention", _POLARITY))
        out = self.out_proj(heads.transpose(1, 2).reshape(B, Tq, self.embed_dim))  # join the heads
        if not self.batch_first:
            out = out.transpose(0, 1)
        if self.keep_weights:
            self.last_weights = weights.data.copy()
            self.last_tensors = None if scores is None else AttentionTensors(scores, weights)
        if not need_weights:
            return out, None
        return out, weights.mean(axis=1) if average_attn_weights else weights

    def _turn(self, x, start):
        """With rope, x (B, T, E) turned head by head by its positions start .. start + T - 1 (ALiBi is a
        float mask: _masks adds it); x itself otherwise."""
        if self.positions != "rope":
            return x
        return rotary(x, np.arange(start, start + x.shape[1]), head_dim=self.head_dim)

    def _split_heads(self, x):
        """(B, T, E) -> (B, H, T, d): head h reads features h*d .. (h+1)*d."""
        B, T, _ = x.shape
        return x.reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)

    def _check_inputs(self, query, key, value):
        expected = (("query", query, self.embed_dim), ("key", key, self.kdim), ("value", value, self.vdim))
        for name, t, size in expected:
            if t.ndim != 3 or t.shape[-1] != size:
                raise ShapeError(f"MultiheadAttention: {name} {t.shape}, expected (batch, time, {size}); "
                                 "an unbatched (time, features) input needs a batch axis: x[None]")
        if not query.shape[0] == key.shape[0] == value.shape[0] or key.shape[1] != value.shape[1]:
            raise ShapeError(f"MultiheadAttention: query {query.shape}, key {key.shape}, value {value.shape} need "
                             "one batch size and one value per key")
        return query.shape[0], query.shape[1], key.shape[1]

    def _masks(self, key_padding_mask, attn_mask, is_causal, B, Tq, Tk, start=0):
        """PyTorch's masks -> (allowed, bias) for the attention, both broadcasting to (B, H, Tq, Tk);
        the queries sit at positions start .. start + Tq - 1, the keys at 0 .. Tk - 1.

        A bool mask of PyTorch's is True where attention may NOT go, so it enters `allowed`
        (True = may attend, tinyattn's polarity) negated; a float mask is added to the scores.
        """
        H = self.num_heads
        attn_mask, key_padding_mask = _as_mask(attn_mask), _as_mask(key_padding_mask)
        if attn_mask is None and is_causal:
            if start + Tq != Tk:
                cached = f" after {start} cached positions" if start else ""
                raise ShapeError(f"MultiheadAttention: is_causal needs as many queries as keys, got {Tq}{cached} and "
                                 f"{Tk}; pass the attn_mask you mean")
            attn_mask = ~causal_mask(Tq, start)
        masks = []  # (mask in PyTorch's polarity, its shape in (B, H, Tq, Tk) terms)
        if attn_mask is not None:
            shape = tuple(attn_mask.shape)
            if shape == (Tq, Tk):
                masks.append(attn_mask)
            elif shape == (B * H, Tq, Tk):
                masks.append(attn_mask.reshape(B, H, Tq, Tk))
            else:
                raise ShapeError(f"MultiheadAttention: attn_mask {shape}, expected (Tq, Tk) = {(Tq, Tk)} or "
                                 f"(batch * num_heads, Tq, Tk) = {(B * H, Tq, Tk)}")
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (B, Tk):
                raise ShapeError(f"MultiheadAttention: key_padding_mask {tuple(key_padding_mask.shape)}, expected "
                                 f"(batch, keys) = {(B, Tk)}, True at the padding")
            masks.append(key_padding_mask.reshape(B, 1, 1, Tk))
        allowed, bias = None, None
        for mask in masks:
            if mask.dtype == np.bool_:
                may_attend = ~np.asarray(mask)
                allowed = may_attend if allowed is None else allowed & may_attend
            elif mask.dtype.kind == "f":
                bias = mask if bias is None else bias + mask
            else:
                raise TypeError(f"MultiheadAttention: masks must be bool (True = not allowed) or float (added to "
                                f"the scores), got {mask.dtype}")
        if self.positions == "alibi":  # (H, Tq, Tk), in a float mask's dtype if there is one
            alibi = alibi_bias(H, Tq, Tk, start)
            bias = alibi if bias is None else bias + alibi.astype(bias.dtype)
        return allowed, bias

    def extra_repr(self):
        sizes = "" if self._qkv_same_embed_dim else f", kdim={self.kdim}, vdim={self.vdim}"
        positions = "" if self.positions is None else f", positions={self.positions!r}"
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}{sizes}{positions}"


def _as_mask(mask):
    """A float Tensor stays one (a float mask may train, so its gradient must flow); a bool
    Tensor, a list or an array becomes an array."""
    if mask is None:
        return None
    if isinstance(mask, Tensor):
        return mask if mask.dtype.kind == "f" else mask.data
    return np.asarray(mask)


def keep_attention_weights(model, on=True):
    """Make every MultiheadAttention inside `model` keep its last (B, H, Tq, Tk) weights (or stop).

    Returns {dotted name: module}; after a forward, module.last_weights holds the picture
    (and under ta.fused(False), module.last_tensors the scores and weights as graph Tensors):
        attn = nn.keep_attention_weights(model); model(x)
        ta.viz.attention_heatmap(attn["layers.0.self_attn"].last_weights[0], ...)
    """
    found = {name: m for name, m in model.named_modules() if isinstance(m, MultiheadAttention)}
    if not found:
        raise ValueError(f"keep_attention_weights: no MultiheadAttention inside {type(model).__name__}")
    for module in found.values():
        module.keep_weights = on
        if not on:
            module.last_weights = module.last_tensors = None
    return found
