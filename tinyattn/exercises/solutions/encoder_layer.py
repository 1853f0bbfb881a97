"""encoder_layer: hints, worked solution, classic mistakes."""
import numpy as np

from . import Mistake
from .layer_norm import backward as layer_norm_backward
from .multi_head import backward as multi_head_backward

HINTS = [
    "Go through forward's lines bottom to top, one backward per line. The last line is "
    "layer_norm2(x1 + feed-forward): your layer_norm backward with norm2's cache gives the gradient "
    "of that sum, and the weights of norm2.",
    "A sum sends its gradient to both terms unchanged: x1 gets it directly (the skip connection) "
    "AND through the feed-forward. Keep both; they add up.",
    "The feed-forward is Linear, ReLU, Linear. ReLU passes the gradient where hidden > 0 and blocks "
    "it elsewhere. Each Linear is matmul and broadcast: flatten (B, T) into rows for the weights.",
    "The first block is the same shape: layer_norm1's backward, then the skip (to x directly) and "
    "multi_head's backward. q, k, v were split from one projection of x: join their gradients with "
    "np.concatenate on the last axis, then one Linear backward to x and the in_proj weights.",
]


def backward(grad, cache):
    """Bottom to top. Block 2: norm2's backward, then the sum: x1 gets the gradient directly (skip)
    and through relu(x1 W_1^T + b_1) W_2^T + b_2. Block 1: norm1's backward, then x gets it
    directly (skip) and through the heads and the in-projection. Every Linear sums over the B*T rows."""
    d_x1, _, _, (d_w1, d_b1, d_w2, d_b2, d_norm2_weight, d_norm2_bias) = _feed_forward_block(grad, cache)
    d_x, _, (d_in_w, d_in_b, d_out_w, d_out_b, d_norm1_weight, d_norm1_bias) = _attention_block(d_x1, cache)
    return (d_x, d_in_w, d_in_b, d_out_w, d_out_b, d_w1, d_b1, d_w2, d_b2,
            d_norm1_weight, d_norm1_bias, d_norm2_weight, d_norm2_bias)


def _feed_forward_block(grad, cache):
    """x2 = norm2(x1 + ff(x1)): (dL/dx1, dL/d(x1 + ff), dL/dhidden, the block's weight gradients)."""
    *_, x1, linear1_weight, hidden, active, linear2_weight, norm2_cache = cache
    d_sum2, d_norm2_weight, d_norm2_bias = layer_norm_backward(grad, norm2_cache)
    d_hidden = (d_sum2 @ linear2_weight) * (hidden > 0)
    rows2, rows1 = d_sum2.reshape(-1, d_sum2.shape[-1]), d_hidden.reshape(-1, d_hidden.shape[-1])
    return d_sum2 + d_hidden @ linear1_weight, d_sum2, d_hidden, (
        rows1.T @ x1.reshape(-1, x1.shape[-1]), rows1.sum(axis=0),
        rows2.T @ active.reshape(-1, active.shape[-1]), rows2.sum(axis=0), d_norm2_weight, d_norm2_bias)


def _attention_block(d_x1, cache):
    """x1 = norm1(x + mha(x)): (dL/dx, dL/d(x + mha), the block's weight gradients)."""
    x, in_proj_weight, attention_cache, norm1_cache, *_ = cache
    d_sum1, d_norm1_weight, d_norm1_bias = layer_norm_backward(d_x1, norm1_cache)
    d_q, d_k, d_v, d_out_w, d_out_b = multi_head_backward(d_sum1, attention_cache)
    d_qkv = np.concatenate([d_q, d_k, d_v], axis=-1)
    rows = d_qkv.reshape(-1, d_qkv.shape[-1])
    d_x = d_sum1 + d_qkv @ in_proj_weight
    return d_x, d_sum1, (rows.T @ x.reshape(-1, x.shape[-1]), rows.sum(axis=0), d_out_w, d_out_b,
                         d_norm1_weight, d_norm1_bias)


def mistakes(grad, cache, inputs):
    *_, linear1_weight, _, _, linear2_weight, _ = cache
    d_x1, d_sum2, d_hidden, _ = _feed_forward_block(grad, cache)
    d_x, d_sum1, _ = _attention_block(d_x1, cache)
    return [
        Mistake("x", d_x - d_sum1, "yours misses the skip connection of the attention block: x1 = "
                "norm1(x + attention), so x also gets norm1's gradient directly"),
        Mistake("x", _attention_block(d_x1 - d_sum2, cache)[0], "yours misses the skip connection of the "
                "feed-forward block: x2 = norm2(x1 + ff(x1)), so x1 also gets norm2's gradient directly"),
        Mistake("x", _attention_block(d_sum2 + (d_sum2 @ linear2_weight) @ linear1_weight, cache)[0],
                "yours lets the gradient through ReLU everywhere: it passes only where hidden > 0"),
    ]
