"""Attention layers: score, normalise, take the weighted sum of the values.

    weights = softmax(score(query, keys))      context = weights @ values

The five scores (API.md), for a query q and a key k:
    dot         q . k                              (sizes must match)
    scaled_dot  q . k / sqrt(d)                    (keeps the softmax from saturating as d grows)
    cosine      s * q . k / sqrt((|q|^2 + eps)(|k|^2 + eps)),  s learned (cosine alone is in [-1, 1])
    general     q^T W k                            (Luong et al. 2015)
    additive    v^T tanh(W q + U k)                (Bahdanau et al. 2015; alias "concat")

A decoder that attends over the same keys at every step can compute the part of the score that
depends on the keys alone once per batch: `keys = attention.precompute_keys(keys)`, then pass
that object wherever the keys go (additive: U k; general: W k; the others: the keys).
"""
from typing import NamedTuple

import numpy as np

from ..autograd.dtypes import ShapeError, require_float
from ..autograd.tensor import Tensor, wrap
from ..ops import blocks
from . import additive_attention  # noqa: F401  (registers the block additive_attention's reference)
from .layers import Embedding, Linear
from .module import Module, Parameter
from .masks import attention_mask
from .scaled_dot_product_attention import attention_scale, scaled_dot_product_attention
from .sizes import check_sizes

SCORES = ("dot", "scaled_dot", "cosine", "general", "additive")


MASK_HINTS = {
    "attn_mask": "use mask=, True = may attend (PyTorch's attn_mask means the opposite: True = not allowed)",
    "key_padding_mask": "use mask=nn.padding_mask(lengths, T), True = a real position that may be attended",
}


class PrecomputedKeys(NamedTuple):
    """The keys (B, Tk, Dk) and what the score computes from them alone (U k, W k, or the keys)."""
    keys: Tensor
    projected: Tensor


class Attention(Module):
    """forward(query (B, Tq, Dq), keys (B, Tk, Dk), values (B, Tk, Dv), mask=None) -> (context, weights).

    `keys` may also be precompute_keys(keys). The dot, scaled_dot and additive scores run as one
    block each (ops/blocks.py: `attention`, `additive_attention`): one fused node, or under
    `ta.fused(False)` the composed graphs those nodes equal (scaled_dot_product_attention.py,
    additive_attention.py), whose weights are the Softmax's own output.
    """

    keyword_hints = MASK_HINTS

    def __init__(self, query_size, key_size, score="scaled_dot", hidden_size=None, cosine_scale=5.0):
        check_sizes("Attention", query_size=query_size, key_size=key_size,
                    **({} if hidden_size is None else {"hidden_size": hidden_size}))
        super().__init__()
        score = "additive" if score == "concat" else score
        if score not in SCORES:
            raise ValueError(f"Attention: score must be one of {', '.join(SCORES)} (or 'concat'), got {score!r}")
        if score in ("dot", "scaled_dot", "cosine") and query_size != key_size:
            raise ValueError(f"Attention: the {score} score needs query_size == key_size, got {query_size} and {key_size}")
        self.query_size, self.key_size, self.score = query_size, key_size, score
        if score == "cosine":
            self.scale = Parameter(np.array([cosine_scale], np.float32))
        elif score == "general":
            self.W = Linear(key_size, query_size, bias=False)  # W k, then q . (W k)
        elif score == "additive":
            hidden_size = hidden_size or query_size
            self.hidden_size = hidden_size
            self.W = Linear(query_size, hidden_size, bias=False)
            self.U = Linear(key_size, hidden_size, bias=False)
            self.v = Linear(hidden_size, 1, bias=False)

    def precompute_keys(self, keys):
        """What the score needs from the keys alone, computed once: pass the result as `keys`."""
        if isinstance(keys, PrecomputedKeys):
            return keys
        if self.score == "additive":
            return PrecomputedKeys(keys, self.U(keys))
        if self.score == "general":
            return PrecomputedKeys(keys, self.W(keys))
        return PrecomputedKeys(keys, keys)

    def scores(self, query, keys, projected):
        """(B, Tq, Tk): how well each query matches each key, before the softmax (cosine, general).

        (dot, scaled_dot and additive never come here: forward runs each through its own function.)
        """
        if self.score == "cosine":
            eps = 1e-8
            q_norm = ((query * query).sum(-1, keepdims=True) + eps).sqrt()  # (B, Tq, 1)
            k_norm = ((keys * keys).sum(-1, keepdims=True) + eps).sqrt()    # (B, Tk, 1)
            return (query / q_norm) @ (keys / k_norm).transpose(-2, -1) * self.scale
        return query @ projected.transpose(-2, -1)  # general: q . (W k)

    def forward(self, query, keys, values, mask=None):
        precomputed = keys if isinstance(keys, PrecomputedKeys) else None
        keys = precomputed.keys if precomputed else keys
        require_float("Attention", query=query.data, keys=keys.data, values=values.data)
        if query.ndim != 3 or keys.ndim != 3 or values.ndim != 3:
            raise ShapeError(f"Attention: query {query.shape}, keys {keys.shape}, values {values.shape} must be 3-D (B, T, D)")
        if (query.shape[-1] != self.query_size or keys.shape[-1] != self.key_size or keys.shape[1] != values.shape[1]
                or not query.shape[0] == keys.shape[0] == values.shape[0]):
            raise ShapeError(f"Attention: query {query.shape}, keys {keys.shape}, values {values.shape} do not fit "
                             f"query_size={self.query_size}, key_size={self.key_size} with one value per key")
        if self.score in ("dot", "scaled_dot"):
            scale = attention_scale(self.key_size) if self.score == "scaled_dot" else 1.0
            return scaled_dot_product_attention(query, keys, values, mask=mask, scale=scale)
        projected = (precomputed or self.precompute_keys(keys)).projected
        if self.score == "additive":
            # every (query, key) pair through one hidden layer: tanh(W q + U k), scored by v
            mask = attention_mask(mask, (query.shape[0], query.shape[1], keys.shape[1]), "Attention")
            return blocks.additive_attention(query, self.W.weight, projected, self.v.weight, values, mask)
        scores = self.scores(query, keys, projected)
        weights = scores.softmax(-1, mask=attention_mask(mask, scores.shape, "Attention"))
        return weights @ values, weights

    def extra_repr(self):
        hidden = f", hidden_size={self.hidden_size}" if self.score == "additive" else ""
        return f"{self.query_size}, {self.key_size}, score={self.score!r}{hidden}"


