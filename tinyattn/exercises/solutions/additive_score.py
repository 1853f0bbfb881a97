"""additive_score: hints, worked solution, classic mistakes."""
from . import Mistake

HINTS = [
    "Last stage first: scores = hidden @ v, a sum over the H hidden units. What is "
    "dL/dhidden[b, i, j, :]? v is used at every (b, i, j): what does its gradient sum over?",
    "Through tanh: d tanh(a)/da = 1 - tanh(a)^2, and forward kept tanh(a) as hidden.",
    "The query part (B, Tq, H) was broadcast over the keys (axis 2) and the key part over the "
    "queries (axis 1): each gradient sums over the axis it was copied along.",
    "query_part = q W^T is the matmul exercise: dL/dq = dquery W, and dL/dW sums dquery^T q over "
    "every (b, i). Same for k and U.",
]


def backward(grad, cache):
    """scores = hidden @ v: dhidden = grad v (outer, per (b, i, j)), dv = sum of grad * hidden.
    tanh' = 1 - hidden^2. Undo the broadcasts: dquery_part sums over the keys (axis 2), dkey_part
    over the queries (axis 1). Then two Linear backwards, rows flattened for the weights."""
    q, k, W, U, v, hidden = cache
    H = v.shape[0]
    d_pre = grad[..., None] * v * (1 - hidden ** 2)
    d_query_part, d_key_part = d_pre.sum(axis=2), d_pre.sum(axis=1)
    d_W = d_query_part.reshape(-1, H).T @ q.reshape(-1, q.shape[-1])
    d_U = d_key_part.reshape(-1, H).T @ k.reshape(-1, k.shape[-1])
    d_v = (grad[..., None] * hidden).reshape(-1, H).sum(axis=0)
    return d_query_part @ W, d_key_part @ U, d_W, d_U, d_v


def mistakes(grad, cache, inputs):
    q, k, W, U, v, hidden = cache
    return [
        Mistake("q", (grad[..., None] * v).sum(axis=2) @ W, "yours skips tanh's derivative: the gradient "
                "through tanh is multiplied by 1 - tanh(a)^2 = 1 - hidden^2"),
        Mistake("q", (grad[..., None] * v * (1 - hidden)).sum(axis=2) @ W, "yours multiplies by 1 - hidden: "
                "tanh's derivative is 1 - tanh(a)^2, so 1 - hidden**2"),
    ]
