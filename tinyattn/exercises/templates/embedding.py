"""Token embeddings plus learned positions: the input of a Transformer.

    y[b, t] = table[tokens[b, t]] * sqrt(d) + positions[t]

table (V, d) holds one vector per word; tokens (B, T) are word ids, and a word may come more
than once. Vaswani et al. 2017 ("Attention Is All You Need", https://arxiv.org/abs/1706.03762,
section 3.4) multiply the embeddings by sqrt(d) and add a fixed sinusoidal table, which has no
gradient; here the positions are learned instead (as in BERT and GPT), a table of max_len >= T rows.
Write backward: return (dL/dtable, dL/dpositions). tokens are data and get no gradient.
    python -m tinyattn.exercises check embedding
    python -m tinyattn.exercises hint embedding        (a step at a time, if you are stuck)
"""
import numpy as np


def forward(table, positions, tokens):
    """table (V, d), positions (max_len, d), tokens (B, T) integers -> y (B, T, d)."""
    T, d = tokens.shape[1], table.shape[1]
    y = table[tokens] * np.sqrt(d) + positions[:T]
    return y, (tokens, table.shape, positions.shape)


def backward(grad, cache):
    """grad = dL/dy, shape (B, T, d). Return (dL/dtable, dL/dpositions): shapes (V, d), (max_len, d)."""
    tokens, table_shape, positions_shape = cache
    raise NotImplementedError("write backward: return (dL/dtable, dL/dpositions)")
