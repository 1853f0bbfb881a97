"""multi_head: hints, worked solution, classic mistakes."""
from ..templates.multi_head import join_heads, split_heads
from . import Mistake
from .attention import backward as attention_backward

HINTS = [
    "Last stage first: out = joined w_o^T + b_o is a Linear layer over B*T rows. Which products "
    "give dL/djoined and dL/dw_o, and which axes does b_o's gradient sum over?",
    "join_heads only moves numbers around: its backward moves the gradient back the same way. "
    "Which of split_heads and join_heads is that?",
    "Each head is one attention: your previous exercise's backward does all heads at once on the "
    "(B, H, T, d) arrays, with the attention cache that forward kept.",
    "attention's gradients come out per head (B, H, T, d); q, k and v were split into heads, so "
    "their gradients are joined back into (B, T, E).",
]


def backward(grad, cache):
    """out = joined w_o^T + b_o: d_joined = grad w_o, dw_o = sum over rows of grad^T joined,
    db_o = sum of grad over batch and time. join_heads is a reshape and a transpose: its backward
    is split_heads. Attention runs per head; its gradients are joined back to (B, T, E)."""
    joined, w_o, num_heads, attention_cache = cache
    E = w_o.shape[0]
    d_heads = split_heads(grad @ w_o, num_heads)
    d_q, d_k, d_v = attention_backward(d_heads, attention_cache)
    rows = grad.reshape(-1, E)
    return (join_heads(d_q), join_heads(d_k), join_heads(d_v), rows.T @ joined.reshape(-1, E), rows.sum(axis=0))


def mistakes(grad, cache, inputs):
    joined, w_o, num_heads, attention_cache = cache
    d_q = attention_backward(split_heads(grad @ w_o, num_heads), attention_cache)[0]
    B, H, T, d = d_q.shape
    scrambled = attention_backward((grad @ w_o).reshape(B, H, T, d), attention_cache)[0]
    return [
        Mistake("q", d_q.reshape(B, T, H * d), "yours holds the right numbers in the wrong places: the heads' "
                "gradient (B, H, T, d) was reshaped to (B, T, E) without moving the head axis back first. "
                "Undo split_heads with join_heads (a transpose, then the reshape)"),
        Mistake("q", join_heads(scrambled), "the gradient reaching the heads is scrambled: (B, T, E) was "
                "reshaped to (B, H, T, d) without the transpose. Split it with split_heads, as forward did"),
    ]
