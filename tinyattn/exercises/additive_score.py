"""Exercise: the backward of the additive attention score (Bahdanau et al. 2015, "Neural Machine
Translation by Jointly Learning to Align and Translate").

    score(q_i, k_j) = v . tanh(W q_i + U k_j)      for every query i and key j

Shapes: q (B, Tq, Dq), k (B, Tk, Dk), W (H, Dq), U (H, Dk), v (H,) -> scores (B, Tq, Tk).
Every query meets every key: W q is computed once per query and broadcast over the keys, U k
once per key and broadcast over the queries.
Copy this file, write backward, and check it:
    python -m tinyattn.exercises check additive_score my_additive_score.py
Afterwards, compare with what tinyattn computes: Attention.scores in tinyattn/nn/attention.py
(score="additive"), differentiated by its Linear, Add, Tanh and Reshape ops.
"""
import numpy as np

import tinyattn as ta


class AdditiveScore(ta.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, W, U, v):
        query_part = q @ W.T                                                 # (B, Tq, H)
        key_part = k @ U.T                                                   # (B, Tk, H)
        hidden = np.tanh(query_part[:, :, None, :] + key_part[:, None, :, :])  # (B, Tq, Tk, H)
        ctx.save_for_backward(q, k, W, U, v, hidden)
        return hidden @ v                                                    # (B, Tq, Tk)

    @staticmethod
    def backward(ctx, grad):
        q, k, W, U, v, hidden = ctx.saved_tensors
        # grad is dL/dscores (B, Tq, Tk). Return (dL/dq, dL/dk, dL/dW, dL/dU, dL/dv).
        # Step 1. scores = hidden @ v: dL/dhidden = grad[..., None] * v, and dL/dv sums
        #         grad[..., None] * hidden over every axis but the last (v served every (b, i, j)).
        # Step 2. Through tanh: d tanh(a)/da = 1 - tanh(a)^2 = 1 - hidden^2.
        # Step 3. Undo the broadcast: the query part was copied over the keys (axis 2), so its
        #         gradient sums over axis 2; the key part sums over the queries (axis 1).
        # Step 4. query_part = q W^T: dL/dq = dL/dquery_part W, and dL/dW = the sum over all
        #         (b, i) of dL/dquery_part^T q: flatten to (B*Tq, H) and (B*Tq, Dq) first. Same for U.
        raise NotImplementedError("write the backward of the additive score (the steps are in the comments above)")
