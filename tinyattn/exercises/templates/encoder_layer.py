"""The whole block: one Transformer encoder layer (Vaswani et al. 2017, "Attention Is All You
Need", https://arxiv.org/abs/1706.03762, section 3.1), as PyTorch's nn.TransformerEncoderLayer
computes it with post-norm, ReLU and no dropout.

    q, k, v = x W_q^T + b_q, x W_k^T + b_k, x W_v^T + b_v      W_q; W_k; W_v stacked in in_proj_weight
    x1 = layer_norm1(x + multi_head(q, k, v))                    attention, then a skip and a norm
    x2 = layer_norm2(x1 + relu(x1 W_1^T + b_1) W_2^T + b_2)      feed-forward, then a skip and a norm

The forward is built from the earlier exercises' forwards, and its cache holds theirs. Build the
backward from your earlier backwards, which sit beside this file once started:
    from layer_norm import backward as layer_norm_backward
    from multi_head import backward as multi_head_backward
and what matmul and broadcast taught you for the linear layers.
Write backward: return one gradient per input of forward but num_heads, in forward's order.
The checker compares them with the gradients tinyattn's own nn.TransformerEncoderLayer gets.
    python -m tinyattn.exercises check encoder_layer
    python -m tinyattn.exercises hint encoder_layer    (a step at a time, if you are stuck)
"""
import numpy as np

from tinyattn.exercises.templates.layer_norm import forward as layer_norm
from tinyattn.exercises.templates.multi_head import forward as multi_head


def forward(x, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias, linear1_weight, linear1_bias,
            linear2_weight, linear2_bias, norm1_weight, norm1_bias, norm2_weight, norm2_bias, num_heads):
    """x (B, T, E); in_proj (3E, E) and (3E,); out_proj (E, E) and (E,); linear1 (F, E) and (F,);
    linear2 (E, F) and (E,); norm1, norm2 (E,) each -> (B, T, E), and what backward needs."""
    q, k, v = np.split(x @ in_proj_weight.T + in_proj_bias, 3, axis=-1)
    attended, attention_cache = multi_head(q, k, v, out_proj_weight, out_proj_bias, num_heads)
    x1, norm1_cache = layer_norm(x + attended, norm1_weight, norm1_bias)
    hidden = x1 @ linear1_weight.T + linear1_bias
    active = np.maximum(hidden, 0)
    x2, norm2_cache = layer_norm(x1 + active @ linear2_weight.T + linear2_bias, norm2_weight, norm2_bias)
    return x2, (x, in_proj_weight, attention_cache, norm1_cache, x1, linear1_weight, hidden, active,
                linear2_weight, norm2_cache)


def backward(grad, cache):
    """grad = dL/dx2, shape (B, T, E). Return the 13 gradients (x, then each weight), each the shape of its input."""
    x, in_proj_weight, attention_cache, norm1_cache, x1, linear1_weight, hidden, active, linear2_weight, \
        norm2_cache = cache
    raise NotImplementedError("write backward: return the 13 gradients, x's first")
