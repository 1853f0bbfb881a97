"""Layer normalisation (Ba, Kiros and Hinton 2016, "Layer Normalization",
https://arxiv.org/abs/1607.06450): each vector of N features is shifted and scaled to mean 0 and
variance 1, then given a learned scale and shift.

    mu = mean(x),  var = mean((x - mu)^2)           over the last axis of each vector
    x_hat = (x - mu) / sqrt(var + eps)
    y = x_hat * weight + bias                       weight, bias (N,) used by every vector

Write backward: return (dL/dx, dL/dweight, dL/dbias). mu and var depend on x too.
    python -m tinyattn.exercises check layer_norm
    python -m tinyattn.exercises hint layer_norm       (a step at a time, if you are stuck)
"""
import numpy as np

EPS = 1e-5


def forward(x, weight, bias):
    """x (B, T, N), weight (N,), bias (N,) -> y (B, T, N), and what backward needs."""
    centred = x - x.mean(axis=-1, keepdims=True)
    inv_std = 1 / np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + EPS)  # (B, T, 1)
    x_hat = centred * inv_std
    return x_hat * weight + bias, (x_hat, inv_std, weight)


def backward(grad, cache):
    """grad = dL/dy, shape (B, T, N). Return (dL/dx, dL/dweight, dL/dbias): shapes (B, T, N), (N,), (N,)."""
    x_hat, inv_std, weight = cache
    raise NotImplementedError("write backward: return (dL/dx, dL/dweight, dL/dbias)")
