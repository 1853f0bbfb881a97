"""Additive (Bahdanau) attention as one graph node.

It is the block `additive_attention`'s fused form (ops/blocks.py) and equals its reference,
nn/additive_attention.py's additive_attention_composed (six autograd ops), which runs instead
under `ta.fused(False)`:

    scores  = v^T tanh(W q + U k)        (Bahdanau, Cho & Bengio 2015, eq. 6; "concat" in Luong 2015)
    weights = softmax(scores) over the keys the mask allows,   context = weights @ values

The arithmetic is in tinyattn/ops/additive_attention_arrays.py (BLAS products, the softmax kernel, and
two Numba passes beside numpy references); U k comes in already projected, as there.
"""
from ...autograd.function import Function
from ...ops.additive_attention_arrays import additive_attention, additive_attention_backward
from ...ops import arrays


class AdditiveAttention(Function):
    """forward(query (B, Tq, Dq), W (h, Dq), U k (B, Tk, h), v (1, h), values (B, Tk, Dv), mask)
    -> (context (B, Tq, Dv), weights (B, Tq, Tk)). With wq = q W^T and dwq, duk, dv, dvalues from
    the kernel's backward (ops/additive_attention_arrays.py: softmax's rule, then tanh's):
    dL/dq = dwq W,  dL/dW = dwq^T q,  dL/dU k = duk,  dL/dv = dv,  dL/dvalues = dvalues.
    Equals nn/additive_attention.py's additive_attention_composed, argument for argument."""

    used_inside = (1,)  # the weights make the context

    @staticmethod
    def forward(ctx, query, W, projected_keys, v, values, mask):
        B, Tq, Dq = query.shape
        query_rows = query.reshape(B * Tq, Dq)
        wq = arrays.matmul(query_rows, W.T).reshape(B, Tq, W.shape[0])
        context, weights, hidden = additive_attention(wq, projected_keys, v[0], values, mask)
        ctx.save_for_backward(query_rows, W, v, values, weights, hidden)
        return context, weights

    @staticmethod
    def backward(ctx, g_context, g_weights):
        query_rows, W, v, values, weights, hidden = ctx.saved_arrays
        d_wq, d_uk, d_v, d_values = additive_attention_backward(g_context, g_weights, weights, hidden, v[0], values)
        B, Tq, h = d_wq.shape
        d_wq_rows = d_wq.reshape(B * Tq, h)
        d_query = arrays.matmul(d_wq_rows, W).reshape(B, Tq, -1)
        d_W = arrays.matmul(d_wq_rows.T, query_rows)
        return d_query, d_W, d_uk, d_v.reshape(v.shape), d_values, None
