"""Exercise: the backward of layer normalisation (Ba, Kiros and Hinton 2016, "Layer Normalization").

    mean = mean(x), var = mean((x - mean)^2)     over the last axis of each sample
    x_hat = (x - mean) / sqrt(var + eps)
    y = x_hat * weight + bias                    weight and bias (N,) broadcast over the samples

Shapes: x (B, T, N), weight (N,), bias (N,) -> y (B, T, N).
Copy this file, write backward, and check it:
    python -m tinyattn.exercises check layer_norm my_layer_norm.py
Afterwards, compare with class LayerNormFunction in tinyattn/nn/linear.py.
"""
import numpy as np

import tinyattn as ta

EPS = 1e-5


class LayerNorm(ta.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        centred = x - x.mean(axis=-1, keepdims=True)
        inv_std = 1 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + EPS)
        x_hat = centred * inv_std
        ctx.save_for_backward(x_hat, inv_std, weight)
        return x_hat * weight + bias

    @staticmethod
    def backward(ctx, grad):
        x_hat, inv_std, weight = ctx.saved_tensors
        # grad is dL/dy (B, T, N). Return (dL/dx, dL/dweight, dL/dbias).
        # Step 1. weight and bias were broadcast over every sample: their gradients sum over all
        #         axes but the last, dL/dweight of grad * x_hat and dL/dbias of grad.
        # Step 2. Let h = grad * weight = dL/dx_hat. x_hat depends on x directly and through the
        #         mean and the variance; over one sample of N values,
        #         dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) * inv_std
        #         (write x_hat = c * inv_std with c = x - mean; dc/dx removes the mean of what comes
        #         back; d inv_std/dx brings the x_hat * mean(h * x_hat) term).
        # Step 3. Take those means over the last axis with keepdims=True.
        raise NotImplementedError("write the backward of layer norm (the steps are in the comments above)")
