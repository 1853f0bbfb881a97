"""Scaled dot-product attention (Vaswani et al. 2017) as one graph node: its three stages fused.

It is the block `attention`'s fused form (ops/blocks.py) and equals its reference,
nn/scaled_dot_product_attention.py's attention_composed (the same stages as autograd ops: MatMul,
Mul, Softmax, MatMul), which runs instead under `ta.fused(False)`:

    scores  S = Q K^T * scale (+ bias)     (how well each query matches each key)
    weights W = softmax(S) over the keys   (masked places get exactly 0)
    output  O = W V                        (the weighted average of the values)

Backward, with G_O = dL/dO and G_W = dL/dW (the weights are an output too):
    dL/dV = W^T G_O,   dL/dW = G_O V^T + G_W,   dL/dS = W * (dL/dW - sum(dL/dW * W))  (softmax)
    dL/dQ = dL/dS K * scale,   dL/dK = dL/dS^T Q * scale,   dL/dbias = dL/dS (summed over broadcast)

`bias` (a float array or Tensor added to the scores, PyTorch's float attn_mask) costs one
addition forward; its gradient is dL/dS, which the node computes anyway. `keep` is dropout's
multiplier of the weights (0 or 1/(1-p)): W' = W * keep takes W's place in O = W' V and is the
weights output, so the chain rule through it is dL/dW = keep * dL/dW'.
"""
from ...autograd.dtypes import unbroadcast
from ...autograd.function import Function
from ...ops import arrays


class ScaledDotProductAttention(Function):
    """(O, W) = (arrays.softmax(Q K^T * scale + bias, mask) V, arrays.softmax(...)); backward in the module docstring.

    bias (added to the scores) and keep (dropout's multiplier of the weights) may be None.
    Equals nn/scaled_dot_product_attention.py's attention_composed(q, k, v, mask, scale, bias, keep).
    """

    used_inside = (1,)  # the weights make the output

    @staticmethod
    def forward(ctx, q, k, v, mask, scale, bias=None, keep=None):
        # The scale multiplies q (T x d) rather than the scores (T x T): the same product,
        # fewer multiplications whenever there are more keys than dimensions.
        scores = arrays.matmul(q * q.dtype.type(scale), k.swapaxes(-1, -2))
        if bias is not None:
            scores = scores + bias
        weights = arrays.softmax(scores, mask)
        dropped = weights if keep is None else weights * keep
        ctx.save_for_backward(q, k, v, weights, dropped, keep)
        ctx.scale = scale
        ctx.bias_shape = None if bias is None else bias.shape
        return arrays.matmul(dropped, v), dropped

    @staticmethod
    def backward(ctx, g_out, g_weights):
        q, k, v, weights, dropped, keep = ctx.saved_arrays
        dtype = weights.dtype.type
        d_weights = arrays.matmul(g_out, v.swapaxes(-1, -2)) + g_weights
        if keep is not None:
            d_weights = d_weights * keep
        d_v = arrays.matmul(dropped.swapaxes(-1, -2), g_out)
        d_scores = arrays.softmax_backward(weights, d_weights)
        scale = dtype(ctx.scale)
        # a batch dim that q, k or v broadcast along sums its gradient back (as in any broadcast)
        d_q = unbroadcast(arrays.matmul(d_scores, k) * scale, q.shape)
        d_k = unbroadcast(arrays.matmul(d_scores.swapaxes(-1, -2), q) * scale, k.shape)
        d_v = unbroadcast(d_v, v.shape)
        d_bias = unbroadcast(d_scores, ctx.bias_shape) if ctx.needs_input_grad[5] else None
        return d_q, d_k, d_v, None, None, d_bias, None