class SelfAttention(Module):
    """Every input derives its query, key and value through shared weights (plus a bias if bias=True):
    Q = X W_q^T + b_q, K = X W_k^T + b_k, V = X W_v^T + b_v; out = softmax(Q K^T / sqrt(d_k)) V."""

    keyword_hints = MASK_HINTS

    def __init__(self, embed_dim, key_dim=None, value_dim=None, bias=True, scale=True):
        key_dim = embed_dim if key_dim is None else key_dim
        value_dim = embed_dim if value_dim is None else value_dim
        check_sizes("SelfAttention", embed_dim=embed_dim, key_dim=key_dim, value_dim=value_dim)
        super().__init__()
        self.embed_dim, self.key_dim, self.value_dim, self.use_scale = embed_dim, key_dim, value_dim, scale
        self.W_q = Linear(embed_dim, key_dim, bias)
        self.W_k = Linear(embed_dim, key_dim, bias)
        self.W_v = Linear(embed_dim, value_dim, bias)

    def forward(self, x, mask=None):
        """x (B, T, E) -> (out (B, T, value_dim), weights (B, T, T))."""
        scale = attention_scale(self.key_dim) if self.use_scale else 1.0
        return scaled_dot_product_attention(self.W_q(x), self.W_k(x), self.W_v(x), mask=mask, scale=scale)

    def extra_repr(self):
        return f"{self.embed_dim}, key_dim={self.key_dim}, value_dim={self.value_dim}, scale={self.use_scale}"


def sinusoidal_table(max_len, embed_dim):
    """PE[p, 2i] = sin(p / 10000^(2i/E)), PE[p, 2i+1] = cos(p / 10000^(2i/E)), float64 (max_len, E)."""
    positions = np.arange(max_len)[:, None]
    rates = 1.0 / 10000 ** (np.arange(0, embed_dim, 2) / embed_dim)  # one per pair (2i, 2i+1)
    table = np.zeros((max_len, embed_dim))
    table[:, 0::2] = np.sin(positions * rates)
    table[:, 1::2] = np.cos(positions * rates[: embed_dim // 2])
    return table


class PositionalEncoding(Module):
    """Adds where each token is to what it is: x (B, T, E) + PE[:T] (sinusoidal, or learned)."""

    def __init__(self, embed_dim, max_len=512, learned=False):
        check_sizes("PositionalEncoding", embed_dim=embed_dim, max_len=max_len)
        super().__init__()
        self.embed_dim, self.max_len, self.learned = embed_dim, max_len, learned
        if learned:
            self.embedding = Embedding(max_len, embed_dim)
        else:
            self.table = sinusoidal_table(max_len, embed_dim)  # fixed: not a parameter, not saved

    def forward(self, x, start=0):
        """x (B, T, E) at positions start .. start + T - 1 (start > 0 after cached positions, nn/kv_cache.py)."""
        B, T, E = x.shape
        if E != self.embed_dim:
            raise ShapeError(f"PositionalEncoding: input {x.shape}, expected (batch, T, {self.embed_dim})")
        if start + T > self.max_len:
            raise ShapeError(f"PositionalEncoding: position {start + T - 1} is past the table's {self.max_len} "
                             f"positions (input {x.shape} from position {start}: start + T must be <= {self.max_len}); "
                             "build it with a larger max_len")
        if self.learned:
            return x + self.embedding(np.arange(start, start + T))
        return x + wrap(self.table[start:start + T].astype(x.dtype))

    def extra_repr(self):
        return f"{self.embed_dim}, max_len={self.max_len}, learned={self.learned}"


class AttentionPooling(Module):
    """One vector from a sequence: weights = softmax(v^T tanh(W x_t + b)), pooled = sum_t weights_t x_t."""

    def __init__(self, input_size, hidden_size):
        check_sizes("AttentionPooling", input_size=input_size, hidden_size=hidden_size)
        super().__init__()
        self.project = Linear(input_size, hidden_size)
        self.v = Linear(hidden_size, 1, bias=False)

    def forward(self, x, mask=None):
        """x (B, T, I), mask (B, T) or (B, 1, T) (nn.padding_mask) True = real token
        -> (pooled (B, I), weights (B, T))."""
        scores = self.v(self.project(x).tanh()).reshape(x.shape[:2])
        if mask is not None and np.shape(mask) == (x.shape[0], 1, x.shape[1]):
            mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask)[:, 0]  # one query per sequence
        mask = attention_mask(mask, scores.shape, "AttentionPooling")
        weights = scores.softmax(-1, mask=mask)
        pooled = (weights.unsqueeze(1) @ x).reshape(x.shape[0], x.shape[2])
        return pooled, weights
