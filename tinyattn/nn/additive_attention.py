"""Additive (Bahdanau) attention written with autograd ops: the graph a learner can look inside.

    scores  = v^T tanh(W q + U k)        (Bahdanau, Cho & Bengio 2015, eq. 6; "concat" in Luong 2015)
    weights = softmax(scores) over the keys the mask allows,   context = weights @ values

U k does not depend on the query, so a decoder that attends over the same keys at every step
projects them once per batch (`Attention.precompute_keys`) and passes the result here as
`projected_keys`. This graph is the block `additive_attention`'s reference (ops/blocks.py):
nn.Attention(score="additive") runs it under `ta.fused(False)`, and otherwise the one node that
equals it (fused/additive_attention_node.py, AdditiveAttention).

This is additive attention as the package reads it: every other form names it and is tested
equal to it (tests/test_one_form.py). Their array math is ops/additive_attention_arrays.py (the
numpy reference, with ops/kernels/pair_tanh.py as the compiled twin of its backward pass), which
the fused node and the fused decoder (fused/attentive_decoder.py) call.
"""
from ..ops import blocks
from .layers import LinearFunction


def additive_attention_composed(query, W, projected_keys, v, values, mask):
    """query (B, Tq, Dq), W (h, Dq), projected_keys = U k (B, Tk, h), v (1, h), values (B, Tk, Dv),
    mask bool broadcasting to (B, Tq, Tk) or None -> (context (B, Tq, Dv), weights (B, Tq, Tk))."""
    weights = additive_scores(query, W, projected_keys, v).softmax(-1, mask=mask)
    return weights @ values, weights


blocks.register_reference("additive_attention", additive_attention_composed)


def additive_scores(query, W, projected_keys, v):
    """scores (B, Tq, Tk) = v^T tanh(W q + U k) for every (query, key) pair, before the softmax."""
    wq = LinearFunction.apply(query, W, None)
    hidden = (wq.unsqueeze(2) + projected_keys.unsqueeze(1)).tanh()    # (B, Tq, Tk, h)
    return LinearFunction.apply(hidden, v, None).reshape(hidden.shape[:3])
