"""Positions given to the attention itself rather than added to the words: ALiBi and RoPE.

A sinusoidal or learned positional encoding adds "where" to "what" once, at the input; a model
trained on 30 words then meets positions 31, 32, ... it has never seen. Both schemes here act
inside every self-attention instead, through the distance between a query and a key, which
"Train Short, Test Long" (Press et al. 2022, https://arxiv.org/abs/2108.12409) found to carry
over to longer inputs than the ones trained on:

  * ALiBi (Press et al. 2022): a fixed penalty on each score, growing linearly with distance,
    a different slope per head (`alibi_bias`);
  * RoPE, rotary positions (Su et al. 2021, "RoFormer", https://arxiv.org/abs/2104.09864):
    queries and keys turned by angles proportional to their positions, so that q . k depends on
    their positions only through their difference (`rotary`).

Neither has parameters. nn.MultiheadAttention(..., positions="alibi" | "rope") uses them;
PyTorch has neither in torch.nn.
"""
import math

import numpy as np

from ..autograd.dtypes import ShapeError
from ..autograd.rules_shape import stack
from ..autograd.tensor import wrap
from .sizes import check_sizes

SCHEMES = ("alibi", "rope")


def alibi_slopes(num_heads):
    """The paper's slope per head: m_h = 2^(-8 (h+1) / H) for h = 0 .. H-1 when H is a power of 2
    (8 heads: 1/2, 1/4, ..., 1/256). Otherwise, as the paper's code: the slopes for the power of
    2 just below H, then every other slope of the next power of 2 until there are H."""
    check_sizes("alibi_slopes", num_heads=num_heads)

    def geometric(n):
        return [2 ** (-8 * (h + 1) / n) for h in range(n)]

    below = 2 ** int(math.floor(math.log2(num_heads)))
    if below == num_heads:
        return np.array(geometric(num_heads))
    return np.array(geometric(below) + geometric(2 * below)[0::2][:num_heads - below])


def alibi_bias(num_heads, Tq, Tk, start=0):
    """(H, Tq, Tk) float64, added to head h's scores:  bias[h, i, j] = -m_h * |start + i - j|.

    Query i and key j sit at positions start + i and j (both counted from 0, as a causal mask's
    top left; start > 0 when the queries follow cached positions, nn/kv_cache.py). The paper's ALiBi is causal, -m_h * (i - j) for j <= i, the keys after i being masked;
    |i - j| is that same bias wherever a causal mask lets attention through, and extends it to an
    encoder, whose queries also read later keys: the penalty then grows with distance either
    way, so ALiBi itself says how far a key is but not on which side (the heads tell left from
    right only through what the words are, or a causal mask).
    """
    check_sizes("alibi_bias", num_heads=num_heads)
    distance = np.abs(np.arange(start, start + Tq)[:, None] - np.arange(Tk)[None, :])
    return -alibi_slopes(num_heads)[:, None, None] * distance


def rotary(x, positions=None, base=10000, head_dim=None):
    """RoPE: x (..., T, D), a query or a key, each feature pair turned by its position's angle.

    Features (2i, 2i+1) are a point in the plane, turned by the angle p * theta_i for the
    token at position p (positions[t], default t = 0 .. T-1):

        theta_i = base^(-2i / d)                        i = 0 .. d/2 - 1, slow for large i
        y_2i    = x_2i cos(p theta_i) - x_2i+1 sin(p theta_i)
        y_2i+1  = x_2i sin(p theta_i) + x_2i+1 cos(p theta_i)

    Turning q at position m by R(m theta) and k at position n by R(n theta) leaves their dot product
    q^T R(m theta)^T R(n theta) k = q^T R((n - m) theta) k: a function of n - m alone, so a score
    sees how far apart (and in which order) two tokens are, never where they are. A rotation
    keeps each pair's length. This is the interleaved pairing of the paper (eq. 34); some code
    pairs feature i with i + d/2 instead, the same idea with the features permuted.

    d = head_dim (default D): with x (B, T, E) holding H heads side by side (E = H d), each head's
    d features are turned as that head alone. Backward is the turn the other way,
    dL/dx = R(-p theta) dL/dy, which the composed ops here (slices, products, a stack) give.
    """
    *_, T, D = x.shape
    d = D if head_dim is None else head_dim
    if d % 2 or D % d:
        raise ShapeError(f"rotary: features {D} in heads of {d}: each head needs an even number of features "
                         "(they turn in pairs)")
    positions = np.arange(T) if positions is None else np.asarray(positions)
    if positions.shape != (T,):
        raise ShapeError(f"rotary: positions {positions.shape}, expected one per token: ({T},)")
    theta = base ** (-np.arange(0, d, 2) / d)                        # (d/2,)
    angles = positions[:, None] * np.tile(theta, D // d)[None, :]    # (T, D/2): every head alike
    cos, sin = wrap(np.cos(angles).astype(x.dtype)), wrap(np.sin(angles).astype(x.dtype))
    even, odd = x[..., 0::2], x[..., 1::2]
    turned = stack([even * cos - odd * sin, even * sin + odd * cos], axis=-1)  # (..., T, D/2, 2)
    return turned.reshape(*x.shape)
