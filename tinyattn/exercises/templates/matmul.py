"""A batch of matrix products with one shared weight matrix, as a Linear layer computes them.

    y[b] = x[b] @ w      for each b: x (B, T, N), w (N, M) -> y (B, T, M)

Write backward: return (dL/dx, dL/dw), each with the shape of its input.
    python -m tinyattn.exercises check matmul
    python -m tinyattn.exercises hint matmul           (a step at a time, if you are stuck)
"""
import numpy as np


def forward(x, w):
    """x (B, T, N), w (N, M) -> y (B, T, M), and what backward needs."""
    return x @ w, (x, w)


def backward(grad, cache):
    """grad = dL/dy, shape (B, T, M). Return (dL/dx, dL/dw): shapes (B, T, N) and (N, M)."""
    x, w = cache
    raise NotImplementedError("write backward: return (dL/dx, dL/dw)")
