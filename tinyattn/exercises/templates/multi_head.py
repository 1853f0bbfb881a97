"""Multi-head attention's split and join (Vaswani et al. 2017, "Attention Is All You Need",
https://arxiv.org/abs/1706.03762, section 3.2.2), as PyTorch's nn.MultiheadAttention does them.

    q_h = columns h*d .. (h+1)*d of q     the same for k and v; d = E / H, for each head h
    head_h = attention(q_h, k_h, v_h)     the previous exercise, with nothing masked
    out = concat(head_1 .. head_H) w_o^T + b_o

q, k and v come in already projected (B, T, E). The heads run side by side as one array
(B, H, T, d): split_heads and join_heads below move between the two layouts.
Write backward: return (dL/dq, dL/dk, dL/dv, dL/dw_o, dL/db_o). Your backward of the previous
exercise sits beside this file once you have started it; bring it in with
    from attention import backward as attention_backward

    python -m tinyattn.exercises check multi_head
    python -m tinyattn.exercises hint multi_head       (a step at a time, if you are stuck)
"""
import numpy as np

from tinyattn.exercises.templates.attention import forward as attention


def split_heads(x, num_heads):
    """(B, T, E) -> (B, H, T, d): head h reads features h*d .. (h+1)*d."""
    B, T, E = x.shape
    return x.reshape(B, T, num_heads, E // num_heads).transpose(0, 2, 1, 3)


def join_heads(x):
    """(B, H, T, d) -> (B, T, H*d), split_heads undone."""
    B, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)


def forward(q, k, v, w_o, b_o, num_heads):
    """q, k, v (B, T, E), w_o (E, E), b_o (E,), num_heads H -> out (B, T, E), and what backward needs."""
    everywhere = np.ones((q.shape[1], k.shape[1]), bool)
    heads, attention_cache = attention(split_heads(q, num_heads), split_heads(k, num_heads),
                                       split_heads(v, num_heads), everywhere)
    joined = join_heads(heads)
    return joined @ w_o.T + b_o, (joined, w_o, num_heads, attention_cache)


def backward(grad, cache):
    """grad = dL/dout, shape (B, T, E). Return (dL/dq, dL/dk, dL/dv, dL/dw_o, dL/db_o)."""
    joined, w_o, num_heads, attention_cache = cache
    raise NotImplementedError("write backward: return (dL/dq, dL/dk, dL/dv, dL/dw_o, dL/db_o)")
