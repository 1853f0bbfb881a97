"""GELU forward and backward on arrays, in plain numpy (the version to read; nn/gelu.py derives it).

    exact:  y = x Phi(x),                Phi(x) = (1 + erf(x / sqrt 2)) / 2
            dy/dx = Phi(x) + x phi(x),   phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    tanh:   y = x/2 (1 + t),             t = tanh(u),  u = sqrt(2/pi) (x + 0.044715 x^3)
            dy/dx = (1 + t)/2 + x/2 (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)

The forward returns y and what the backward needs besides x (Phi(x), or t), so erf and tanh run
once per step, not twice. Every number is in x's dtype.
"""
import math

import numpy as np

from .erf import erf

SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
CUBIC = 0.044715


def gelu(x, approximate):
    """(GELU(x), saved): saved is Phi(x) for approximate "none", tanh(u) for "tanh"."""
    c = x.dtype.type
    if approximate == "tanh":
        t = np.tanh(c(SQRT_2_OVER_PI) * (x + c(CUBIC) * x ** 3))
        return 0.5 * x * (1 + t), t
    cdf = (0.5 * (1 + erf(x * c(1 / math.sqrt(2))))).astype(x.dtype)
    return x * cdf, cdf


def gelu_backward(x, saved, grad, approximate):
    """dL/dx from x, the forward's `saved` and grad = dL/dy."""
    c = x.dtype.type
    if approximate == "tanh":
        du_dx = c(SQRT_2_OVER_PI) * (1 + c(3 * CUBIC) * x * x)
        return grad * (0.5 * (1 + saved) + 0.5 * x * (1 - saved * saved) * du_dx)
    normal_pdf = np.exp(-0.5 * x * x) * c(1 / math.sqrt(2 * math.pi))
    return grad * (saved + x * normal_pdf)
