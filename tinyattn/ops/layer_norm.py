"""LayerNorm on arrays, in plain numpy (the version to read; nn/layer_norm.py's LayerNormFunction derives it).

Over `axes` (the trailing axes, as nn.LayerNorm passes them), with h = g * weight:

    x_hat = (x - mean) / sqrt(var + eps)  (biased var),   y = x_hat * weight + bias
    dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) / sqrt(var + eps)
"""
import numpy as np


def layer_norm(x, axes, weight, bias, eps):
    """(y, x_hat, inv_std): x_hat = (x - mean) * inv_std, inv_std = 1 / sqrt(var + eps) over `axes`
    (biased var), y = x_hat * weight + bias (each optional)."""
    mean = x.mean(axis=axes, keepdims=True)
    centred = x - mean
    inv_std = 1 / np.sqrt((centred * centred).mean(axis=axes, keepdims=True) + x.dtype.type(eps))
    x_hat = centred * inv_std
    y = x_hat if weight is None else x_hat * weight
    return (y if bias is None else y + bias), x_hat, inv_std


def layer_norm_backward(g, axes, x_hat, inv_std, weight):
    """dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) * inv_std, h = g * weight, means over `axes`."""
    h = g if weight is None else g * weight
    return (h - h.mean(axis=axes, keepdims=True) - x_hat * (h * x_hat).mean(axis=axes, keepdims=True)) * inv_std
